//! The `cjk_unicode61` FTS5 tokenizer (spec `schema-v23.md` §10), built in.
//!
//! Upstream ships this tokenizer as a loadable C extension (`libfts5_cjk.so`)
//! that backs the optional `messages_fts_cjk` index (§6.6). This module is a
//! faithful port: [`register`] installs a tokenizer named
//! [`TOKENIZER_NAME`] on one connection. Each instance wraps the connection's
//! own built-in `unicode61`, created with all of the instance's arguments
//! unchanged, and re-cuts every `unicode61` token whose *folded* text contains
//! CJK code points (§10.4) into maximal CJK / non-CJK segments:
//!
//! * a non-CJK segment becomes one token;
//! * a CJK segment of one code point becomes a unigram;
//! * a CJK segment of `n ≥ 2` code points becomes its `n − 1` overlapping
//!   bigrams.
//!
//! A token without CJK passes through untouched (text, offsets, flags). A
//! piece covering bytes `[a, b)` of the folded text `F` of a token with the
//! source range `[S, E)` reports `(min(S + a, E), min(S + b, E))`, drift
//! included, exactly like upstream (§10.6). The output is the same in every
//! tokenize mode.
//!
//! Registration goes through the version-1 tokenizer interface of the
//! connection's `fts5_api`, like upstream. It belongs to that connection only
//! and lasts until the connection is closed; SQLite frees it then.
//!
//! All FFI is confined to this module. Every callback SQLite calls catches
//! panics and reports `SQLITE_ERROR` instead of unwinding into C.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use rusqlite::Connection;
use rusqlite::ffi;
use rusqlite::types::{ToSql, ToSqlOutput};

use crate::error::SqliteError;

/// The name under which [`register`] installs the tokenizer.
pub const TOKENIZER_NAME: &str = "cjk_unicode61";

/// NUL-terminated [`TOKENIZER_NAME`].
const TOKENIZER_NAME_C: &CStr = c"cjk_unicode61";

/// The wrapped built-in tokenizer.
const UNICODE61_C: &CStr = c"unicode61";

/// The pointer type under which `fts5(?1)` hands out the `fts5_api`.
const FTS5_API_PTR: &CStr = c"fts5_api_ptr";

/// The token callback of the version-1 `xTokenize`.
type TokenCallback = unsafe extern "C" fn(
    p_ctx: *mut c_void,
    tflags: c_int,
    p_token: *const c_char,
    n_token: c_int,
    i_start: c_int,
    i_end: c_int,
) -> c_int;

/// The tokenize mode a diagnostic tokenization runs in (the `flags` argument
/// of FTS5's `xTokenize`). The tokenizer's output does not depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizeMode {
    /// Tokenizing a document being inserted (`FTS5_TOKENIZE_DOCUMENT`).
    Document,
    /// Tokenizing a MATCH query term (`FTS5_TOKENIZE_QUERY`).
    Query,
    /// Tokenizing a prefix query term (`FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX`).
    Prefix,
    /// Tokenizing for an auxiliary function such as `highlight()` (`FTS5_TOKENIZE_AUX`).
    Aux,
}

impl TokenizeMode {
    fn flags(self) -> c_int {
        match self {
            TokenizeMode::Document => ffi::FTS5_TOKENIZE_DOCUMENT,
            TokenizeMode::Query => ffi::FTS5_TOKENIZE_QUERY,
            TokenizeMode::Prefix => ffi::FTS5_TOKENIZE_QUERY | ffi::FTS5_TOKENIZE_PREFIX,
            TokenizeMode::Aux => ffi::FTS5_TOKENIZE_AUX,
        }
    }
}

// ---------------------------------------------------------------------------
// The pure part: classification and cutting of a folded token.
// ---------------------------------------------------------------------------

/// Whether the tokenizer treats code point `cp` as CJK (§10.4; deliberately
/// not the query router's set).
fn is_cjk(cp: u32) -> bool {
    matches!(
        cp,
        0x1100..=0x11FF       // Hangul Jamo
        | 0x3040..=0x309F     // Hiragana
        | 0x30A0..=0x30FF     // Katakana
        | 0x3130..=0x318F     // Hangul Compatibility Jamo
        | 0x31F0..=0x31FF     // Katakana Phonetic Extensions
        | 0x3400..=0x4DBF     // CJK Unified Ideographs Extension A
        | 0x4E00..=0x9FFF     // CJK Unified Ideographs
        | 0xA960..=0xA97F     // Hangul Jamo Extended-A
        | 0xAC00..=0xD7A3     // Hangul Syllables
        | 0xD7B0..=0xD7FF     // Hangul Jamo Extended-B
        | 0xF900..=0xFAFF     // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F // Plane 2
    )
}

/// Decodes the character starting at `pos` (which must be `< bytes.len()`)
/// leniently: the lead byte fixes the length, continuation bytes are not
/// checked, and a malformed lead byte is one non-CJK character. A sequence
/// cut short by the end of the token is one non-CJK character covering the
/// rest. Returns the length in bytes (≥ 1) and whether the character is CJK.
fn decode_lenient(bytes: &[u8], pos: usize) -> (usize, bool) {
    let lead = bytes[pos];
    let (len, initial) = match lead {
        0x00..=0x7F => return (1, false),
        0xC0..=0xDF => (2, u32::from(lead & 0x1F)),
        0xE0..=0xEF => (3, u32::from(lead & 0x0F)),
        0xF0..=0xF7 => (4, u32::from(lead & 0x07)),
        _ => return (1, false),
    };
    let Some(tail) = bytes.get(pos + 1..pos + len) else {
        return (bytes.len() - pos, false);
    };
    let cp = tail
        .iter()
        .fold(initial, |cp, &b| (cp << 6) | u32::from(b & 0x3F));
    (len, is_cjk(cp))
}

/// Whether the folded token text contains a CJK code point.
fn contains_cjk(folded: &[u8]) -> bool {
    let mut pos = 0;
    while pos < folded.len() {
        let (len, cjk) = decode_lenient(folded, pos);
        if cjk {
            return true;
        }
        pos += len;
    }
    false
}

/// Cuts a folded token text that contains CJK into its pieces (§10.3 step 4)
/// and hands each piece's byte range `[a, b)` of `folded` to `emit`, in text
/// order. Stops at, and returns, the first non-zero result of `emit`.
fn for_each_piece(folded: &[u8], mut emit: impl FnMut(usize, usize) -> c_int) -> c_int {
    let n = folded.len();
    let mut pos = 0;
    while pos < n {
        let (len, cjk) = decode_lenient(folded, pos);
        let start = pos;
        pos += len;
        if cjk {
            // A maximal CJK run: bigrams, or one unigram if it has one character.
            let mut prev = start;
            let mut chars = 1usize;
            while pos < n {
                let (len, cjk) = decode_lenient(folded, pos);
                if !cjk {
                    break;
                }
                let rc = emit(prev, pos + len);
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
                prev = pos;
                pos += len;
                chars += 1;
            }
            if chars == 1 {
                let rc = emit(start, pos);
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
            }
        } else {
            // A maximal non-CJK run: one token.
            while pos < n {
                let (len, cjk) = decode_lenient(folded, pos);
                if cjk {
                    break;
                }
                pos += len;
            }
            let rc = emit(start, pos);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
    }
    ffi::SQLITE_OK
}

/// The source offset of folded byte `a` of a token with source range `[start, end)`.
fn piece_offset(start: c_int, end: c_int, a: usize) -> c_int {
    let at = i64::from(start).saturating_add(i64::try_from(a).unwrap_or(i64::MAX));
    // The minimum is at most `end`, so it fits a c_int.
    c_int::try_from(at.min(i64::from(end))).unwrap_or(end)
}

// ---------------------------------------------------------------------------
// The FFI part.
// ---------------------------------------------------------------------------

/// One tokenizer instance (the `Fts5Tokenizer*` handed to FTS5). It owns the
/// wrapped `unicode61` instance and frees it in [`cjk_delete`].
struct Instance {
    /// The methods of the connection's `unicode61` (v1 interface).
    inner: ffi::fts5_tokenizer,
    /// The `unicode61` instance created with this instance's arguments.
    inner_instance: *mut ffi::Fts5Tokenizer,
}

/// The context of one `xTokenize` call, passed through `unicode61` to [`split_token`].
struct Forward {
    /// FTS5's context for its callback.
    ctx: *mut c_void,
    /// FTS5's token callback.
    x_token: TokenCallback,
}

/// `xCreate`: finds the connection's `unicode61`, creates it with all the
/// arguments and wraps it. `user_data` is the connection's `fts5_api`.
unsafe extern "C" fn cjk_create(
    user_data: *mut c_void,
    az_arg: *mut *const c_char,
    n_arg: c_int,
    pp_out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        if pp_out.is_null() {
            return ffi::SQLITE_MISUSE;
        }
        // SAFETY: FTS5 passes a valid out-pointer (checked non-null above).
        unsafe { *pp_out = ptr::null_mut() };
        let api = user_data.cast::<ffi::fts5_api>();
        if api.is_null() {
            return ffi::SQLITE_ERROR;
        }
        // SAFETY: `user_data` is the `fts5_api` registered with this tokenizer
        // by `register`; it belongs to the connection, which outlives every
        // call FTS5 makes to this tokenizer.
        let Some(find) = (unsafe { (*api).xFindTokenizer }) else {
            return ffi::SQLITE_ERROR;
        };
        let mut inner_user_data: *mut c_void = ptr::null_mut();
        let mut inner = ffi::fts5_tokenizer {
            xCreate: None,
            xDelete: None,
            xTokenize: None,
        };
        // SAFETY: `api` is valid (see above), the name is NUL-terminated and
        // the out-pointers point to live locals.
        let rc = unsafe { find(api, UNICODE61_C.as_ptr(), &mut inner_user_data, &mut inner) };
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let (Some(create), Some(_), Some(_)) = (inner.xCreate, inner.xDelete, inner.xTokenize)
        else {
            return ffi::SQLITE_ERROR;
        };
        let mut inner_instance: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        // SAFETY: forwards FTS5's own argument array unchanged to the
        // `unicode61` constructor, with the user data FTS5 gave us for it.
        let rc = unsafe { create(inner_user_data, az_arg, n_arg, &mut inner_instance) };
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let instance = Box::new(Instance {
            inner,
            inner_instance,
        });
        // SAFETY: `pp_out` is valid (checked above); ownership of the box
        // passes to FTS5, which gives it back to `cjk_delete`.
        unsafe { *pp_out = Box::into_raw(instance).cast() };
        ffi::SQLITE_OK
    }))
    .unwrap_or(ffi::SQLITE_ERROR)
}

/// `xDelete`: frees the wrapped `unicode61` instance and the wrapper.
unsafe extern "C" fn cjk_delete(p_tok: *mut ffi::Fts5Tokenizer) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if p_tok.is_null() {
            return;
        }
        // SAFETY: a non-null `p_tok` was made by `Box::into_raw` in
        // `cjk_create`, and FTS5 deletes each instance exactly once.
        let instance = unsafe { Box::from_raw(p_tok.cast::<Instance>()) };
        if let Some(delete) = instance.inner.xDelete {
            // SAFETY: the wrapped instance was created by this `unicode61`
            // and is deleted exactly once, here.
            unsafe { delete(instance.inner_instance) };
        }
    }));
}

/// `xTokenize`: runs `unicode61` with [`split_token`] as its callback.
unsafe extern "C" fn cjk_tokenize(
    p_tok: *mut ffi::Fts5Tokenizer,
    p_ctx: *mut c_void,
    flags: c_int,
    p_text: *const c_char,
    n_text: c_int,
    x_token: Option<TokenCallback>,
) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        let Some(x_token) = x_token else {
            return ffi::SQLITE_MISUSE;
        };
        if p_tok.is_null() {
            return ffi::SQLITE_MISUSE;
        }
        // SAFETY: a non-null `p_tok` is a live `Instance` made by `cjk_create`.
        let instance = unsafe { &*p_tok.cast::<Instance>() };
        let Some(tokenize) = instance.inner.xTokenize else {
            return ffi::SQLITE_ERROR;
        };
        let mut forward = Forward {
            ctx: p_ctx,
            x_token,
        };
        // SAFETY: text and flags are FTS5's own, passed on unchanged; the
        // context points to `forward`, which lives until `tokenize` returns,
        // and is only read by `split_token`.
        unsafe {
            tokenize(
                instance.inner_instance,
                (&raw mut forward).cast(),
                flags,
                p_text,
                n_text,
                Some(split_token),
            )
        }
    }))
    .unwrap_or(ffi::SQLITE_ERROR)
}

/// The callback given to `unicode61`: applies §10.3 to one of its tokens and
/// forwards the result to FTS5's callback.
unsafe extern "C" fn split_token(
    p_ctx: *mut c_void,
    tflags: c_int,
    p_token: *const c_char,
    n_token: c_int,
    i_start: c_int,
    i_end: c_int,
) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `p_ctx` is the `Forward` that `cjk_tokenize` passed to
        // `unicode61`, alive for the whole `xTokenize` call.
        let forward = unsafe { &*p_ctx.cast::<Forward>() };
        let folded: &[u8] = match usize::try_from(n_token) {
            Ok(len) if len > 0 && !p_token.is_null() => {
                // SAFETY: `unicode61` hands over `n_token` readable bytes at
                // `p_token`, valid until this callback returns.
                unsafe { std::slice::from_raw_parts(p_token.cast::<u8>(), len) }
            }
            _ => &[],
        };
        if !contains_cjk(folded) {
            // SAFETY: FTS5's callback with FTS5's context and the token
            // exactly as `unicode61` gave it.
            return unsafe {
                (forward.x_token)(forward.ctx, tflags, p_token, n_token, i_start, i_end)
            };
        }
        for_each_piece(folded, |a, b| {
            let piece = &folded[a..b];
            let Ok(len) = c_int::try_from(piece.len()) else {
                return ffi::SQLITE_ERROR;
            };
            // SAFETY: FTS5's callback with FTS5's context; the piece is a
            // sub-slice of the folded token, alive during the call.
            unsafe {
                (forward.x_token)(
                    forward.ctx,
                    tflags,
                    piece.as_ptr().cast(),
                    len,
                    piece_offset(i_start, i_end, a),
                    piece_offset(i_start, i_end, b),
                )
            }
        })
    }))
    .unwrap_or(ffi::SQLITE_ERROR)
}

/// Binds the address of a `*mut fts5_api` slot for `SELECT fts5(?1)`.
struct ApiSlot(*mut *mut ffi::fts5_api);

impl ToSql for ApiSlot {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        // No destructor: the slot is a local that outlives the statement.
        Ok(ToSqlOutput::Pointer((
            self.0.cast_const().cast(),
            FTS5_API_PTR,
            None,
        )))
    }
}

/// The connection's `fts5_api`, valid as long as the connection is open.
fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api, SqliteError> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    conn.query_row("SELECT fts5(?1)", [ApiSlot(&raw mut api)], |_| Ok(()))
        .map_err(|e| SqliteError::new("fts5_cjk: looking up the fts5_api", e))?;
    if api.is_null() {
        return Err(failure(ffi::SQLITE_ERROR, "fts5_cjk: FTS5 unavailable"));
    }
    Ok(api)
}

/// A [`SqliteError`] for a result code of the FTS5 API.
fn failure(rc: c_int, message: &str) -> SqliteError {
    SqliteError::new(
        TOKENIZER_NAME,
        rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(message.to_owned())),
    )
}

/// Registers the `cjk_unicode61` tokenizer on `conn` (§10.1).
///
/// After this, `CREATE VIRTUAL TABLE … USING fts5(…, tokenize='cjk_unicode61 …')`
/// and every statement touching such a table work on this connection. The
/// registration lasts as long as the connection (also when it is moved to
/// another thread) and is freed by SQLite when it closes. Registering twice
/// is harmless: the newer registration shadows the older one.
///
/// Fails when the connection has no FTS5.
pub fn register(conn: &Connection) -> Result<(), SqliteError> {
    let api = fts5_api(conn)?;
    // SAFETY: `api` is the live `fts5_api` of `conn` (non-null).
    let Some(create_tokenizer) = (unsafe { (*api).xCreateTokenizer }) else {
        return Err(failure(ffi::SQLITE_ERROR, "fts5_cjk: FTS5 unavailable"));
    };
    let mut methods = ffi::fts5_tokenizer {
        xCreate: Some(cjk_create),
        xDelete: Some(cjk_delete),
        xTokenize: Some(cjk_tokenize),
    };
    // SAFETY: `api` is live; FTS5 copies `methods` and the name. The user
    // data is `api` itself, which lives as long as the registration (both
    // belong to the connection), so no destructor is needed.
    let rc = unsafe {
        create_tokenizer(
            api,
            TOKENIZER_NAME_C.as_ptr(),
            api.cast(),
            &mut methods,
            None,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(failure(rc, "fts5_cjk: registering cjk_unicode61"));
    }
    Ok(())
}

/// Collects the tokens of a diagnostic tokenization.
unsafe extern "C" fn collect_token(
    p_ctx: *mut c_void,
    _tflags: c_int,
    p_token: *const c_char,
    n_token: c_int,
    i_start: c_int,
    i_end: c_int,
) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `p_ctx` is the token vector of `debug_tokens_in_mode`,
        // alive and not otherwise borrowed during the `xTokenize` call.
        let tokens = unsafe { &mut *p_ctx.cast::<Vec<(Vec<u8>, i32, i32)>>() };
        let text: &[u8] = match usize::try_from(n_token) {
            Ok(len) if len > 0 && !p_token.is_null() => {
                // SAFETY: the tokenizer hands over `n_token` readable bytes
                // at `p_token`, valid until this callback returns.
                unsafe { std::slice::from_raw_parts(p_token.cast::<u8>(), len) }
            }
            _ => &[],
        };
        tokens.push((text.to_vec(), i_start, i_end));
        ffi::SQLITE_OK
    }))
    .unwrap_or(ffi::SQLITE_ERROR)
}

/// Runs the `cjk_unicode61` tokenizer registered on `conn`, created with
/// `args` (as in `tokenize='cjk_unicode61 ARGS…'`), over `text` in document
/// mode, and returns each token as (token bytes, start byte, end byte).
///
/// A diagnostic, used by the tests and by `hermes-state doctor` to show what
/// the CJK index stores. The tokenizer must have been [`register`]ed on
/// `conn`; arguments that `unicode61` rejects fail like the constructor does
/// in `CREATE VIRTUAL TABLE`.
pub fn debug_tokens(
    conn: &Connection,
    args: &[&str],
    text: &str,
) -> Result<Vec<(Vec<u8>, i32, i32)>, SqliteError> {
    debug_tokens_in_mode(conn, args, text, TokenizeMode::Document)
}

/// [`debug_tokens`] in a chosen tokenize mode.
pub fn debug_tokens_in_mode(
    conn: &Connection,
    args: &[&str],
    text: &str,
    mode: TokenizeMode,
) -> Result<Vec<(Vec<u8>, i32, i32)>, SqliteError> {
    debug_tokens_of_bytes(conn, args, text.as_bytes(), mode)
}

/// [`debug_tokens_in_mode`] over raw bytes, which need not be UTF-8: FTS5
/// hands a tokenizer a TEXT value's bytes unchecked, so a damaged row (or
/// `CAST(x'ff' AS TEXT)`) reaches it as they are. Used by the hostile-input
/// tests and the tokenizer's fuzz target.
pub fn debug_tokens_of_bytes(
    conn: &Connection,
    args: &[&str],
    text: &[u8],
    mode: TokenizeMode,
) -> Result<Vec<(Vec<u8>, i32, i32)>, SqliteError> {
    let n_text = c_int::try_from(text.len())
        .map_err(|_| failure(ffi::SQLITE_TOOBIG, "fts5_cjk: text too long"))?;
    let c_args = args
        .iter()
        .map(|a| CString::new(*a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SqliteError::new("fts5_cjk: tokenizer argument", e.into()))?;
    let mut arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    let n_arg = c_int::try_from(arg_ptrs.len())
        .map_err(|_| failure(ffi::SQLITE_TOOBIG, "fts5_cjk: too many arguments"))?;

    let api = fts5_api(conn)?;
    // SAFETY: `api` is the live `fts5_api` of `conn` (non-null).
    let Some(find) = (unsafe { (*api).xFindTokenizer }) else {
        return Err(failure(ffi::SQLITE_ERROR, "fts5_cjk: FTS5 unavailable"));
    };
    let mut user_data: *mut c_void = ptr::null_mut();
    let mut methods = ffi::fts5_tokenizer {
        xCreate: None,
        xDelete: None,
        xTokenize: None,
    };
    // SAFETY: `api` is live, the name is NUL-terminated, the out-pointers
    // point to live locals.
    let rc = unsafe { find(api, TOKENIZER_NAME_C.as_ptr(), &mut user_data, &mut methods) };
    if rc != ffi::SQLITE_OK {
        return Err(failure(rc, "no such tokenizer: cjk_unicode61"));
    }
    let (Some(create), Some(delete), Some(tokenize)) =
        (methods.xCreate, methods.xDelete, methods.xTokenize)
    else {
        return Err(failure(ffi::SQLITE_ERROR, "fts5_cjk: incomplete tokenizer"));
    };

    let mut instance: *mut ffi::Fts5Tokenizer = ptr::null_mut();
    // SAFETY: the constructor FTS5 returned, with its user data, `n_arg`
    // NUL-terminated arguments kept alive by `c_args`, and a live out-pointer.
    let rc = unsafe { create(user_data, arg_ptrs.as_mut_ptr(), n_arg, &mut instance) };
    if rc != ffi::SQLITE_OK {
        return Err(failure(rc, "error in tokenizer constructor"));
    }
    let mut tokens: Vec<(Vec<u8>, i32, i32)> = Vec::new();
    // SAFETY: `instance` was just created by this tokenizer; the text is
    // `n_text` valid bytes; the context is `tokens`, used only by
    // `collect_token` during this call.
    let rc = unsafe {
        tokenize(
            instance,
            (&raw mut tokens).cast(),
            mode.flags(),
            text.as_ptr().cast(),
            n_text,
            Some(collect_token),
        )
    };
    // SAFETY: `instance` was created above and is deleted exactly once.
    unsafe { delete(instance) };
    if rc != ffi::SQLITE_OK {
        return Err(failure(rc, "fts5_cjk: tokenizing"));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(folded: &[u8]) -> Vec<&[u8]> {
        let mut out = Vec::new();
        if !contains_cjk(folded) {
            out.push(folded);
            return out;
        }
        for_each_piece(folded, |a, b| {
            out.push(&folded[a..b]);
            ffi::SQLITE_OK
        });
        out
    }

    #[test]
    fn cuts_like_upstream() {
        assert_eq!(
            pieces("数据库".as_bytes()),
            ["数据".as_bytes(), "据库".as_bytes()]
        );
        assert_eq!(
            pieces("x数y据z".as_bytes()),
            ["x", "数", "y", "据", "z"].map(str::as_bytes)
        );
        assert_eq!(
            pieces("v2数据库api".as_bytes()),
            ["v2", "数据", "据库", "api"].map(str::as_bytes)
        );
        assert_eq!(pieces("abc".as_bytes()), ["abc".as_bytes()]);
        assert_eq!(pieces(b""), [b"".as_slice()]);
    }

    #[test]
    fn cjk_set_edges() {
        for cp in [
            0x1100, 0x11FF, 0x3040, 0x30FC, 0x31F0, 0x3400, 0x4E00, 0x9FFF, 0xA960, 0xAC00, 0xD7A3,
            0xD7B0, 0xD7FF, 0xF900, 0xFAFF, 0x20000, 0x2A6DF, 0x2FA1F,
        ] {
            assert!(is_cjk(cp), "{cp:#X}");
        }
        for cp in [
            0x10FF, 0x1200, 0x3000, 0x3005, 0x3007, 0x303F, 0x3100, 0x3190, 0x31C0, 0x4DC0, 0xA980,
            0xD7A4, 0xD7AF, 0xFB00, 0xFF21, 0xFF76, 0x1FFFF, 0x2FA20, 0x30000,
        ] {
            assert!(!is_cjk(cp), "{cp:#X}");
        }
    }

    #[test]
    fn lenient_decoding_never_reads_out_of_bounds() {
        // Truncated sequences, stray continuation bytes, bad lead bytes.
        for bytes in [
            &b"\xE6"[..],
            b"\xE6\x95",
            b"\xF0\xA0\x80",
            b"\x80\x80",
            b"\xFF\xFE",
            b"\xE6\x95\xB0\xE6",
            b"\xE6\x95\xB0\xE6\x8D",
        ] {
            let got = pieces(bytes);
            // No run here has two CJK characters, so the pieces tile the input.
            assert_eq!(got.concat(), bytes);
            assert!(got.iter().all(|p| !p.is_empty()));
        }
        // Continuation bytes are not checked: E4 41 42 decodes as U+4042 (CJK).
        assert!(contains_cjk(b"\xE4\x41\x42"));
        // A truncated CJK character after a complete one is a non-CJK segment.
        assert_eq!(
            pieces(b"\xE6\x95\xB0\xE6\x8D"),
            [&b"\xE6\x95\xB0"[..], b"\xE6\x8D"]
        );
    }

    #[test]
    fn offsets_clamp_to_the_source_end() {
        assert_eq!(piece_offset(0, 2, 2), 2);
        assert_eq!(piece_offset(0, 2, 3), 2);
        assert_eq!(piece_offset(2, 8, 6), 8);
        assert_eq!(piece_offset(2, 8, usize::MAX), 8);
    }
}
