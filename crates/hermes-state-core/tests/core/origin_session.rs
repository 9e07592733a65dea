//! Which live gateway session an origin names (`find_session_by_origin`),
//! as a table of candidates (newest first) and callers.

use hermes_state_core::lookups::origin_session;

/// Candidates `(id, user_id)` newest first, the caller's user, the answer.
type Case = (
    &'static [(&'static str, &'static str)],
    Option<&'static str>,
    Option<&'static str>,
);

fn rows(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(id, u)| ((*id).to_owned(), (*u).to_owned()))
        .collect()
}

#[test]
fn the_origin_rule_table() {
    let cases: [Case; 8] = [
        (&[], None, None),
        (&[], Some("u1"), None),
        (&[("new", "u1"), ("old", "u2")], Some("u2"), Some("old")),
        (&[("new", "u1"), ("old", "u2")], Some("u3"), None),
        (&[("only", "u1")], Some("u3"), Some("only")),
        (&[("new", "u1"), ("old", "u2")], None, None),
        (
            &[("new", "u1"), ("old", " u1 "), ("older", "")],
            None,
            Some("new"),
        ),
        (&[("new", "u1"), ("old", "u2")], Some(""), None),
    ];
    for (candidates, user, expected) in cases {
        assert_eq!(
            origin_session(&rows(candidates), user).as_deref(),
            expected,
            "{candidates:?} for {user:?}"
        );
    }
}
