//! The built-in `cjk_unicode61` tokenizer against the measured behaviour of
//! upstream's C extension (`schema-v23.md` §10).

use hermes_state_schema::cjk::{self, TokenizeMode};
use hermes_state_schema::rusqlite::Connection;
use proptest::prelude::*;

/// Raw tokens: (bytes, start, end).
type Tokens = Vec<(Vec<u8>, i32, i32)>;
/// A decoded token: (text, start, end).
type Tok = (String, i32, i32);
/// An expected token: (text, start, end).
type Want<'a> = (&'a str, i32, i32);

/// A fresh in-memory connection with the tokenizer registered.
fn conn() -> Connection {
    let conn = Connection::open_in_memory().expect("open in-memory db");
    cjk::register(&conn).expect("register cjk_unicode61");
    conn
}

/// Tokens of `text` with the given tokenizer arguments, as (text, start, end).
fn tokens_with(conn: &Connection, args: &[&str], text: &str) -> Vec<Tok> {
    cjk::debug_tokens(conn, args, text)
        .unwrap_or_else(|e| panic!("tokenizing {text:?}: {e}"))
        .into_iter()
        .map(|(t, s, e)| (String::from_utf8(t).expect("token is UTF-8"), s, e))
        .collect()
}

fn owned(expected: &[Want<'_>]) -> Vec<Tok> {
    expected
        .iter()
        .map(|&(t, s, e)| (t.to_owned(), s, e))
        .collect()
}

/// The 35 measured token streams of §10.7 (default arguments).
fn measured() -> Vec<(String, Vec<Tok>)> {
    let table: Vec<(&str, Vec<Want<'_>>)> = vec![
        ("数据库", vec![("数据", 0, 6), ("据库", 3, 9)]),
        ("数据", vec![("数据", 0, 6)]),
        ("库", vec![("库", 0, 3)]),
        (
            "我想学习机器学习和数据库优化",
            vec![
                ("我想", 0, 6),
                ("想学", 3, 9),
                ("学习", 6, 12),
                ("习机", 9, 15),
                ("机器", 12, 18),
                ("器学", 15, 21),
                ("学习", 18, 24),
                ("习和", 21, 27),
                ("和数", 24, 30),
                ("数据", 27, 33),
                ("据库", 30, 36),
                ("库优", 33, 39),
                ("优化", 36, 42),
            ],
        ),
        (
            "東京の天気",
            vec![
                ("東京", 0, 6),
                ("京の", 3, 9),
                ("の天", 6, 12),
                ("天気", 9, 15),
            ],
        ),
        (
            "데이터베이스 마이그레이션을 실행했습니다",
            vec![
                ("데이", 0, 6),
                ("이터", 3, 9),
                ("터베", 6, 12),
                ("베이", 9, 15),
                ("이스", 12, 18),
                ("마이", 19, 25),
                ("이그", 22, 28),
                ("그레", 25, 31),
                ("레이", 28, 34),
                ("이션", 31, 37),
                ("션을", 34, 40),
                ("실행", 41, 47),
                ("행했", 44, 50),
                ("했습", 47, 53),
                ("습니", 50, 56),
                ("니다", 53, 59),
            ],
        ),
        ("东京tokyo", vec![("东京", 0, 6), ("tokyo", 6, 11)]),
        (
            "Tokyo东京Osaka",
            vec![("tokyo", 0, 5), ("东京", 5, 11), ("osaka", 11, 16)],
        ),
        (
            "数据2024年",
            vec![("数据", 0, 6), ("2024", 6, 10), ("年", 10, 13)],
        ),
        (
            "v2数据库API_v3",
            vec![
                ("v2", 0, 2),
                ("数据", 2, 8),
                ("据库", 5, 11),
                ("api", 11, 14),
                ("v3", 15, 17),
            ],
        ),
        (
            "hello 世 world",
            vec![("hello", 0, 5), ("世", 6, 9), ("world", 10, 15)],
        ),
        (
            "x数y据z",
            vec![
                ("x", 0, 1),
                ("数", 1, 4),
                ("y", 4, 5),
                ("据", 5, 8),
                ("z", 8, 9),
            ],
        ),
        ("数据 库", vec![("数据", 0, 6), ("库", 7, 10)]),
        ("部署🚀完成", vec![("部署", 0, 6), ("完成", 10, 16)]),
        (
            "天气\u{FF0C}散步\u{3002}",
            vec![("天气", 0, 6), ("散步", 9, 15)],
        ),
        ("数据\u{3000}东京", vec![("数据", 0, 6), ("东京", 9, 15)]),
        (
            "ＡＢＣ数据ｄｅｆ１２３",
            vec![("ａｂｃ", 0, 9), ("数据", 9, 15), ("ｄｅｆ１２３", 15, 33)],
        ),
        ("人\u{3005}", vec![("人", 0, 3), ("\u{3005}", 3, 6)]),
        ("\u{3007}一二", vec![("\u{3007}", 0, 3), ("一二", 3, 9)]),
        ("ｶﾀｶﾅ", vec![("ｶﾀｶﾅ", 0, 12)]),
        (
            "カタカナー",
            vec![
                ("カタ", 0, 6),
                ("タカ", 3, 9),
                ("カナ", 6, 12),
                ("ナー", 9, 15),
            ],
        ),
        (
            "\u{314B}\u{314B}\u{314B}",
            vec![("\u{314B}\u{314B}", 0, 6), ("\u{314B}\u{314B}", 3, 9)],
        ),
        ("\u{1100}\u{1161}", vec![("\u{1100}\u{1161}", 0, 6)]),
        ("\u{F900}\u{F901}", vec![("\u{F900}\u{F901}", 0, 6)]),
        ("\u{20000}\u{20001}", vec![("\u{20000}\u{20001}", 0, 8)]),
        ("か\u{3099}が", vec![("か", 0, 3), ("が", 6, 9)]),
        (
            "Café CAFÉ naïve",
            vec![("cafe", 0, 5), ("cafe", 6, 11), ("naive", 12, 18)],
        ),
        ("Ĉu数据", vec![("cu", 0, 2), ("数据", 2, 8)]),
        ("ÀB数据", vec![("ab", 0, 2), ("数据", 2, 8)]),
        ("Ⱥ数据", vec![("ⱥ", 0, 3), ("数据", 3, 8)]),
    ];
    table
        .into_iter()
        .map(|(text, expected)| (text.to_owned(), owned(&expected)))
        .collect()
}

#[test]
fn measured_token_streams() {
    let conn = conn();
    let cases = measured();
    assert_eq!(cases.len(), 30, "rows of the §10.7 table");
    for (text, expected) in &cases {
        assert_eq!(&tokens_with(&conn, &[], text), expected, "input {text:?}");
    }
}

#[test]
fn halfwidth_katakana_punctuation_splits() {
    // `・` U+30FB, `゛` U+309B and `゠` U+30A0 are separators (§10.4).
    let conn = conn();
    for sep in ['\u{30FB}', '\u{309B}', '\u{30A0}'] {
        let text = format!("カ{sep}タ");
        let sep_len = i32::try_from(sep.len_utf8()).unwrap();
        assert_eq!(
            tokens_with(&conn, &[], &text),
            owned(&[("カ", 0, 3), ("タ", 3 + sep_len, 6 + sep_len)]),
            "separator {sep:?}"
        );
    }
}

#[test]
fn every_mode_gives_the_same_tokens() {
    let conn = conn();
    for (text, expected) in measured() {
        for mode in [
            TokenizeMode::Document,
            TokenizeMode::Query,
            TokenizeMode::Prefix,
            TokenizeMode::Aux,
        ] {
            let got: Vec<Tok> = cjk::debug_tokens_in_mode(&conn, &[], &text, mode)
                .unwrap()
                .into_iter()
                .map(|(t, s, e)| (String::from_utf8(t).unwrap(), s, e))
                .collect();
            assert_eq!(got, expected, "input {text:?} mode {mode:?}");
        }
    }
}

#[test]
fn arguments_go_to_unicode61() {
    let conn = conn();
    assert_eq!(
        tokens_with(&conn, &["remove_diacritics", "0"], "Ĉu数据"),
        owned(&[("ĉu", 0, 3), ("数据", 3, 9)])
    );
    assert_eq!(
        tokens_with(&conn, &["tokenchars", "'-_.'"], "a-b数据c_d"),
        owned(&[("a-b", 0, 3), ("数据", 3, 9), ("c_d", 9, 12)])
    );
    assert_eq!(
        tokens_with(&conn, &["remove_diacritics", "2"], "Crème brûlée"),
        owned(&[("creme", 0, 6), ("brulee", 7, 15)])
    );
    // Separators split CJK runs like any other token.
    assert_eq!(
        tokens_with(&conn, &["separators", "'据'"], "数据库"),
        owned(&[("数", 0, 3), ("库", 6, 9)])
    );
}

#[test]
fn tokenchars_through_a_table() {
    let conn = conn();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61 tokenchars ''-_.''');
         INSERT INTO t(content) VALUES ('a-b数据c_d');",
    )
    .unwrap();
    conn.execute_batch("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        .unwrap();
    let terms: Vec<String> = conn
        .prepare("SELECT term FROM v ORDER BY offset")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(terms, ["a-b", "数据", "c_d"]);
}

#[test]
fn bad_arguments_fail_the_constructor() {
    let conn = conn();
    for args in ["foo", "remove_diacritics 3"] {
        let sql = format!(
            "CREATE VIRTUAL TABLE bad USING fts5(content, tokenize='cjk_unicode61 {args}')"
        );
        let err = conn.execute_batch(&sql).expect_err(&sql).to_string();
        assert!(
            err.contains("error in tokenizer constructor"),
            "{sql}: unexpected error {err}"
        );
        let split: Vec<&str> = args.split(' ').collect();
        let err = cjk::debug_tokens(&conn, &split, "数据").expect_err(args);
        assert!(
            err.to_string().contains("error in tokenizer constructor"),
            "{err}"
        );
    }
    // The connection is still usable afterwards.
    conn.execute_batch("CREATE VIRTUAL TABLE good USING fts5(content, tokenize='cjk_unicode61')")
        .unwrap();
}

#[test]
fn unregistered_connection_has_no_such_tokenizer() {
    let conn = Connection::open_in_memory().unwrap();
    let err = conn
        .execute_batch("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61')")
        .unwrap_err();
    assert!(
        err.to_string().contains("no such tokenizer: cjk_unicode61"),
        "{err}"
    );
    let err = cjk::debug_tokens(&conn, &[], "数据").unwrap_err();
    assert!(err.to_string().contains("no such tokenizer"), "{err}");

    // A table created on a registered connection is unusable on another one.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    {
        let writer = Connection::open(&path).unwrap();
        cjk::register(&writer).unwrap();
        writer
            .execute_batch(
                "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61');
                 INSERT INTO t(content) VALUES ('数据库');",
            )
            .unwrap();
    }
    let other = Connection::open(&path).unwrap();
    let err = other
        .execute("INSERT INTO t(content) VALUES ('东京')", [])
        .unwrap_err();
    assert!(
        err.to_string().contains("no such tokenizer: cjk_unicode61"),
        "{err}"
    );
    cjk::register(&other).unwrap();
    other
        .execute("INSERT INTO t(content) VALUES ('东京')", [])
        .unwrap();
    let n: i64 = other
        .query_row(
            "SELECT count(*) FROM t WHERE t MATCH '\"据库\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn registering_twice_is_harmless() {
    let conn = conn();
    cjk::register(&conn).unwrap();
    assert_eq!(
        tokens_with(&conn, &[], "数据库"),
        owned(&[("数据", 0, 6), ("据库", 3, 9)])
    );
}

/// A table of the documents used by the matching facts of §10.8.
fn matching_table() -> Connection {
    let conn = conn();
    conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61')")
        .unwrap();
    for doc in DOCS {
        conn.execute("INSERT INTO t(content) VALUES (?1)", [doc])
            .unwrap();
    }
    conn
}

const DOCS: [&str; 9] = [
    "数据库索引可以加速查询",
    "库 存",
    "セッションの検索結果",
    "데이터베이스 마이그레이션",
    "提高查询速度。",
    "东京tokyo",
    "东京 tokyo",
    "数据库 tokyo",
    "普通消息 只在这里",
];

/// (content, highlight) of the rows matching `query`, in rowid order.
fn search(conn: &Connection, query: &str) -> Vec<(String, String)> {
    conn.prepare("SELECT content, highlight(t, 0, '[', ']') FROM t WHERE t MATCH ?1 ORDER BY rowid")
        .unwrap()
        .query_map([query], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{query}: {e}"))
}

fn contents(rows: &[(String, String)]) -> Vec<&str> {
    rows.iter().map(|(c, _)| c.as_str()).collect()
}

#[test]
fn matching_facts() {
    let conn = matching_table();
    let q = |query: &str| search(&conn, query);

    assert_eq!(
        contents(&q("\"数据\"")),
        ["数据库索引可以加速查询", "数据库 tokyo"]
    );
    let rows = q("\"据库索引\"");
    assert_eq!(contents(&rows), ["数据库索引可以加速查询"]);
    assert_eq!(rows[0].1, "数[据库索引]可以加速查询");
    // A lone character is a unigram; inside a run it never is.
    assert_eq!(contents(&q("\"库\"")), ["库 存"]);
    assert!(q("\"の\"").is_empty());
    assert!(q("\"스 마\"").is_empty());
    assert!(q("\"度。\"").is_empty());
    assert_eq!(contents(&q("\"东京tokyo\"")), ["东京tokyo", "东京 tokyo"]);
    let rows = q("\"据库tokyo\"");
    assert_eq!(contents(&rows), ["数据库 tokyo"]);
    assert_eq!(rows[0].1, "数[据库 tokyo]");
    let rows = q("\"普通\" AND \"消息\"");
    assert_eq!(contents(&rows), ["普通消息 只在这里"]);
    assert_eq!(rows[0].1, "[普通消息] 只在这里");
    assert_eq!(
        contents(&q("数*")),
        ["数据库索引可以加速查询", "数据库 tokyo"]
    );
    // Japanese and Korean bigrams.
    assert_eq!(contents(&q("\"検索\"")), ["セッションの検索結果"]);
    assert_eq!(
        contents(&q("\"마이그레이션\"")),
        ["데이터베이스 마이그레이션"]
    );

    conn.execute("INSERT INTO t(t) VALUES ('integrity-check')", [])
        .unwrap();
}

#[test]
fn document_length_counts_emitted_tokens() {
    let conn = conn();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61');
         INSERT INTO t(content) VALUES ('\u{314B}\u{314B}\u{314B}');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
    )
    .unwrap();
    let rows: Vec<(String, i64)> = conn
        .prepare("SELECT term, offset FROM v ORDER BY offset")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        [
            ("\u{314B}\u{314B}".to_owned(), 0),
            ("\u{314B}\u{314B}".to_owned(), 1)
        ]
    );
}

#[test]
fn drifted_offsets_reach_highlight() {
    let conn = conn();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61');
         INSERT INTO t(content) VALUES ('Café数据库'), ('résumé东京');",
    )
    .unwrap();
    let highlight = |query: &str| -> Vec<u8> {
        conn.query_row(
            "SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ?1",
            [query],
            |r| Ok(r.get_ref(0)?.as_bytes()?.to_vec()),
        )
        .unwrap()
    };
    assert_eq!(
        highlight("\"数据\""),
        b"Caf\xC3[\xA9\xE6\x95\xB0\xE6\x8D]\xAE\xE5\xBA\x93".to_vec()
    );
    assert_eq!(highlight("\"résumé\""), "[résum]é东京".as_bytes());
    conn.execute("INSERT INTO t(t) VALUES ('integrity-check')", [])
        .unwrap();
}

#[test]
fn invalid_utf8_text_is_tokenized_safely() {
    let conn = conn();
    conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61')")
        .unwrap();
    let samples: [&[u8]; 8] = [
        b"\xE6",
        b"\xE6\x95",
        b"\xE4\x41\x42 x",
        b"\xF0\xA0\x80",
        b"\x80\x80abc",
        b"\xFF\xFE\xE6\x95\xB0\xE6\x8D\xAE",
        b"ab\xE6\x95\xB0\xE6",
        b"\xC3",
    ];
    for bytes in samples {
        conn.execute("INSERT INTO t(content) VALUES (CAST(?1 AS TEXT))", [bytes])
            .unwrap();
    }
    conn.execute("INSERT INTO t(t) VALUES ('integrity-check')", [])
        .unwrap();
    let _: i64 = conn
        .query_row("SELECT count(*) FROM t WHERE t MATCH 'abc'", [], |r| {
            r.get(0)
        })
        .unwrap();
}

#[test]
fn works_after_moving_to_another_thread() {
    let conn = conn();
    conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61')")
        .unwrap();
    let handle = std::thread::spawn(move || {
        conn.execute(
            "INSERT INTO t(content) VALUES ('我想学习机器学习和数据库优化')",
            [],
        )
        .unwrap();
        let hits: Vec<String> = conn
            .prepare("SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH '\"数据库\"'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(hits, ["我想学习机器学习和[数据库]优化"]);
        conn.execute("INSERT INTO t(t) VALUES ('integrity-check')", [])
            .unwrap();
        conn
    });
    let conn = handle.join().expect("worker thread");
    // And back again.
    assert_eq!(
        tokens_with(&conn, &[], "东京tokyo"),
        owned(&[("东京", 0, 6), ("tokyo", 6, 11)])
    );
}

// ---------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------

/// The §10.4 set, for the model below.
fn is_cjk(c: char) -> bool {
    matches!(
        u32::from(c),
        0x1100..=0x11FF
            | 0x3040..=0x309F
            | 0x30A0..=0x30FF
            | 0x3130..=0x318F
            | 0x31F0..=0x31FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xA960..=0xA97F
            | 0xAC00..=0xD7A3
            | 0xD7B0..=0xD7FF
            | 0xF900..=0xFAFF
            | 0x20000..=0x2FA1F
    )
}

/// Characters whose folding keeps their byte length and whose unicode61
/// class (token character or separator) is known.
const ALPHABET: &[char] = &[
    'a',
    'b',
    'z',
    'A',
    'Q',
    'Z',
    '0',
    '7',
    '9',
    ' ',
    ',',
    '.',
    '-',
    '_',
    '!',
    '(',
    '\n',
    '数',
    '据',
    '库',
    '東',
    '京',
    'の',
    'カ',
    'ー',
    '한',
    '국',
    '\u{1100}',
    '\u{314B}',
    '\u{F900}',
    '\u{20000}',
    '\u{3005}',
    'Ａ',
    'ａ',
    '１',
    '，',
    '。',
    '\u{3000}',
];

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// An independent model of the tokenizer for [`ALPHABET`] text.
fn model(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_token_char(chars[i].1) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && is_token_char(chars[j].1) {
            j += 1;
        }
        // Segments of the unicode61 token chars[i..j].
        let mut k = i;
        while k < j {
            let cjk = is_cjk(chars[k].1);
            let mut l = k;
            while l < j && is_cjk(chars[l].1) == cjk {
                l += 1;
            }
            let end_of = |m: usize| chars.get(m).map_or(text.len(), |&(o, _)| o);
            let mut push = |a: usize, b: usize| {
                let (s, e) = (chars[a].0, end_of(b));
                out.push((
                    text[s..e].to_lowercase(),
                    i32::try_from(s).unwrap(),
                    i32::try_from(e).unwrap(),
                ));
            };
            if !cjk || l - k == 1 {
                push(k, l);
            } else {
                for m in k..l - 1 {
                    push(m, m + 2);
                }
            }
            k = l;
        }
        i = j;
    }
    out
}

fn alphabet_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..40)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_tokenizes(text in any::<String>()) {
        let conn = conn();
        let tokens: Tokens = cjk::debug_tokens(&conn, &[], &text).unwrap();
        let len = i32::try_from(text.len()).unwrap();
        for (token, start, end) in &tokens {
            prop_assert!(!token.is_empty(), "empty token in {:?}", text);
            prop_assert!(std::str::from_utf8(token).is_ok(), "token {:?} of {:?}", token, text);
            prop_assert!(0 <= *start && start <= end && *end <= len,
                "offsets {}..{} of {:?}", start, end, text);
        }
        for mode in [TokenizeMode::Query, TokenizeMode::Prefix, TokenizeMode::Aux] {
            prop_assert_eq!(&cjk::debug_tokens_in_mode(&conn, &[], &text, mode).unwrap(), &tokens);
        }
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61')").unwrap();
        conn.execute("INSERT INTO t(content) VALUES (?1)", [&text]).unwrap();
        conn.execute("INSERT INTO t(t) VALUES ('integrity-check')", []).unwrap();
    }

    #[test]
    fn length_preserving_text_has_exact_offsets(text in alphabet_text()) {
        let conn = conn();
        let tokens: Vec<Tok> = tokens_with(&conn, &[], &text);
        for (token, start, end) in &tokens {
            let (s, e) = (usize::try_from(*start).unwrap(), usize::try_from(*end).unwrap());
            prop_assert!(text.is_char_boundary(s) && text.is_char_boundary(e),
                "offsets {}..{} of {:?}", s, e, text);
            if !token.chars().any(is_cjk) {
                prop_assert_eq!(&text[s..e].to_lowercase(), token);
            } else {
                prop_assert_eq!(&text[s..e], token);
            }
        }
        prop_assert_eq!(&tokens, &model(&text), "input {:?}", text);

        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='cjk_unicode61')").unwrap();
        conn.execute("INSERT INTO t(content) VALUES (?1)", [&text]).unwrap();
        conn.execute("INSERT INTO t(t) VALUES ('integrity-check')", []).unwrap();
        // Every token, quoted, finds the row again.
        for (token, _, _) in &tokens {
            let query = format!("\"{}\"", token.replace('"', "\"\""));
            let n: i64 = conn
                .query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&query], |r| r.get(0))
                .unwrap();
            prop_assert_eq!(n, 1, "query {:?} on {:?}", query, text);
        }
    }
}
