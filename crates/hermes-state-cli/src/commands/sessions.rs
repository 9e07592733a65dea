//! `sessions show|create|end|reopen|delete|clear|lineage`.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};

use hermes_state::{LineageEntry, MessagePage, NewSession, Session, SessionStore};
use serde_json::{Value, json};

use crate::cli::{ClearArgs, CreateArgs, DeleteArgs, EndArgs, LineageArgs, ShowArgs};
use crate::commands::{session_count, to_json};
use crate::confirm::{Consent, sessions_summary};
use crate::error::{CliError, CliResult};
use crate::output::{self, Output, datetime};
use crate::render::conversation::{self, Folding};
use crate::row_format::RowFormat;
use crate::store::{Access, Context};

pub use crate::render::conversation::content_text;

/// Finds a session by id, or else by title.
pub(super) fn find_session(ctx: &Context, db: &dyn SessionStore, id: &str) -> CliResult<Session> {
    if let Some(session) = db.get_session(id).map_err(|e| ctx.fail(&e))? {
        return Ok(session);
    }
    if let Some(by_title) = db.resolve_session_by_title(id).map_err(|e| ctx.fail(&e))?
        && let Some(session) = db.get_session(&by_title).map_err(|e| ctx.fail(&e))?
    {
        return Ok(session);
    }
    Err(ctx.unknown_session(id))
}

/// `sessions show`: one session, or with `--lineage` its whole
/// compression chain (root to tip) as one conversation, each segment under
/// a line naming it; a segment the agent ended by compression says where
/// the conversation goes on.
pub fn show(ctx: &Context, args: &ShowArgs) -> CliResult {
    let db = &*ctx.open(Access::Read)?;
    let session = find_session(ctx, db, &args.id)?;
    let ids = if args.lineage {
        db.get_compression_lineage(&session.id)
            .map_err(|e| ctx.fail(&e))?
    } else {
        vec![session.id.clone()]
    };
    let page = MessagePage {
        include_inactive: args.all,
        limit: None,
        offset: 0,
    };
    let mut segments = Vec::new();
    for id in &ids {
        let segment = if *id == session.id {
            session.clone()
        } else {
            find_session(ctx, db, id)?
        };
        let messages = db
            .get_messages_page(&segment.id, page)
            .map_err(|e| ctx.fail(&e))?;
        segments.push((segment, messages));
    }
    let out = &ctx.out;
    if out.json {
        // The original's export_session shape: the session row, then
        // `messages`; a lineage is an array of those, root first.
        let mut shaped: Vec<Value> = Vec::with_capacity(segments.len());
        for (segment, messages) in &segments {
            let mut value = to_json!(segment);
            if let Value::Object(map) = &mut value {
                map.insert("messages".to_owned(), to_json!(messages));
            }
            shaped.push(value);
        }
        return if args.lineage {
            out.json(&Value::Array(shaped))
        } else {
            out.json(shaped.first().unwrap_or(&Value::Null))
        };
    }
    let folding = Folding {
        reasoning: args.reasoning,
        full: args.full,
    };
    let mut text = String::new();
    let count = segments.len();
    for (index, (segment, messages)) in segments.iter().enumerate() {
        if args.lineage {
            text.push_str(&out.bold(&format!(
                "═══ segment {} of {count}: {} ═══\n",
                index + 1,
                segment.id
            )));
        }
        text.push_str(&conversation::conversation(out, segment, messages, folding));
    }
    if let Some((last, _)) = segments.last()
        && let Some(pointer) = continuation(ctx, db, last, args.lineage)?
    {
        text.push_str(&pointer);
    }
    crate::pager::page(out, &text, !args.no_pager)
}

/// Where a conversation the agent ended by compression goes on: the
/// chain's tip, and how to read it (`None` for other endings, and for a
/// lineage shown up to its tip).
fn continuation(
    ctx: &Context,
    db: &dyn SessionStore,
    last: &Session,
    lineage: bool,
) -> CliResult<Option<String>> {
    if last.end_reason.as_deref() != Some("compression") {
        return Ok(None);
    }
    let tip = db.get_compression_tip(&last.id).map_err(|e| ctx.fail(&e))?;
    if tip == last.id {
        return Ok(None);
    }
    let how = if lineage {
        String::new()
    } else {
        format!(
            ", or `hermes-state sessions show {} --lineage` for the whole",
            last.id
        )
    };
    Ok(Some(format!(
        "\n→ compressed: the conversation continues in {tip} (`hermes-state sessions show {tip}`{how})\n"
    )))
}

/// A new session id in the original's shape: `YYYYMMDD_HHMMSS_xxxxxx` (UTC).
fn new_session_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{}_{:06x}", output::id_stamp(now), random & 0xff_ffff)
}

/// `sessions create`
pub fn create(ctx: &Context, args: &CreateArgs) -> CliResult {
    let db = &*ctx.open(Access::Create)?;
    let id = args.id.clone().unwrap_or_else(new_session_id);
    if let Some(parent) = args.parent.as_deref().filter(|p| !p.is_empty())
        && db.get_session(parent).map_err(|e| ctx.fail(&e))?.is_none()
    {
        return Err(CliError::failed(format!(
            "{}: parent session {parent:?} does not exist in {}",
            ctx.command,
            ctx.path.display()
        ))
        .hint("list sessions with `hermes-state sessions list`"));
    }
    let existed = db.get_session(&id).map_err(|e| ctx.fail(&e))?.is_some();
    ctx.start_writing(db)?;
    let mut session = NewSession::new(&id, &args.source);
    session.model = args.model.clone();
    session.user_id = args.user_id.clone();
    session.parent_session_id = args.parent.clone();
    session.cwd = args.cwd.clone();
    session.system_prompt = args.system_prompt.clone();
    db.create_session(&session).map_err(|e| ctx.fail(&e))?;
    if existed {
        ctx.out.note(format!(
            "note: session {id} already existed; only its empty fields were filled"
        ));
    }
    if ctx.out.json {
        let row = ctx.require_session(db, &id)?;
        return ctx.out.json(&to_json!(&row));
    }
    ctx.out.line(&id)
}

/// Prints a session row (JSON) or a confirmation (human).
fn confirm(ctx: &Context, db: &dyn SessionStore, id: &str, message: String) -> CliResult {
    if ctx.out.json {
        let row = ctx.require_session(db, id)?;
        return ctx.out.json(&to_json!(&row));
    }
    if !ctx.out.quiet {
        ctx.out.line(message)?;
    }
    Ok(())
}

/// `sessions end`
pub fn end(ctx: &Context, args: &EndArgs) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    let before = ctx.require_session(db, &args.id)?;
    if before.ended_at.is_some() {
        // The first end wins, as in the original: nothing changes.
        return confirm(
            ctx,
            db,
            &args.id,
            format!(
                "session {} was already ended ({}); the first end is kept (`sessions reopen` makes it live again)",
                args.id,
                before.end_reason.as_deref().unwrap_or("no reason")
            ),
        );
    }
    ctx.start_writing(db)?;
    db.end_session(&args.id, &args.reason)
        .map_err(|e| ctx.fail(&e))?;
    confirm(
        ctx,
        db,
        &args.id,
        format!("ended session {} ({})", args.id, args.reason),
    )
}

/// `sessions reopen`
pub fn reopen(ctx: &Context, id: &str) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    ctx.require_session(db, id)?;
    ctx.start_writing(db)?;
    db.reopen_session(id).map_err(|e| ctx.fail(&e))?;
    confirm(ctx, db, id, format!("reopened session {id}"))
}

/// `sessions delete`: every id must exist, else nothing is deleted (a typo
/// does not delete the rest of the list).
/// The ids are deleted with their delegate children, in one transaction,
/// their transcripts removed from `--sessions-dir`.
pub fn delete(ctx: &Context, args: &DeleteArgs) -> CliResult {
    let consent = Consent::new(args.consent.yes);
    consent.require(ctx)?;
    let db = &*ctx.open(Access::Write)?;
    let mut ids: Vec<&str> = Vec::new();
    for id in &args.ids {
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    for id in &ids {
        ctx.require_session(db, id)?;
    }
    consent.ask(
        ctx,
        &format!(
            "delete {} and their messages (and their delegate children)?",
            sessions_summary(&ids)
        ),
    )?;
    let before = session_count(ctx, db)?;
    ctx.start_writing(db)?;
    db.delete_sessions(&ids, args.sessions_dir.as_deref())
        .map_err(|e| ctx.fail(&e))?;
    let deleted = before - session_count(ctx, db)?;
    if ctx.out.json {
        let mut value = json!({"ids": ids, "deleted": true, "sessions_deleted": deleted});
        if let ([id], Value::Object(map)) = (ids.as_slice(), &mut value) {
            map.insert("id".to_owned(), (*id).into());
        }
        return ctx.out.json(&value);
    }
    if !ctx.out.quiet {
        let delegates = deleted - ids.len() as i64;
        let extra = if delegates > 0 {
            format!(" and {delegates} delegate session(s)")
        } else {
            String::new()
        };
        let what = match ids.as_slice() {
            [id] => format!("session {id}"),
            _ => sessions_summary(&ids),
        };
        ctx.out.line(format!("deleted {what}{extra}"))?;
    }
    Ok(())
}

/// `sessions clear`
pub fn clear(ctx: &Context, args: &ClearArgs) -> CliResult {
    let id = args.id.as_str();
    let consent = Consent::new(args.consent.yes);
    consent.require(ctx)?;
    let db = &*ctx.open(Access::Write)?;
    ctx.require_session(db, id)?;
    let removed = db.message_count(Some(id)).map_err(|e| ctx.fail(&e))?;
    consent.ask(
        ctx,
        &format!("delete the {removed} message(s) of session {id}?"),
    )?;
    ctx.start_writing(db)?;
    db.clear_messages(id).map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx
            .out
            .json(&json!({"id": id, "messages_deleted": removed}));
    }
    if !ctx.out.quiet {
        ctx.out.line(format!(
            "cleared session {id}: {removed} message(s) deleted"
        ))?;
    }
    Ok(())
}

/// `sessions lineage`
pub fn lineage(ctx: &Context, args: &LineageArgs) -> CliResult {
    let db = &*ctx.open(Access::Read)?;
    let id = args.id.as_str();
    let format = RowFormat::chosen(&ctx.out, args.format)?;
    let ancestors = db.ancestors(id).map_err(|e| ctx.fail(&e))?;
    if ancestors.is_empty() {
        return Err(ctx.unknown_session(id));
    }
    let descendants = db.descendants(id).map_err(|e| ctx.fail(&e))?;
    let root = ancestors
        .last()
        .map(|a| a.id.clone())
        .unwrap_or_else(|| id.to_owned());
    let out = &ctx.out;
    if format == RowFormat::Json {
        return out.json(&json!({
            "id": id,
            "root": root,
            "ancestors": to_json!(&ancestors),
            "descendants": to_json!(&descendants),
        }));
    }
    if format.print(out, &lineage_rows(id, &ancestors, &descendants))? {
        return Ok(());
    }
    let mut text = String::new();
    // The chain from the root down to the session…
    let chain: Vec<&LineageEntry> = ancestors.iter().rev().collect();
    for (depth, entry) in chain.iter().enumerate() {
        let prefix = if depth == 0 {
            String::new()
        } else {
            format!("{}└─ ", "   ".repeat(depth - 1))
        };
        let _ = writeln!(
            text,
            "{prefix}{}",
            describe_entry(out, entry, entry.id == id)
        );
    }
    // …then the session's descendants as a tree below it.
    let mut children: HashMap<&str, Vec<&LineageEntry>> = HashMap::new();
    for entry in descendants.iter().skip(1) {
        if let Some(parent) = entry.parent_session_id.as_deref() {
            children.entry(parent).or_default().push(entry);
        }
    }
    let indent = if chain.len() > 1 {
        "   ".repeat(chain.len() - 1)
    } else {
        String::new()
    };
    let mut seen = HashSet::from([id.to_owned()]);
    render_children(&mut text, out, &children, id, &indent, &mut seen);
    out.text(text)
}

/// The lineage as rows for `--format jsonl|csv`: the ancestors root first,
/// the session, then its descendants in the library's order, each with its
/// `relation` (`ancestor`, `self`, `descendant`) to the session asked about.
fn lineage_rows(id: &str, ancestors: &[LineageEntry], descendants: &[LineageEntry]) -> Value {
    let mut seen = HashSet::new();
    let rows = ancestors
        .iter()
        .rev()
        .chain(descendants)
        .filter(|entry| seen.insert(entry.id.as_str()))
        .map(|entry| {
            let relation = if entry.id == id {
                "self"
            } else if ancestors.iter().any(|a| a.id == entry.id) {
                "ancestor"
            } else {
                "descendant"
            };
            json!({
                "id": entry.id,
                "relation": relation,
                "title": entry.title,
                "started_at": entry.started_at,
                "parent_session_id": entry.parent_session_id,
            })
        })
        .collect();
    Value::Array(rows)
}

fn render_children(
    text: &mut String,
    out: &Output,
    children: &HashMap<&str, Vec<&LineageEntry>>,
    parent: &str,
    indent: &str,
    seen: &mut HashSet<String>,
) {
    let Some(list) = children.get(parent) else {
        return;
    };
    for (i, child) in list.iter().enumerate() {
        if !seen.insert(child.id.clone()) {
            continue;
        }
        let last = i + 1 == list.len();
        let branch = if last { "└─ " } else { "├─ " };
        let _ = writeln!(
            text,
            "{indent}{branch}{}",
            describe_entry(out, child, false)
        );
        let deeper = format!("{indent}{}", if last { "   " } else { "│  " });
        render_children(text, out, children, &child.id, &deeper, seen);
    }
}

fn describe_entry(out: &Output, entry: &LineageEntry, this: bool) -> String {
    let mut line = if this {
        out.bold(&entry.id)
    } else {
        entry.id.clone()
    };
    if let Some(title) = &entry.title {
        let _ = write!(line, "  “{title}”");
    }
    let _ = write!(line, "  {}", out.dim(&datetime(entry.started_at)));
    if this {
        line.push_str(&out.style("1;33", "  ← this session"));
    }
    line
}
