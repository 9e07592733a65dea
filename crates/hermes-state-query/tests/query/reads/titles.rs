//! `api.md` §6.1 (`sanitize_title`), §6.3 (`resolve_session_by_title`) and
//! §6.4 (`get_next_title_in_lineage`).

use hermes_state_query::titles::{
    self, MAX_TITLE_CHARS, get_next_title_in_lineage, resolve_session_by_title,
};
use hermes_state_query::{TitleError, sanitize_title};

use crate::common::Db;

fn clean(input: &str) -> Option<String> {
    sanitize_title(Some(input)).unwrap_or_else(|e| panic!("{input:?}: {e}"))
}

fn some(text: &str) -> Option<String> {
    Some(text.to_owned())
}

#[test]
fn sanitize_title_table_of_6_1() {
    assert_eq!(clean("  Hello   World  "), some("Hello World"));
    assert_eq!(clean("a\tb\nc\rd"), some("a b c d"));
    assert_eq!(clean("x\x00y\x07z\x1b\x7f"), some("xyz"));
    assert_eq!(
        clean("zero\u{200b}width\u{202e}RTL\u{feff}BOM\u{2066}iso\u{2069}"),
        some("zerowidthRTLBOMiso")
    );
    assert_eq!(clean("nb\u{a0}sp"), some("nb sp"));
    assert_eq!(clean("ctl\u{85}nel"), some("ctl nel"));
    assert_eq!(clean("   "), None);
    assert_eq!(clean(""), None);
    assert_eq!(sanitize_title(None), Ok(None));

    let a100 = "a".repeat(100);
    assert_eq!(clean(&a100), Some(a100.clone()));
    let emoji100 = "😀".repeat(100);
    assert_eq!(clean(&emoji100), Some(emoji100.clone()));

    for long in ["a".repeat(101), "😀".repeat(101)] {
        let error = sanitize_title(Some(&long)).expect_err("101 code points are too long");
        assert_eq!(error, TitleError::TooLong { chars: 101 });
        assert_eq!(error.to_string(), "Title too long (101 chars, max 100)");
    }

    let padded = format!(" {} ", "b".repeat(100));
    assert_eq!(clean(&padded), Some("b".repeat(100)));
    assert_eq!(MAX_TITLE_CHARS, 100);
}

#[test]
fn sanitize_title_whitespace_and_invisibles() {
    // U+0085 (NEL) and U+00A0 (NBSP) are Python whitespace: runs collapse.
    assert_eq!(clean("a\u{85}\u{85}b"), some("a b"));
    assert_eq!(clean("a \u{a0} b"), some("a b"));
    assert_eq!(
        clean("\u{a0}\u{85}lead and trail\u{85}\u{a0}"),
        some("lead and trail")
    );
    // U+200B is deleted (not turned into a space) ...
    assert_eq!(clean("zero\u{200b}width"), some("zerowidth"));
    // ... before whitespace collapses, so spaces around it form one run.
    assert_eq!(clean("a \u{200b} b"), some("a b"));
    assert_eq!(clean("\u{200b}"), None);
    // Tabs, newlines, carriage returns collapse with spaces into one.
    assert_eq!(clean("a\t\t b\n\n\nc \r\n d"), some("a b c d"));
    assert_eq!(clean("\t\n\r "), None);
    // Other Python whitespace: U+3000, U+2003, U+202F, U+205F, U+1680.
    assert_eq!(
        clean("a\u{3000}b\u{2003}c\u{202f}d\u{205f}e\u{1680}f"),
        some("a b c d e f")
    );
    // Step 2/3 deletions win over step 4 for characters that are both
    // deleted and whitespace: U+000B, U+000C, U+001C–U+001F, U+2028, U+2029.
    assert_eq!(clean("a\x0bb\x0cc"), some("abc"));
    assert_eq!(clean("a\x1cb\x1fc"), some("abc"));
    assert_eq!(clean("a\u{2028}b\u{2029}c"), some("abc"));
    // Other deleted characters: U+FFFC, U+FFF9–U+FFFB, U+2060.
    assert_eq!(clean("o\u{fffc}b\u{fff9}j\u{fffb}\u{2060}"), some("obj"));
    // The length counts code points after cleaning.
    let long_raw = format!("{}\u{200b}\u{200b}  ", "c".repeat(100));
    assert_eq!(clean(&long_raw), Some("c".repeat(100)));
    let spaced = format!("{}    {}", "d".repeat(50), "e".repeat(50));
    assert_eq!(
        sanitize_title(Some(&spaced)),
        Err(TitleError::TooLong { chars: 101 })
    );
}

/// The ten sessions of the §6.3 example, created in order; returns the id of
/// each title (`s1` … `s10`).
fn resolve_example() -> Db {
    let db = Db::new();
    let titles = [
        "Proj",
        "proj",
        "auto",
        "Docker fix",
        "Docker fix #2",
        "Docker fix #10",
        "Docker fix #abc",
        "Only #3",
        "100%_done",
        "100XXdone #2",
    ];
    for (i, title) in titles.iter().enumerate() {
        db.titled(&format!("s{}", i + 1), title, 1000.0 + i as f64);
    }
    db
}

#[test]
fn resolve_session_by_title_example_of_6_3() {
    let db = resolve_example();
    let resolve = |title: &str| resolve_session_by_title(&db.conn, title).expect("resolve");
    // `Docker fix #abc` is the newest LIKE match ("#%" accepts any suffix).
    assert_eq!(resolve("Docker fix").as_deref(), Some("s7"));
    // LIKE is ASCII case-insensitive.
    assert_eq!(resolve("docker fix").as_deref(), Some("s7"));
    assert_eq!(resolve("Only").as_deref(), Some("s8"));
    assert_eq!(resolve("Proj").as_deref(), Some("s1"));
    // `%` and `_` are literal: `100XXdone #2` does not match.
    assert_eq!(resolve("100%_done").as_deref(), Some("s9"));
    assert_eq!(resolve("Nope"), None);
    // The exact match is case-sensitive.
    assert_eq!(resolve("proj").as_deref(), Some("s2"));
    assert_eq!(resolve("auto").as_deref(), Some("s3"));
}

#[test]
fn resolve_prefers_newest_by_started_at_not_insertion() {
    let db = Db::new();
    db.titled("base", "Topic", 10.0);
    db.titled("newest", "Topic #2", 30.0);
    db.titled("older", "Topic #3", 20.0);
    assert_eq!(
        resolve_session_by_title(&db.conn, "Topic")
            .expect("resolve")
            .as_deref(),
        Some("newest")
    );
    // A numbered title resolves to itself exactly.
    assert_eq!(
        resolve_session_by_title(&db.conn, "Topic #3")
            .expect("resolve")
            .as_deref(),
        Some("older")
    );
}

fn next_title(existing: &[&str], argument: &str) -> String {
    let db = Db::new();
    for (i, title) in existing.iter().enumerate() {
        db.titled(&format!("t{i}"), title, 100.0 + i as f64);
    }
    get_next_title_in_lineage(&db.conn, argument).expect("get_next_title_in_lineage")
}

#[test]
fn next_title_in_lineage_table_of_6_4() {
    let fix = ["Docker fix", "Docker fix #2"];
    let fix10 = ["Docker fix", "Docker fix #2", "Docker fix #10"];
    let fix_abc = [
        "Docker fix",
        "Docker fix #2",
        "Docker fix #10",
        "Docker fix #abc",
    ];
    let rows: [(&[&str], &str, &str); 11] = [
        (&[], "New thing", "New thing"),
        (&["Docker fix"], "Docker fix", "Docker fix #2"),
        (&fix, "Docker fix", "Docker fix #3"),
        (&fix, "Docker fix #2", "Docker fix #3"),
        (&fix10, "Docker fix", "Docker fix #11"),
        (&fix_abc, "Docker fix", "Docker fix #11"),
        (&["Only #3"], "Only", "Only #4"),
        (&["100%_done", "100XXdone #2"], "100%_done", "100%_done #2"),
        (&[], "a #2 #3", "a #2"),
        (&[], "#5", "#5"),
        (&[], " #5", ""),
    ];
    for (existing, argument, expected) in rows {
        assert_eq!(
            next_title(existing, argument),
            expected,
            "existing {existing:?}, argument {argument:?}"
        );
    }
}

#[test]
fn next_title_in_lineage_details() {
    // LIKE is ASCII case-insensitive: `docker fix #5` raises the number.
    assert_eq!(
        next_title(&["docker fix #5"], "Docker fix"),
        "Docker fix #6"
    );
    // The exact part is case-sensitive: `docker fix` alone does not count.
    assert_eq!(next_title(&["docker fix"], "Docker fix"), "Docker fix");
    // The last ` #N` counts (greedy prefix): `a #7 #3` numbers 3, not 7.
    assert_eq!(next_title(&["a #7 #3"], "a"), "a #4");
    // The argument's base is its shortest prefix: `a #7` → `a`.
    assert_eq!(next_title(&["a #7 #3"], "a #7"), "a #4");
    // Numbers are not limited to 64 bits.
    assert_eq!(
        next_title(&["Big #99999999999999999999"], "Big"),
        "Big #100000000000000000000"
    );
    // Any Unicode decimal digit is a digit (Arabic-Indic three).
    assert_eq!(next_title(&["X #\u{663}"], "X"), "X #4");
    // The result is not checked against the title length limit.
    let long = "z".repeat(100);
    assert_eq!(next_title(&[&long], &long), format!("{long} #2"));
}

#[test]
fn title_lookups() {
    let db = Db::new();
    db.titled("a", "Alpha", 1.0);
    db.session("b", 2.0);
    assert_eq!(
        titles::get_session_title(&db.conn, "a").expect("read"),
        Some("Alpha".to_owned())
    );
    assert_eq!(
        titles::get_session_title(&db.conn, "b").expect("read"),
        None
    );
    assert_eq!(
        titles::get_session_title(&db.conn, "zz").expect("read"),
        None
    );
    assert_eq!(
        titles::session_id_by_title(&db.conn, "Alpha").expect("read"),
        Some("a".to_owned())
    );
    assert_eq!(
        titles::session_id_by_title(&db.conn, "alpha").expect("read"),
        None
    );
    assert_eq!(titles::escape_like(r"a%b_c\d"), r"a\%b\_c\\d");
}
