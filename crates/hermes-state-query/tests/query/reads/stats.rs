//! `api.md` §3.4: totals per model and top sessions; usage per model and task.

use hermes_state_query::stats::{
    ModelTotals, TopSession, UsageAttribution, model_totals, top_sessions, usage_by_model_and_task,
};
use hermes_state_schema::rusqlite::params;

use crate::common::Db;

/// `(id, model, input_tokens, output_tokens, estimated_cost_usd)`.
type SessionRow = (&'static str, Option<&'static str>, i64, i64, Option<f64>);

/// `(session, model, provider, task, api calls, in, out, cache read, cache
/// write, reasoning, estimated cost, actual cost)`.
type UsageRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    f64,
    f64,
);

/// The §3.4 example: (gpt, 10/5, 0.1), (gpt, 1/1, NULL), (claude, 100/50,
/// 0.05), (NULL model, 9/9, 9.0).
pub fn example() -> Db {
    let db = Db::new();
    let rows: [SessionRow; 4] = [
        ("g1", Some("gpt"), 10, 5, Some(0.1)),
        ("g2", Some("gpt"), 1, 1, None),
        ("c1", Some("claude"), 100, 50, Some(0.05)),
        ("n1", None, 9, 9, Some(9.0)),
    ];
    for (i, (id, model, input, output, cost)) in rows.into_iter().enumerate() {
        db.exec(
            "INSERT INTO sessions (id, source, started_at, model, input_tokens, output_tokens, estimated_cost_usd)
             VALUES (?1, 'cli', ?2, ?3, ?4, ?5, ?6)",
            params![id, 100.0 + i as f64, model, input, output, cost],
        );
    }
    db
}

fn totals(model: &str, count: i64, input: i64, output: i64, cost: Option<f64>) -> ModelTotals {
    ModelTotals {
        model: model.to_owned(),
        session_count: count,
        total_input: Some(input),
        total_output: Some(output),
        total_cost: cost,
        total_cache_read: Some(0),
        total_cache_write: Some(0),
        total_reasoning: Some(0),
    }
}

#[test]
fn model_totals_example_of_3_4() {
    let db = example();
    assert_eq!(
        model_totals(&db.conn).expect("model_totals"),
        vec![
            totals("gpt", 2, 11, 6, Some(0.1)),
            totals("claude", 1, 100, 50, Some(0.05)),
        ]
    );
}

#[test]
fn top_sessions_example_of_3_4() {
    let db = example();
    let top = top_sessions(&db.conn, 10).expect("top_sessions");
    let tokens: Vec<Option<i64>> = top.iter().map(|t| t.total_tokens).collect();
    assert_eq!(tokens, [Some(150), Some(18), Some(15), Some(2)]);
    assert_eq!(
        top,
        vec![
            TopSession {
                id: "c1".into(),
                title: None,
                model: Some("claude".into()),
                total_tokens: Some(150),
                estimated_cost_usd: Some(0.05),
            },
            TopSession {
                id: "n1".into(),
                title: None,
                model: None,
                total_tokens: Some(18),
                estimated_cost_usd: Some(9.0),
            },
            TopSession {
                id: "g1".into(),
                title: None,
                model: Some("gpt".into()),
                total_tokens: Some(15),
                estimated_cost_usd: Some(0.1),
            },
            TopSession {
                id: "g2".into(),
                title: None,
                model: Some("gpt".into()),
                total_tokens: Some(2),
                estimated_cost_usd: None,
            },
        ]
    );
    let ids: Vec<String> = top_sessions(&db.conn, 2)
        .expect("top_sessions")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, ["c1", "n1"]);
}

#[test]
fn sums_of_only_nulls_are_null_and_sort_last() {
    let db = example();
    db.exec(
        "INSERT INTO sessions (id, source, started_at, model, input_tokens, output_tokens, estimated_cost_usd, cache_read_tokens, reasoning_tokens)
         VALUES ('x1', 'cli', 1.0, 'cheap', NULL, 4, NULL, 7, 3)",
        [],
    );
    let all = model_totals(&db.conn).expect("model_totals");
    let models: Vec<&str> = all.iter().map(|t| t.model.as_str()).collect();
    assert_eq!(
        models,
        ["gpt", "claude", "cheap"],
        "NULL cost last under DESC"
    );
    assert_eq!(
        all[2],
        ModelTotals {
            model: "cheap".into(),
            session_count: 1,
            total_input: None,
            total_output: Some(4),
            total_cost: None,
            total_cache_read: Some(7),
            total_cache_write: Some(0),
            total_reasoning: Some(3),
        }
    );
    // NULL + 4 is NULL: the session sorts after every counted one.
    let top = top_sessions(&db.conn, 10).expect("top_sessions");
    assert_eq!(top.last().map(|t| t.id.as_str()), Some("x1"));
    assert_eq!(top.last().and_then(|t| t.total_tokens), None);
}

/// Hand-inserted `session_model_usage` rows: two models, tasks `''`,
/// `vision`, `compression`, `title`, over two sessions.
pub fn with_usage() -> Db {
    let db = Db::new();
    db.session("s1", 1.0);
    db.session("s2", 2.0);
    let rows: [UsageRow; 6] = [
        ("s1", "gpt", "", "", 2, 100, 10, 1, 2, 3, 0.5, 0.4),
        ("s2", "gpt", "openrouter", "", 1, 50, 5, 4, 0, 1, 0.25, 0.0),
        ("s1", "gpt", "", "vision", 1, 7, 3, 0, 0, 0, 0.01, 0.0),
        (
            "s1",
            "claude",
            "",
            "compression",
            1,
            20,
            4,
            0,
            0,
            0,
            1.0,
            0.0,
        ),
        ("s2", "claude", "", "", 3, 30, 6, 0, 0, 0, 0.0, 0.0),
        ("s2", "gpt", "", "title", 1, 5, 1, 0, 0, 0, 0.0, 0.0),
    ];
    for (
        session,
        model,
        provider,
        task,
        api,
        input,
        output,
        cache_r,
        cache_w,
        reasoning,
        est,
        actual,
    ) in rows
    {
        db.exec(
            "INSERT INTO session_model_usage (session_id, model, billing_provider, task, api_call_count,
                 input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
                 estimated_cost_usd, actual_cost_usd, first_seen, last_seen)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1.0, 1.0)",
            params![session, model, provider, task, api, input, output, cache_r, cache_w, reasoning, est, actual],
        );
    }
    db
}

#[allow(clippy::too_many_arguments)]
fn usage(
    model: &str,
    task: &str,
    sessions: i64,
    api: i64,
    tokens: [i64; 5],
    est: f64,
    actual: f64,
) -> UsageAttribution {
    UsageAttribution {
        model: model.into(),
        task: task.into(),
        session_count: sessions,
        api_call_count: api,
        input_tokens: tokens[0],
        output_tokens: tokens[1],
        cache_read_tokens: tokens[2],
        cache_write_tokens: tokens[3],
        reasoning_tokens: tokens[4],
        estimated_cost_usd: est,
        actual_cost_usd: actual,
    }
}

#[test]
fn usage_by_model_and_task_groups_routes_together() {
    let db = with_usage();
    assert_eq!(
        usage_by_model_and_task(&db.conn).expect("usage"),
        vec![
            usage("claude", "compression", 1, 1, [20, 4, 0, 0, 0], 1.0, 0.0),
            // Two routes of gpt's main loop, over two sessions.
            usage("gpt", "", 2, 3, [150, 15, 5, 2, 4], 0.75, 0.4),
            usage("gpt", "vision", 1, 1, [7, 3, 0, 0, 0], 0.01, 0.0),
            // Equal cost: by model, then task.
            usage("claude", "", 1, 3, [30, 6, 0, 0, 0], 0.0, 0.0),
            usage("gpt", "title", 1, 1, [5, 1, 0, 0, 0], 0.0, 0.0),
        ]
    );
}

#[test]
fn usage_of_an_empty_store_is_empty() {
    let db = Db::new();
    assert!(usage_by_model_and_task(&db.conn).expect("usage").is_empty());
    assert!(model_totals(&db.conn).expect("totals").is_empty());
    assert!(top_sessions(&db.conn, 10).expect("top").is_empty());
}
