//! Token and cost statistics (`api.md` §3.4) through the seam.

use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

use super::Backend;

fn usage(input: i64, output: i64, model: &str, cost: Option<f64>) -> TokenUpdate {
    TokenUpdate {
        input_tokens: input,
        output_tokens: output,
        model: Some(model.into()),
        estimated_cost_usd: cost,
        api_call_count: 1,
        ..TokenUpdate::default()
    }
}

pub fn model_totals_top_sessions_and_usage_attribution_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.update_token_counts("a", &usage(100, 10, "big", Some(0.5)))
        .unwrap();
    s.update_token_counts("b", &usage(300, 30, "big", Some(0.25)))
        .unwrap();
    s.update_token_counts("c", &usage(5, 1, "small", Some(0.01)))
        .unwrap();
    s.update_token_counts("d", &usage(50, 0, "free", None))
        .unwrap();
    // A model whose only session has a NULL cost sorts last.
    s.create_session(&{
        let mut session = NewSession::new("e", "cli");
        session.model = Some("uncosted".into());
        session
    })
    .unwrap();
    s.create_session(&NewSession::new("no-model", "cli"))
        .unwrap();
    s.record_auxiliary_usage(
        "a",
        &AuxiliaryUsage {
            task: "vision".into(),
            model: Some("small".into()),
            input_tokens: 7,
            estimated_cost_usd: Some(0.02),
            ..AuxiliaryUsage::default()
        },
    )
    .unwrap();

    let totals = s.model_totals().unwrap();
    let models: Vec<_> = totals.iter().map(|t| t.model.as_str()).collect();
    // `d` was created by the accounting call with a zero cost: `free`
    // totals 0.0, `uncosted` NULL.
    assert_eq!(models, ["big", "small", "free", "uncosted"], "{n}");
    let big = &totals[0];
    assert_eq!(
        (
            big.session_count,
            big.total_input,
            big.total_output,
            big.total_cost
        ),
        (2, Some(400), Some(40), Some(0.75)),
        "{n}"
    );
    assert_eq!(
        (
            big.total_cache_read,
            big.total_cache_write,
            big.total_reasoning
        ),
        (Some(0), Some(0), Some(0)),
        "{n}"
    );
    assert_eq!(
        (totals[2].total_cost, totals[3].total_cost),
        (Some(0.0), None),
        "{n}"
    );

    let top = s.top_sessions(3).unwrap();
    let ids: Vec<_> = top.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["b", "a", "d"], "{n}");
    assert_eq!(
        (
            top[0].total_tokens,
            top[0].model.as_deref(),
            top[0].estimated_cost_usd
        ),
        (Some(330), Some("big"), Some(0.25)),
        "{n}"
    );
    assert_eq!(s.top_sessions(0).unwrap().len(), 0, "{n}");
    assert_eq!(s.top_sessions(100).unwrap().len(), 6, "{n}");

    let usage = s.usage_by_model_and_task().unwrap();
    let keys: Vec<_> = usage
        .iter()
        .map(|u| (u.model.as_str(), u.task.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("big", ""),
            ("small", "vision"),
            ("small", ""),
            ("free", "")
        ],
        "{n}"
    );
    let big = &usage[0];
    assert_eq!(
        (
            big.session_count,
            big.api_call_count,
            big.input_tokens,
            big.output_tokens
        ),
        (2, 2, 400, 40),
        "{n}"
    );
    assert_eq!(
        (big.estimated_cost_usd, big.actual_cost_usd),
        (0.75, 0.0),
        "{n}"
    );
    assert_eq!(
        (usage[1].input_tokens, usage[1].api_call_count),
        (7, 1),
        "{n}"
    );
    assert_eq!(usage[3].estimated_cost_usd, 0.0, "{n}");
}
