//! Token and cost accounting through the seam (`api.md` §3.1–§3.3): the
//! measured sequence of §3.1 and the auxiliary rows of §3.2, with the
//! `session_model_usage` rows read back raw from each backend.

use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

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

pub fn token_counts_follow_the_measured_sequence_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let mut created = NewSession::new("s", "cli");
    created.model = Some("m-initial".into());
    s.create_session(&created).unwrap();

    // 1. The first accounted route replaces the model it was created with.
    s.update_token_counts(
        "s",
        &TokenUpdate {
            input_tokens: 100,
            output_tokens: 20,
            model: Some("m-real".into()),
            billing_provider: Some("openrouter".into()),
            billing_base_url: Some("https://or".into()),
            billing_mode: Some("api".into()),
            cache_read_tokens: 5,
            cache_write_tokens: 2,
            reasoning_tokens: 1,
            estimated_cost_usd: Some(0.01),
            cost_status: Some("estimated".into()),
            cost_source: Some("table".into()),
            pricing_version: Some("v1".into()),
            api_call_count: 1,
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    let row = s.get_session("s").unwrap().unwrap();
    assert_eq!(row.model.as_deref(), Some("m-real"), "{n}");
    assert_eq!(
        (
            row.input_tokens,
            row.output_tokens,
            row.cache_read_tokens,
            row.cache_write_tokens,
            row.reasoning_tokens
        ),
        (Some(100), Some(20), Some(5), Some(2), Some(1)),
        "{n}"
    );
    assert_eq!(
        (row.estimated_cost_usd, row.actual_cost_usd),
        (Some(0.01), None),
        "{n}"
    );
    assert_eq!(
        (
            row.billing_provider.as_deref(),
            row.billing_base_url.as_deref(),
            row.billing_mode.as_deref()
        ),
        (Some("openrouter"), Some("https://or"), Some("api")),
        "{n}"
    );
    assert_eq!(
        (
            row.cost_status.as_deref(),
            row.cost_source.as_deref(),
            row.pricing_version.as_deref()
        ),
        (Some("estimated"), Some("table"), Some("v1")),
        "{n}"
    );
    assert_eq!(row.api_call_count, Some(1), "{n}");
    let real = key("m-real", "openrouter", "https://or", "api", "");
    assert_eq!(
        usage_rows(&b, "s"),
        [(
            real.clone(),
            1,
            [100, 20, 5, 2, 1],
            0.01,
            0.0,
            Some("estimated".into()),
            Some("table".into())
        )],
        "{n}"
    );

    // 2. Another model: the session keeps its route; the usage row
    // borrows the session's base URL and mode.
    s.update_token_counts(
        "s",
        &TokenUpdate {
            input_tokens: 50,
            output_tokens: 10,
            model: Some("m-other".into()),
            billing_provider: Some("anthropic".into()),
            actual_cost_usd: Some(0.002),
            api_call_count: 1,
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    let row = s.get_session("s").unwrap().unwrap();
    assert_eq!(row.model.as_deref(), Some("m-real"), "{n}");
    assert_eq!(
        (row.input_tokens, row.output_tokens),
        (Some(150), Some(30)),
        "{n}"
    );
    assert_eq!(
        (row.actual_cost_usd, row.api_call_count),
        (Some(0.002), Some(2)),
        "{n}"
    );
    let other = key("m-other", "anthropic", "https://or", "api", "");
    let rows = usage_rows(&b, "s");
    assert_eq!(
        rows[0],
        (other.clone(), 1, [50, 10, 0, 0, 0], 0.0, 0.002, None, None),
        "{n}"
    );

    // 3. No model: the delta goes to the session's route.
    s.update_token_counts(
        "s",
        &TokenUpdate {
            input_tokens: 7,
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    assert_eq!(
        s.get_session("s").unwrap().unwrap().input_tokens,
        Some(157),
        "{n}"
    );
    let rows = usage_rows(&b, "s");
    assert_eq!(rows[1].0, real, "{n}");
    assert_eq!(rows[1].2, [107, 20, 5, 2, 1], "{n}");

    // 4. Absolute: counters set, model kept, no usage delta.
    s.update_token_counts(
        "s",
        &TokenUpdate {
            input_tokens: 1000,
            output_tokens: 500,
            model: Some("m-abs".into()),
            api_call_count: 9,
            absolute: true,
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    let row = s.get_session("s").unwrap().unwrap();
    assert_eq!(
        (
            row.input_tokens,
            row.output_tokens,
            row.cache_read_tokens,
            row.cache_write_tokens,
            row.reasoning_tokens
        ),
        (Some(1000), Some(500), Some(0), Some(0), Some(0)),
        "{n}"
    );
    assert_eq!(
        (row.estimated_cost_usd, row.api_call_count),
        (Some(0.0), Some(9)),
        "{n}"
    );
    assert_eq!(
        row.actual_cost_usd,
        Some(0.002),
        "{n}: an absolute call without actual keeps it"
    );
    assert_eq!(row.model.as_deref(), Some("m-real"), "{n}");
    assert_eq!(
        usage_rows(&b, "s"),
        rows,
        "{n}: absolute calls add no usage"
    );

    // 5. A missing session is created with source `unknown`.
    s.update_token_counts(
        "new",
        &TokenUpdate {
            input_tokens: 3,
            model: Some("mx".into()),
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    let row = s.get_session("new").unwrap().unwrap();
    assert_eq!(
        (
            row.source.as_str(),
            row.model.as_deref(),
            row.input_tokens,
            row.estimated_cost_usd
        ),
        ("unknown", Some("mx"), Some(3), Some(0.0)),
        "{n}"
    );
    assert_eq!(
        usage_rows(&b, "new"),
        [(
            key("mx", "", "", "", ""),
            0,
            [3, 0, 0, 0, 0],
            0.0,
            0.0,
            None,
            None
        )],
        "{n}"
    );

    // 6. A zero-usage call: the cost becomes 0.0, nothing else.
    s.create_session(&NewSession::new("fresh", "cli")).unwrap();
    s.update_token_counts(
        "fresh",
        &TokenUpdate {
            model: Some("other".into()),
            billing_provider: Some("p".into()),
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    let row = s.get_session("fresh").unwrap().unwrap();
    assert_eq!(row.estimated_cost_usd, Some(0.0), "{n}");
    assert_eq!(
        row.billing_provider, None,
        "{n}: the route counts only with usage"
    );
    assert_eq!(
        row.model.as_deref(),
        Some("other"),
        "{n}: ensure_session fills a NULL model"
    );
    assert!(usage_rows(&b, "fresh").is_empty(), "{n}");
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
}
