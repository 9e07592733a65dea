//! Token and cost accounting through the seam (`api.md` §3.1–§3.3): the
//! measured sequence of §3.1 and the auxiliary rows of §3.2, with the
//! `session_model_usage` rows read back raw from each backend.

use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

use serde_json::{Value, json};

use super::raw::{int, optional_text, real, text};
use super::{Backend, TestStore};

/// One `session_model_usage` row: key (model, provider, base_url, mode,
/// task), then api calls, the five token counts, estimated and actual cost,
/// cost status and source.
type UsageRow = (
    (String, String, String, String, String),
    i64,
    [i64; 5],
    f64,
    f64,
    Option<String>,
    Option<String>,
);

const USAGE_SQL: &str = "SELECT model, billing_provider, billing_base_url, billing_mode, task, \
     api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
     reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, cost_source \
     FROM session_model_usage WHERE session_id = '{id}' ORDER BY model, task";

fn usage_rows(b: &TestStore, session_id: &str) -> Vec<UsageRow> {
    b.query(&USAGE_SQL.replace("{id}", session_id))
        .iter()
        .map(|r| {
            (
                (
                    text(&r[0]),
                    text(&r[1]),
                    text(&r[2]),
                    text(&r[3]),
                    text(&r[4]),
                ),
                int(&r[5]),
                [int(&r[6]), int(&r[7]), int(&r[8]), int(&r[9]), int(&r[10])],
                real(&r[11]),
                real(&r[12]),
                optional_text(&r[13]),
                optional_text(&r[14]),
            )
        })
        .collect()
}

fn key(
    model: &str,
    provider: &str,
    base: &str,
    mode: &str,
    task: &str,
) -> (String, String, String, String, String) {
    (
        model.into(),
        provider.into(),
        base.into(),
        mode.into(),
        task.into(),
    )
}

/// The accounting columns of `sessions` the cases compare whole: model,
/// the five token counts, estimated and actual cost, the billing route,
/// API calls, cost status, source and pricing version, and the source.
const COUNTERS: [&str; 16] = [
    "model",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "actual_cost_usd",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "api_call_count",
    "cost_status",
    "cost_source",
    "pricing_version",
    "source",
];

fn counters(b: &TestStore, id: &str) -> Value {
    Value::Array(b.columns(id, &COUNTERS))
}

fn usage(
    key: [&str; 5],
    calls: i64,
    tokens: [i64; 5],
    costs: (f64, f64),
    status: Option<&str>,
    source: Option<&str>,
) -> UsageRow {
    let [model, provider, base, mode, task] = key;
    (
        (
            model.into(),
            provider.into(),
            base.into(),
            mode.into(),
            task.into(),
        ),
        calls,
        tokens,
        costs.0,
        costs.1,
        status.map(Into::into),
        source.map(Into::into),
    )
}

fn some(text: &str) -> Option<String> {
    Some(text.to_owned())
}

/// The measured sequence of `api.md` §3.1, each call followed by the
/// session's whole accounting row and its usage rows, and the
/// first-accounted-route rule: a route needs a provider and no earlier
/// calls, an actual cost alone is usage for it but writes no usage row.
pub fn token_counts_follow_the_measured_sequence_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for id in ["s", "fresh", "route"] {
        s.create_session(&NewSession::new(id, "cli").model("m-initial"))
            .unwrap();
    }
    for id in ["bare", "a"] {
        s.create_session(&NewSession::new(id, "cli")).unwrap();
    }
    let m_real = |input| {
        usage(
            ["m-real", "openrouter", "https://or", "api", ""],
            1,
            [input, 20, 5, 2, 1],
            (0.01, 0.0),
            Some("estimated"),
            Some("table"),
        )
    };
    let other = usage(
        ["m-other", "anthropic", "https://or", "api", ""],
        1,
        [50, 10, 0, 0, 0],
        (0.0, 0.002),
        None,
        None,
    );
    let (route, costs) = (
        ["openrouter", "https://or", "api"],
        ["estimated", "table", "v1"],
    );
    let row = |model: &str, tokens: [i64; 5], cost: (f64, Option<f64>), calls: i64| {
        json!([
            model, tokens[0], tokens[1], tokens[2], tokens[3], tokens[4], cost.0, cost.1, route[0],
            route[1], route[2], calls, costs[0], costs[1], costs[2], "cli"
        ])
    };
    let untouched = |model: &str, estimated: Option<f64>, source: &str| {
        json!([
            model, 0, 0, 0, 0, 0, estimated, null, null, null, null, 0, null, null, null, source
        ])
    };
    type Step = (
        &'static str,
        &'static str,
        TokenUpdate,
        Value,
        Vec<UsageRow>,
    );
    let steps: Vec<Step> = vec![
        (
            "the first accounted route replaces the model created with",
            "s",
            TokenUpdate {
                input_tokens: 100,
                output_tokens: 20,
                model: some("m-real"),
                billing_provider: some("openrouter"),
                billing_base_url: some("https://or"),
                billing_mode: some("api"),
                cache_read_tokens: 5,
                cache_write_tokens: 2,
                reasoning_tokens: 1,
                estimated_cost_usd: Some(0.01),
                cost_status: some("estimated"),
                cost_source: some("table"),
                pricing_version: some("v1"),
                api_call_count: 1,
                ..TokenUpdate::default()
            },
            row("m-real", [100, 20, 5, 2, 1], (0.01, None), 1),
            vec![m_real(100)],
        ),
        (
            "another model: the session keeps its route, the usage row borrows its base URL and mode",
            "s",
            TokenUpdate {
                input_tokens: 50,
                output_tokens: 10,
                model: some("m-other"),
                billing_provider: some("anthropic"),
                actual_cost_usd: Some(0.002),
                api_call_count: 1,
                ..TokenUpdate::default()
            },
            row("m-real", [150, 30, 5, 2, 1], (0.01, Some(0.002)), 2),
            vec![other.clone(), m_real(100)],
        ),
        (
            "no model: the delta goes to the session's route",
            "s",
            TokenUpdate {
                input_tokens: 7,
                ..TokenUpdate::default()
            },
            row("m-real", [157, 30, 5, 2, 1], (0.01, Some(0.002)), 2),
            vec![other.clone(), m_real(107)],
        ),
        (
            "absolute: counters set, model and actual cost kept, no usage delta",
            "s",
            TokenUpdate {
                input_tokens: 1000,
                output_tokens: 500,
                model: some("m-abs"),
                api_call_count: 9,
                absolute: true,
                ..TokenUpdate::default()
            },
            row("m-real", [1000, 500, 0, 0, 0], (0.0, Some(0.002)), 9),
            vec![other, m_real(107)],
        ),
        (
            "a missing session is created with source `unknown`",
            "new",
            TokenUpdate {
                input_tokens: 3,
                model: some("mx"),
                ..TokenUpdate::default()
            },
            json!([
                "mx", 3, 0, 0, 0, 0, 0.0, null, null, null, null, 0, null, null, null, "unknown"
            ]),
            vec![usage(
                ["mx", "", "", "", ""],
                0,
                [3, 0, 0, 0, 0],
                (0.0, 0.0),
                None,
                None,
            )],
        ),
        (
            "a zero-usage call only turns the estimated cost into a number",
            "fresh",
            TokenUpdate {
                model: some("other"),
                billing_provider: some("p"),
                ..TokenUpdate::default()
            },
            untouched("m-initial", Some(0.0), "cli"),
            vec![],
        ),
        (
            "ensure_session fills a NULL model; the route counts only with usage",
            "bare",
            TokenUpdate {
                model: some("other"),
                billing_provider: some("p"),
                ..TokenUpdate::default()
            },
            untouched("other", Some(0.0), "cli"),
            vec![],
        ),
        (
            "ensure_session fills a NULL model, even without a provider",
            "a",
            TokenUpdate {
                model: some("x"),
                ..TokenUpdate::default()
            },
            untouched("x", Some(0.0), "cli"),
            vec![],
        ),
        (
            "a model without a provider is no route; the usage row takes the call's model",
            "route",
            TokenUpdate {
                input_tokens: 1,
                model: some("m-real"),
                ..TokenUpdate::default()
            },
            json!([
                "m-initial",
                1,
                0,
                0,
                0,
                0,
                0.0,
                null,
                null,
                null,
                null,
                0,
                null,
                null,
                null,
                "cli"
            ]),
            vec![usage(
                ["m-real", "", "", "", ""],
                0,
                [1, 0, 0, 0, 0],
                (0.0, 0.0),
                None,
                None,
            )],
        ),
        (
            "an actual cost alone is usage for the route rule but writes no usage row",
            "route",
            TokenUpdate {
                model: some("m-paid"),
                billing_provider: some("prov"),
                billing_mode: some("sub"),
                actual_cost_usd: Some(0.5),
                ..TokenUpdate::default()
            },
            json!([
                "m-paid", 1, 0, 0, 0, 0, 0.0, 0.5, "prov", null, "sub", 0, null, null, null, "cli"
            ]),
            vec![usage(
                ["m-real", "", "", "", ""],
                0,
                [1, 0, 0, 0, 0],
                (0.0, 0.0),
                None,
                None,
            )],
        ),
    ];
    let mut first_seen = None;
    for (what, id, update, row, rows) in steps {
        s.update_token_counts(id, &update).unwrap();
        assert_eq!(counters(&b, id), row, "{n}: {what}");
        assert_eq!(usage_rows(&b, id), rows, "{n}: {what}");
        if id == "s" {
            let seen = b.query(
                "SELECT first_seen, last_seen FROM session_model_usage \
                 WHERE session_id = 's' AND model = 'm-real'",
            );
            let (first, last) = (real(&seen[0][0]), real(&seen[0][1]));
            assert!(first <= last, "{n}: {what}");
            assert_eq!(*first_seen.get_or_insert(first), first, "{n}: {what}");
        }
    }
}

pub fn auxiliary_usage_never_touches_the_session_counters_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let mut created = NewSession::new("s", "cli");
    created.model = Some("main".into());
    s.create_session(&created).unwrap();
    let vision = AuxiliaryUsage {
        task: "vision".into(),
        model: Some("v-model".into()),
        billing_provider: Some("openrouter".into()),
        input_tokens: 10,
        output_tokens: 2,
        estimated_cost_usd: Some(0.5),
        ..AuxiliaryUsage::default()
    };
    s.record_auxiliary_usage("s", &vision).unwrap();
    s.record_auxiliary_usage("s", &vision).unwrap();
    // No model or route given: nothing is borrowed from the session.
    s.record_auxiliary_usage(
        "s",
        &AuxiliaryUsage {
            task: "compression".into(),
            input_tokens: 4,
            ..AuxiliaryUsage::default()
        },
    )
    .unwrap();
    // Empty ids and tasks are ignored; a missing session is created.
    s.record_auxiliary_usage("", &vision).unwrap();
    s.record_auxiliary_usage("s", &AuxiliaryUsage::default())
        .unwrap();
    s.record_auxiliary_usage("ghost", &vision).unwrap();

    let row = s.get_session("s").unwrap().unwrap();
    assert_eq!(
        (
            row.input_tokens,
            row.output_tokens,
            row.api_call_count,
            row.estimated_cost_usd
        ),
        (Some(0), Some(0), Some(0), None),
        "{n}"
    );
    assert_eq!(
        usage_rows(&b, "s"),
        [
            (
                key("unknown", "", "", "", "compression"),
                1,
                [4, 0, 0, 0, 0],
                0.0,
                0.0,
                None,
                None
            ),
            (
                key("v-model", "openrouter", "", "", "vision"),
                2,
                [20, 4, 0, 0, 0],
                1.0,
                0.0,
                None,
                None
            ),
        ],
        "{n}"
    );
    assert_eq!(
        s.get_session("ghost").unwrap().unwrap().source,
        "unknown",
        "{n}"
    );
    assert_eq!(usage_rows(&b, "ghost").len(), 1, "{n}");

    // After a main-loop call too the counters never move; a task row
    // without a model is `unknown` with an empty route, every token kind
    // summed, and one with a route keeps it.
    s.create_session(&NewSession::new("m", "cli").model("m-initial"))
        .unwrap();
    let main = TokenUpdate {
        input_tokens: 10,
        model: some("m-main"),
        billing_provider: some("openrouter"),
        billing_base_url: some("https://or"),
        billing_mode: some("api"),
        api_call_count: 1,
        ..TokenUpdate::default()
    };
    s.update_token_counts("m", &main).unwrap();
    let before = counters(&b, "m");
    let every_kind = AuxiliaryUsage {
        task: "vision".into(),
        input_tokens: 11,
        output_tokens: 2,
        cache_read_tokens: 3,
        cache_write_tokens: 4,
        reasoning_tokens: 5,
        estimated_cost_usd: Some(0.25),
        ..AuxiliaryUsage::default()
    };
    let routed = AuxiliaryUsage {
        task: "compression".into(),
        model: some("gpt-small"),
        billing_provider: some("openai"),
        billing_base_url: some("https://oa"),
        input_tokens: 7,
        ..AuxiliaryUsage::default()
    };
    for aux in [&every_kind, &every_kind, &routed] {
        s.record_auxiliary_usage("m", aux).unwrap();
    }
    assert_eq!(counters(&b, "m"), before, "{n}");
    let none = (0.0, 0.0);
    assert_eq!(
        usage_rows(&b, "m"),
        [
            usage(
                ["gpt-small", "openai", "https://oa", "", "compression"],
                1,
                [7, 0, 0, 0, 0],
                none,
                None,
                None
            ),
            usage(
                ["m-main", "openrouter", "https://or", "api", ""],
                1,
                [10, 0, 0, 0, 0],
                none,
                None,
                None
            ),
            usage(
                ["unknown", "", "", "", "vision"],
                2,
                [22, 4, 6, 8, 10],
                (0.5, 0.0),
                None,
                None
            ),
        ],
        "{n}"
    );
    // A session created by a task row has untouched counters; an empty
    // task or id creates nothing.
    s.record_auxiliary_usage("fresh", &every_kind).unwrap();
    assert_eq!(
        counters(&b, "fresh"),
        json!([
            null, 0, 0, 0, 0, 0, null, null, null, null, null, 0, null, null, null, "unknown"
        ]),
        "{n}"
    );
    let no_task = AuxiliaryUsage {
        input_tokens: 5,
        ..AuxiliaryUsage::default()
    };
    s.record_auxiliary_usage("nobody", &no_task).unwrap();
    for id in ["nobody", ""] {
        assert_eq!(s.get_session(id).unwrap(), None, "{n}: {id:?}");
        assert!(usage_rows(&b, id).is_empty(), "{n}: {id:?}");
    }
}
