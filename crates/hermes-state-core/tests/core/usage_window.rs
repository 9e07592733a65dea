//! The `api.md` §3.4 aggregations over a window's sessions: the rules of the
//! stores' SQL (NULL sums, cost order with unknown costs last, sessions
//! without a model left out; the most tokens first).

use hermes_state_core::usage_window::{model_totals, top_sessions};
use hermes_state_types::Session;

fn session(
    id: &str,
    model: Option<&str>,
    tokens: Option<(i64, i64)>,
    cost: Option<f64>,
) -> Session {
    Session {
        id: id.into(),
        model: model.map(Into::into),
        input_tokens: tokens.map(|t| t.0),
        output_tokens: tokens.map(|t| t.1),
        cache_read_tokens: tokens.map(|_| 1),
        estimated_cost_usd: cost,
        ..Session::default()
    }
}

#[test]
fn totals_per_model_sum_as_sql_and_sort_by_cost_unknown_last() {
    let sessions = [
        session("a", Some("big"), Some((100, 10)), Some(0.5)),
        session("b", Some("big"), Some((300, 30)), Some(0.25)),
        session("c", Some("small"), Some((5, 1)), Some(0.01)),
        session("d", Some("uncosted"), None, None),
        session("e", Some("free"), Some((50, 0)), Some(0.0)),
        session("f", None, Some((999, 999)), Some(9.0)),
    ];
    let totals = model_totals(&sessions);
    let models: Vec<_> = totals.iter().map(|t| t.model.as_str()).collect();
    assert_eq!(models, ["big", "small", "free", "uncosted"]);
    let big = &totals[0];
    assert_eq!(
        (
            big.session_count,
            big.total_input,
            big.total_output,
            big.total_cost
        ),
        (2, Some(400), Some(40), Some(0.75))
    );
    assert_eq!(
        (big.total_cache_read, big.total_cache_write),
        (Some(2), None)
    );
    let uncosted = &totals[3];
    assert_eq!(
        (
            uncosted.session_count,
            uncosted.total_input,
            uncosted.total_cost
        ),
        (1, None, None),
        "a sum of NULLs is NULL"
    );
    assert!(model_totals(&[]).is_empty());
}

#[test]
fn top_sessions_are_the_most_tokens_first_unknown_last() {
    let sessions = [
        session("small", Some("m"), Some((5, 1)), None),
        session("unknown", None, None, Some(1.0)),
        session("big", Some("m"), Some((300, 30)), Some(0.25)),
        session("tie", Some("m"), Some((6, 0)), None),
    ];
    let top = top_sessions(&sessions, 10);
    let ids: Vec<_> = top.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["big", "small", "tie", "unknown"],
        "ties keep their order"
    );
    assert_eq!(top[0].total_tokens, Some(330));
    assert_eq!(top[3].total_tokens, None);
    let two: Vec<_> = top_sessions(&sessions, 2)
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(two, ["big", "small"]);
}
