//! `update_token_counts` and `record_auxiliary_usage` (`api.md` §3.1–3.3).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::{AuxiliaryUsage, NewSession, TokenUpdate};

use crate::common::{NULL, Store, i, r, t};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Sessions;

/// model, 5 token columns, estimated, actual, provider, base url, mode,
/// api_call_count, cost_status, cost_source, pricing_version, source.
const SESSION_COUNTERS: &str = "SELECT model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, billing_provider, billing_base_url, billing_mode, api_call_count, cost_status, cost_source, pricing_version, source FROM sessions WHERE id = ?1";

/// The key, then api_call_count, 5 token columns, estimated, actual, cost_status, cost_source.
const USAGE_ROWS: &str = "SELECT model, billing_provider, billing_base_url, billing_mode, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, cost_source FROM session_model_usage WHERE session_id = ?1 ORDER BY rowid";

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

#[allow(clippy::too_many_arguments)]
fn session_row(
    model: &str,
    tokens: [i64; 5],
    estimated: Sql,
    actual: Sql,
    route: [Sql; 3],
    api_calls: i64,
    costs: [Sql; 3],
    source: &str,
) -> Vec<Sql> {
    let mut row = vec![t(model)];
    row.extend(tokens.map(i));
    row.extend([estimated, actual]);
    row.extend(route);
    row.push(i(api_calls));
    row.extend(costs);
    row.push(t(source));
    row
}

fn usage_row(
    key: [&str; 5],
    api_calls: i64,
    tokens: [i64; 5],
    estimated: f64,
    actual: f64,
    status: Sql,
    source: Sql,
) -> Vec<Sql> {
    let mut row: Vec<Sql> = key.iter().map(|k| t(k)).collect();
    row.push(i(api_calls));
    row.extend(tokens.map(i));
    row.extend([r(estimated), r(actual), status, source]);
    row
}

/// One call of a sequence: what it is, the update, the sessions row after
/// (`SESSION_COUNTERS`), the usage rows after (`USAGE_ROWS`).
type Step = (&'static str, TokenUpdate, Vec<Sql>, Vec<Vec<Sql>>);

/// The measured 6-step sequence of §3.1, on a session created with model `m-initial`.
#[test]
fn update_token_counts_measured_sequence() {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("s", "cli").model("m-initial"))
        .expect("create");
    let route = || [t("openrouter"), t("https://or"), t("api")];
    let costs = || [t("estimated"), t("table"), t("v1")];
    let m_real = |input: i64| {
        usage_row(
            ["m-real", "openrouter", "https://or", "api", ""],
            1,
            [input, 20, 5, 2, 1],
            0.01,
            0.0,
            t("estimated"),
            t("table"),
        )
    };
    let m_other = usage_row(
        ["m-other", "anthropic", "https://or", "api", ""],
        1,
        [50, 10, 0, 0, 0],
        0.0,
        0.002,
        NULL,
        NULL,
    );

    let steps: Vec<Step> = vec![
        (
            "first accounted route",
            TokenUpdate {
                input_tokens: 100,
                output_tokens: 20,
                model: s("m-real"),
                billing_provider: s("openrouter"),
                billing_base_url: s("https://or"),
                billing_mode: s("api"),
                cache_read_tokens: 5,
                cache_write_tokens: 2,
                reasoning_tokens: 1,
                estimated_cost_usd: Some(0.01),
                cost_status: s("estimated"),
                cost_source: s("table"),
                pricing_version: s("v1"),
                api_call_count: 1,
                ..TokenUpdate::default()
            },
            session_row(
                "m-real",
                [100, 20, 5, 2, 1],
                r(0.01),
                NULL,
                route(),
                1,
                costs(),
                "cli",
            ),
            vec![m_real(100)],
        ),
        (
            "another model and provider",
            TokenUpdate {
                input_tokens: 50,
                output_tokens: 10,
                model: s("m-other"),
                billing_provider: s("anthropic"),
                actual_cost_usd: Some(0.002),
                api_call_count: 1,
                ..TokenUpdate::default()
            },
            session_row(
                "m-real",
                [150, 30, 5, 2, 1],
                r(0.01),
                r(0.002),
                route(),
                2,
                costs(),
                "cli",
            ),
            vec![m_real(100), m_other.clone()],
        ),
        (
            "route falls back to the session's",
            TokenUpdate {
                input_tokens: 7,
                ..TokenUpdate::default()
            },
            session_row(
                "m-real",
                [157, 30, 5, 2, 1],
                r(0.01),
                r(0.002),
                route(),
                2,
                costs(),
                "cli",
            ),
            vec![m_real(107), m_other.clone()],
        ),
        (
            "absolute",
            TokenUpdate {
                input_tokens: 1000,
                output_tokens: 500,
                model: s("m-abs"),
                api_call_count: 9,
                absolute: true,
                ..TokenUpdate::default()
            },
            session_row(
                "m-real",
                [1000, 500, 0, 0, 0],
                r(0.0),
                r(0.002),
                route(),
                9,
                costs(),
                "cli",
            ),
            vec![m_real(107), m_other.clone()],
        ),
    ];
    let mut first_seen: Option<Sql> = None;
    for (what, update, session, usage) in steps {
        store.db.update_token_counts("s", &update).expect(what);
        assert_eq!(
            store.row(SESSION_COUNTERS, ["s"]),
            session,
            "sessions row after: {what}"
        );
        assert_eq!(
            store.rows(USAGE_ROWS, ["s"]),
            usage,
            "usage rows after: {what}"
        );
        let seen = store.row(
            "SELECT first_seen, last_seen FROM session_model_usage WHERE session_id = 's' AND model = 'm-real'",
            [],
        );
        let (Sql::Real(first), Sql::Real(last)) = (&seen[0], &seen[1]) else {
            panic!("first_seen/last_seen are REAL: {seen:?}");
        };
        assert!(first <= last, "{what}: first_seen <= last_seen");
        let first = first_seen.get_or_insert_with(|| seen[0].clone());
        assert_eq!(first, &seen[0], "{what}: first_seen keeps the first value");
    }

    // Step 5: a missing session is created with source `unknown`.
    store
        .db
        .update_token_counts(
            "new",
            &TokenUpdate {
                input_tokens: 3,
                model: s("mx"),
                ..TokenUpdate::default()
            },
        )
        .expect("new");
    assert_eq!(
        store.row(SESSION_COUNTERS, ["new"]),
        session_row(
            "mx",
            [3, 0, 0, 0, 0],
            r(0.0),
            NULL,
            [NULL, NULL, NULL],
            0,
            [NULL, NULL, NULL],
            "unknown",
        )
    );
    assert_eq!(
        store.rows(USAGE_ROWS, ["new"]),
        vec![usage_row(
            ["mx", "", "", "", ""],
            0,
            [3, 0, 0, 0, 0],
            0.0,
            0.0,
            NULL,
            NULL
        )]
    );
}

/// Step 6 of §3.1, and the measured "model-less session" note of step 1.
#[test]
fn zero_usage_call_only_turns_estimated_cost_into_a_number() {
    let store = Store::new();
    let zero = TokenUpdate {
        model: s("other"),
        billing_provider: s("p"),
        ..TokenUpdate::default()
    };
    // A fresh row that has a model: only estimated_cost_usd changes.
    store
        .db
        .create_session(&NewSession::new("fresh", "cli").model("m-initial"))
        .expect("create");
    store.db.update_token_counts("fresh", &zero).expect("zero");
    assert_eq!(
        store.row(SESSION_COUNTERS, ["fresh"]),
        session_row(
            "m-initial",
            [0; 5],
            r(0.0),
            NULL,
            [NULL, NULL, NULL],
            0,
            [NULL, NULL, NULL],
            "cli",
        )
    );
    // A model-less row gets the call's model through ensure_session, even without usage.
    store.session("a");
    store
        .db
        .update_token_counts(
            "a",
            &TokenUpdate {
                model: s("x"),
                ..TokenUpdate::default()
            },
        )
        .expect("model only");
    assert_eq!(
        store.row(SESSION_COUNTERS, ["a"]),
        session_row(
            "x",
            [0; 5],
            r(0.0),
            NULL,
            [NULL, NULL, NULL],
            0,
            [NULL, NULL, NULL],
            "cli",
        )
    );
    assert_eq!(
        store.count("SELECT count(*) FROM session_model_usage", []),
        0,
        "zero-usage calls write no usage row"
    );
}

#[test]
fn first_accounted_route_needs_a_provider_and_no_earlier_calls() {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("s", "cli").model("m-initial"))
        .expect("create");
    // A model without a provider does not replace the session's model; the
    // usage row is keyed by the argument's model.
    store
        .db
        .update_token_counts(
            "s",
            &TokenUpdate {
                input_tokens: 1,
                model: s("m-real"),
                ..TokenUpdate::default()
            },
        )
        .expect("update");
    assert_eq!(
        store.row(
            "SELECT model, billing_provider FROM sessions WHERE id = 's'",
            []
        ),
        vec![t("m-initial"), NULL]
    );
    assert_eq!(
        store.rows(USAGE_ROWS, ["s"]),
        vec![usage_row(
            ["m-real", "", "", "", ""],
            0,
            [1, 0, 0, 0, 0],
            0.0,
            0.0,
            NULL,
            NULL
        )]
    );
    // An actual cost alone is usage for the route rule, but writes no usage row.
    store
        .db
        .update_token_counts(
            "s",
            &TokenUpdate {
                model: s("m-paid"),
                billing_provider: s("prov"),
                billing_mode: s("sub"),
                actual_cost_usd: Some(0.5),
                ..TokenUpdate::default()
            },
        )
        .expect("actual only");
    assert_eq!(
        store.row(
            "SELECT model, billing_provider, billing_base_url, billing_mode, actual_cost_usd, api_call_count FROM sessions WHERE id = 's'",
            []
        ),
        vec![t("m-paid"), t("prov"), NULL, t("sub"), r(0.5), i(0)]
    );
    assert_eq!(store.rows(USAGE_ROWS, ["s"]).len(), 1);
}

#[test]
fn record_auxiliary_usage_writes_task_rows_and_leaves_session_counters() {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("s", "cli").model("m-initial"))
        .expect("create");
    store
        .db
        .update_token_counts(
            "s",
            &TokenUpdate {
                input_tokens: 10,
                model: s("m-main"),
                billing_provider: s("openrouter"),
                billing_base_url: s("https://or"),
                billing_mode: s("api"),
                api_call_count: 1,
                ..TokenUpdate::default()
            },
        )
        .expect("main loop");
    let counters_before = store.row(SESSION_COUNTERS, ["s"]);

    let vision = AuxiliaryUsage {
        task: "vision".to_owned(),
        input_tokens: 11,
        output_tokens: 2,
        cache_read_tokens: 3,
        cache_write_tokens: 4,
        reasoning_tokens: 5,
        estimated_cost_usd: Some(0.25),
        ..AuxiliaryUsage::default()
    };
    store.db.record_auxiliary_usage("s", &vision).expect("aux");
    store
        .db
        .record_auxiliary_usage("s", &vision)
        .expect("aux again");
    store
        .db
        .record_auxiliary_usage(
            "s",
            &AuxiliaryUsage {
                task: "compression".to_owned(),
                model: s("gpt-small"),
                billing_provider: s("openai"),
                billing_base_url: s("https://oa"),
                input_tokens: 7,
                ..AuxiliaryUsage::default()
            },
        )
        .expect("aux with a route");

    assert_eq!(
        store.row(SESSION_COUNTERS, ["s"]),
        counters_before,
        "auxiliary usage never touches the session's counters"
    );
    assert_eq!(
        store.rows(USAGE_ROWS, ["s"]),
        vec![
            usage_row(
                ["m-main", "openrouter", "https://or", "api", ""],
                1,
                [10, 0, 0, 0, 0],
                0.0,
                0.0,
                NULL,
                NULL
            ),
            // Not borrowed from the session: model `unknown`, empty route.
            usage_row(
                ["unknown", "", "", "", "vision"],
                2,
                [22, 4, 6, 8, 10],
                0.5,
                0.0,
                NULL,
                NULL
            ),
            usage_row(
                ["gpt-small", "openai", "https://oa", "", "compression"],
                1,
                [7, 0, 0, 0, 0],
                0.0,
                0.0,
                NULL,
                NULL
            ),
        ]
    );

    // A missing session is created with source `unknown`, counters untouched.
    store
        .db
        .record_auxiliary_usage("fresh", &vision)
        .expect("aux on a missing session");
    assert_eq!(
        store.row(SESSION_COUNTERS, ["fresh"]),
        vec![
            NULL,
            i(0),
            i(0),
            i(0),
            i(0),
            i(0),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            i(0),
            NULL,
            NULL,
            NULL,
            t("unknown"),
        ]
    );

    // Empty task or session id: no-op, nothing created.
    let no_task = AuxiliaryUsage {
        input_tokens: 5,
        ..AuxiliaryUsage::default()
    };
    store
        .db
        .record_auxiliary_usage("ghost", &no_task)
        .expect("empty task");
    store
        .db
        .record_auxiliary_usage("", &vision)
        .expect("empty id");
    assert_eq!(
        store.count(
            "SELECT count(*) FROM sessions WHERE id IN ('ghost', '')",
            []
        ),
        0
    );
    assert_eq!(
        store.count(
            "SELECT count(*) FROM session_model_usage WHERE session_id IN ('ghost', '')",
            []
        ),
        0
    );
}
