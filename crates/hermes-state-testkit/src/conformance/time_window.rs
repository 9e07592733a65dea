//! The core crate's `time_window` and `usage_window` on a store: the
//! sessions that started in a window, and the `api.md` §3.4 statistics over
//! them, which are the store's own aggregations when the window takes every
//! session.

use hermes_state_core::listing::{ListFilter, SessionListing};
use hermes_state_core::time_window::{TimeWindow, recent_sessions_in, sessions_started_in};
use hermes_state_core::usage_window::usage_report;
use hermes_state_types::{NewSession, TokenUpdate};

use super::{Backend, TestStore};
use crate::build::say_now;

/// (id, source, started_at, model, input, output, cost, messages)
type Row = (
    &'static str,
    &'static str,
    f64,
    Option<&'static str>,
    i64,
    i64,
    Option<f64>,
    usize,
);

const SESSIONS: &[Row] = &[
    ("a", "cli", 100.0, Some("big"), 100, 10, Some(0.5), 2),
    ("b", "telegram", 200.0, Some("big"), 300, 30, Some(0.25), 1),
    ("c", "cli", 300.0, Some("small"), 5, 1, Some(0.01), 0),
    ("d", "cli", 400.0, None, 1, 0, None, 3),
    ("e", "cli", 500.0, Some("uncosted"), 7, 7, None, 1),
];

fn fill(b: &TestStore) {
    let s = &b.store;
    for &(id, source, started, model, input, output, cost, messages) in SESSIONS {
        s.create_session(&NewSession::new(id, source)).unwrap();
        s.update_token_counts(
            id,
            &TokenUpdate {
                input_tokens: input,
                output_tokens: output,
                model: model.map(Into::into),
                estimated_cost_usd: cost,
                api_call_count: 1,
                ..TokenUpdate::default()
            },
        )
        .unwrap();
        for i in 0..messages {
            say_now(&**s, id, format!("m{i}"));
        }
        b.set_started(id, started);
    }
    // A model with no accounting: NULL cost, sorted last.
    let mut unaccounted = NewSession::new("f", "cli");
    unaccounted.model = Some("unaccounted".into());
    b.add(unaccounted, 600.0);
}

fn window(since: Option<f64>, until: Option<f64>) -> TimeWindow {
    TimeWindow { since, until }
}

pub fn the_sessions_of_a_window_are_read_newest_first_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    fill(&b);
    let ids = |rows: Vec<SessionListing>| -> Vec<String> {
        rows.into_iter().map(|r| r.session.id).collect()
    };
    let filter = |source: Option<&str>, limit, offset| ListFilter {
        source: source.map(Into::into),
        limit,
        offset,
    };
    let middle = window(Some(150.0), Some(400.0));
    let cases: &[(ListFilter, TimeWindow, &[&str])] = &[
        (filter(None, None, 0), middle, &["c", "b"]),
        (filter(None, Some(1), 1), middle, &["b"]),
        (filter(Some("cli"), None, 0), middle, &["c"]),
        (
            filter(None, None, 0),
            window(Some(400.0), None),
            &["f", "e", "d"],
        ),
        (filter(None, None, 0), window(None, Some(200.0)), &["a"]),
        (filter(None, Some(2), 0), TimeWindow::default(), &["f", "e"]),
    ];
    for (filter, window, expected) in cases {
        let got = ids(recent_sessions_in(s, filter, *window).unwrap());
        assert_eq!(&got, expected, "{n}: {filter:?} {window:?}");
    }
    let started: Vec<_> = sessions_started_in(s, Some("cli"), window(Some(100.0), None))
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(started, ["f", "e", "d", "c", "a"], "{n}");
}

pub fn a_window_of_every_session_reports_what_the_store_aggregates_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    fill(&b);
    let whole = usage_report(s, TimeWindow::default(), 3).unwrap();
    let windowed = usage_report(s, window(Some(0.0), None), 3).unwrap();
    assert_eq!(whole.models, windowed.models, "{n}");
    assert_eq!(whole.top_sessions, windowed.top_sessions, "{n}");
    assert_eq!((whole.sessions, whole.messages), (6, 7), "{n}");
    assert_eq!((windowed.sessions, windowed.messages), (6, 7), "{n}");
    assert_eq!(
        whole
            .models
            .last()
            .map(|m| (m.model.as_str(), m.total_cost)),
        Some(("unaccounted", None)),
        "{n}"
    );
    assert!(!whole.usage.is_empty(), "{n}");
    assert!(
        windowed.usage.is_empty(),
        "{n}: per-task rows carry no time"
    );

    let part = usage_report(s, window(Some(150.0), Some(400.0)), 1).unwrap();
    assert_eq!((part.sessions, part.messages), (2, 1), "{n}");
    let models: Vec<_> = part
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.session_count))
        .collect();
    assert_eq!(models, [("big", 1), ("small", 1)], "{n}");
    let top: Vec<_> = part.top_sessions.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(top, ["b"], "{n}");
}
