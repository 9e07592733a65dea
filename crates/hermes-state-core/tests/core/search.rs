//! `query_problem`: why a query can only give `[]`, from the query alone.
//! The problems of the spec's examples are checked against FTS5 itself in
//! the query crate's tests.

use hermes_state_core::search::query_problem;

/// A query with CJK characters is routed to quoted terms and a LIKE
/// scan, which never fail on syntax, so an empty answer means no match.
#[test]
fn cjk_queries_have_no_syntax_problem() {
    assert_eq!(query_problem("项目 50%"), None);
    assert_eq!(query_problem("a AND OR 日本"), None);
}

#[test]
fn the_message_names_the_error_and_the_searched_text() {
    let problem = query_problem("50%").expect("a problem");
    assert_eq!(
        problem.to_string(),
        "query cannot be parsed: fts5: syntax error near \"%\" (searched as \"50%\")"
    );
}
