//! Title writes (`api.md` §6.2) through the seam: normalisation, the
//! uniqueness rule and its move from a compression ancestor, clearing,
//! unknown ids, the length limit, automatic titles and lineage numbering.
//! A refusal is matched by kind and by the original's message.

use hermes_state_core::Result;
use hermes_state_types::{ErrorKind, NewSession};

use super::{Backend, TestStore};
use crate::build::add_child;

/// Asserts a refused title: kind `Constraint`, the original's message.
#[track_caller]
fn assert_in_use(result: Result<bool>, title: &str, holder: &str, n: &str) {
    let error = result.expect_err("the title is held by another session");
    assert_eq!(error.kind(), ErrorKind::Constraint, "{n}: {error}");
    let message = format!("Title '{title}' is already in use by session {holder}");
    assert_eq!(error.to_string(), message, "{n}");
}

fn title(b: &TestStore, id: &str) -> Option<String> {
    b.get_session_title(id).unwrap()
}

/// Creates untitled sessions.
fn sessions(b: &TestStore, ids: &[&str]) {
    for id in ids {
        b.create_session(&NewSession::new(*id, "cli")).unwrap();
    }
}

/// A title is stored normalised (whitespace and invisible characters
/// collapsed); setting it again, in any spelling, is an update of the
/// same row; 100 code points are accepted; clearing (`None` or
/// whitespace) frees it; an unknown id answers false and creates nothing.
pub fn titles_are_normalised_cleared_and_set_only_on_known_sessions_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    sessions(&b, &["s", "t"]);
    let set = |id, title| b.set_session_title(id, title).unwrap();
    assert!(
        set("s", Some("  Hello \t World\u{200b}\n\u{a0}again\x07  ")),
        "{n}"
    );
    assert_eq!(title(&b, "s").as_deref(), Some("Hello World again"), "{n}");
    assert!(set("s", Some("Hello World again")), "{n}");
    assert!(set("s", Some("Hello  World   again")), "{n}");
    assert_eq!(title(&b, "s").as_deref(), Some("Hello World again"), "{n}");
    let hundred = "😀".repeat(100);
    assert!(set("s", Some(&hundred)), "{n}");
    assert_eq!(title(&b, "s").as_deref(), Some(hundred.as_str()), "{n}");

    assert!(set("s", None), "{n}");
    assert_eq!(title(&b, "s"), None, "{n}");
    assert!(set("s", None), "{n}: an untitled row is still updated");
    assert!(set("s", Some("Again")), "{n}");
    assert!(set("s", Some(" \t\u{200b} ")), "{n}");
    assert_eq!(title(&b, "s"), None, "{n}: whitespace clears");
    assert!(set("s", Some("Free")), "{n}");
    assert!(set("s", None), "{n}");
    assert!(set("t", Some("Free")), "{n}: a cleared title is free");

    assert!(!set("missing", Some("Anything")), "{n}");
    assert!(!set("missing", None), "{n}");
    assert_eq!(title(&b, "missing"), None, "{n}");
    assert!(b.get_session("missing").unwrap().is_none(), "{n}");
}

/// A title held by an unrelated session is refused (in any spelling that
/// normalises to it, the message naming the normalised title) and
/// nothing is written; titles differing in case coexist.
pub fn a_title_held_elsewhere_is_refused_in_any_spelling_and_case_counts_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let n = b.name();
    sessions(&b, &["a", "b", "upper", "lower"]);
    assert!(b.set_session_title("a", Some("X")).unwrap(), "{n}");
    assert_in_use(b.set_session_title("b", Some("X")), "X", "a", n);
    assert_in_use(b.set_session_title("b", Some("  X\t")), "X", "a", n);
    assert_eq!(
        (title(&b, "a").as_deref(), title(&b, "b")),
        (Some("X"), None),
        "{n}"
    );
    assert!(b.set_session_title("b", Some("Y")).unwrap(), "{n}");
    assert_in_use(b.set_session_title("b", Some("X")), "X", "a", n);
    assert_eq!(
        title(&b, "b").as_deref(),
        Some("Y"),
        "{n}: a loser keeps its own"
    );

    assert!(b.set_session_title("a", Some("a  b")).unwrap(), "{n}");
    assert_eq!(title(&b, "a").as_deref(), Some("a b"), "{n}");
    for spelling in ["a b", "a\tb", " a\u{a0}b ", "a\u{200b} b", "a\n\nb"] {
        assert_in_use(b.set_session_title("b", Some(spelling)), "a b", "a", n);
        assert_eq!(title(&b, "b").as_deref(), Some("Y"), "{n}: {spelling:?}");
    }

    assert!(b.set_session_title("upper", Some("Proj")).unwrap(), "{n}");
    assert!(b.set_session_title("lower", Some("proj")).unwrap(), "{n}");
    let titles = (title(&b, "upper"), title(&b, "lower"));
    assert_eq!(titles, (Some("Proj".into()), Some("proj".into())), "{n}");
    let found = b.resolve_session_by_title("proj").unwrap();
    assert_eq!(found.as_deref(), Some("lower"), "{n}");
}

/// `api.md` §6.2's transfer: a title moves down a chain of compressions
/// to the session taking it; a parent ended otherwise, a live parent, a
/// walk broken by a live session and a descendant all keep theirs.
pub fn a_title_moves_down_a_compression_chain_only_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    let s = &*b.store;
    let set = |id, title| b.set_session_title(id, Some(title)).unwrap();
    sessions(&b, &["root", "other", "fork", "live", "g"]);
    assert!(set("root", "Base"), "{n}");
    b.end_session("root", "compression").unwrap();
    add_child(s, "tip", "root");
    assert!(set("tip", "Base #2"), "{n}");
    assert!(set("tip", "Base"), "{n}");
    assert_eq!(
        (title(&b, "root"), title(&b, "tip").as_deref()),
        (None, Some("Base")),
        "{n}"
    );
    assert_in_use(b.set_session_title("other", Some("Base")), "Base", "tip", n);
    assert_eq!(
        (title(&b, "other"), title(&b, "tip").as_deref()),
        (None, Some("Base")),
        "{n}"
    );

    // root (compression) → tip (compression) → leaf: the grandparent's
    // title moves; the root cannot take it back from a descendant.
    assert!(set("root", "Chain"), "{n}");
    b.end_session("tip", "compression").unwrap();
    add_child(s, "leaf", "tip");
    assert!(set("leaf", "Chain"), "{n}");
    assert_eq!(
        (title(&b, "root"), title(&b, "leaf").as_deref()),
        (None, Some("Chain")),
        "{n}"
    );
    assert_in_use(
        b.set_session_title("root", Some("Chain")),
        "Chain",
        "leaf",
        n,
    );

    assert!(set("fork", "Fork"), "{n}");
    b.end_session("fork", "branched").unwrap();
    add_child(s, "branch", "fork");
    assert_in_use(
        b.set_session_title("branch", Some("Fork")),
        "Fork",
        "fork",
        n,
    );
    assert!(set("live", "Live"), "{n}");
    add_child(s, "live_child", "live");
    assert_in_use(
        b.set_session_title("live_child", Some("Live")),
        "Live",
        "live",
        n,
    );
    // g (compression) → p (live) → c: c cannot take g's title.
    assert!(set("g", "Grand"), "{n}");
    b.end_session("g", "compression").unwrap();
    add_child(s, "p", "g");
    add_child(s, "c", "p");
    assert_in_use(b.set_session_title("c", Some("Grand")), "Grand", "g", n);
    for (id, kept) in [("fork", "Fork"), ("live", "Live"), ("g", "Grand")] {
        assert_eq!(title(&b, id).as_deref(), Some(kept), "{n}");
    }
}

/// Over 100 code points (after trimming) is `InvalidInput` with the
/// original's message, checked before anything else, and writes nothing;
/// an automatic title is set only on an untitled session, still checked
/// for uniqueness there, and takes a compression ancestor's title.
pub fn long_titles_are_refused_and_automatic_titles_fill_only_untitled_sessions_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let n = b.name();
    let s = &*b.store;
    sessions(&b, &["s", "auto", "other", "empty", "root"]);
    b.set_session_title("s", Some("Keep me")).unwrap();
    let long = [
        "a".repeat(101),
        "😀".repeat(101),
        format!("  {}  ", "b".repeat(101)),
    ];
    for long in long {
        let error = b.set_session_title("s", Some(&long)).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}: {error}");
        assert_eq!(
            error.to_string(),
            "Title too long (101 chars, max 100)",
            "{n}"
        );
        assert_eq!(title(&b, "s").as_deref(), Some("Keep me"), "{n}");
    }
    let error = b.set_session_title("missing", Some(&"c".repeat(101)));
    assert_eq!(error.unwrap_err().kind(), ErrorKind::InvalidInput, "{n}");
    let error = b.set_auto_title_if_empty("auto", &"d".repeat(101));
    assert_eq!(error.unwrap_err().kind(), ErrorKind::InvalidInput, "{n}");
    assert_eq!(title(&b, "auto"), None, "{n}");

    assert!(
        b.set_auto_title_if_empty("auto", "  First   auto ")
            .unwrap(),
        "{n}"
    );
    assert!(
        !b.set_auto_title_if_empty("auto", "Second auto").unwrap(),
        "{n}"
    );
    assert!(
        !b.set_auto_title_if_empty("missing", "Whatever").unwrap(),
        "{n}"
    );
    assert_eq!(title(&b, "missing"), None, "{n}");
    b.set_session_title("other", Some("Taken")).unwrap();
    assert!(!b.set_auto_title_if_empty("auto", "Taken").unwrap(), "{n}");
    assert_eq!(title(&b, "auto").as_deref(), Some("First auto"), "{n}");
    assert_in_use(
        b.set_auto_title_if_empty("empty", "Taken"),
        "Taken",
        "other",
        n,
    );
    assert_eq!(title(&b, "empty"), None, "{n}");

    b.set_session_title("root", Some("Moved")).unwrap();
    b.end_session("root", "compression").unwrap();
    add_child(s, "tip", "root");
    assert!(b.set_auto_title_if_empty("tip", "Moved").unwrap(), "{n}");
    assert_eq!(
        (title(&b, "root"), title(&b, "tip").as_deref()),
        (None, Some("Moved")),
        "{n}"
    );
}

/// The next title of a lineage, set on a continuation and resolved back
/// from the base title (`api.md` §6.3–6.4).
pub fn lineage_titles_number_and_resolve_round_trip_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    sessions(&b, &["root"]);
    let next = |base| b.get_next_title_in_lineage(base).unwrap();
    assert_eq!(next("Docker fix"), "Docker fix", "{n}");
    b.set_session_title("root", Some("Docker fix")).unwrap();
    b.end_session("root", "compression").unwrap();
    add_child(&*b.store, "cont", "root");
    assert_eq!(next("Docker fix"), "Docker fix #2", "{n}");
    b.set_session_title("cont", Some(&next("Docker fix")))
        .unwrap();
    let resolved = b.resolve_session_by_title("Docker fix").unwrap();
    assert_eq!(resolved.as_deref(), Some("cont"), "{n}");
    assert_eq!(next("Docker fix #2"), "Docker fix #3", "{n}");
    assert_eq!(b.lineage_root("cont").unwrap(), "root", "{n}");
    assert_eq!(b.resolve_session_by_title("Nope").unwrap(), None, "{n}");
}
