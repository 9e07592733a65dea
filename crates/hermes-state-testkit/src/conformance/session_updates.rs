//! The other session updates (`api.md` §2.5) through the seam: prompt,
//! model, billing route, workspace, flags, the compression lineage's
//! archive and pin flags, and the compression bookkeeping.

use hermes_state_types::NewSession;
use serde_json::{Value, json};

use super::Backend;
use crate::build::child;

pub fn prompt_model_meta_route_and_cwd_updates_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("a", "cli").model("m0").system_prompt("old"))
        .unwrap();
    s.create_session(&NewSession::new("", "cli")).unwrap();
    let cols = |id: &str, columns: &[&str]| b.columns(id, columns);

    s.update_system_prompt("a", "be brief").unwrap();
    s.update_session_meta("a", Some(r#"{"b":1, "a":2}"#), None)
        .unwrap();
    let got = s.get_session("a").unwrap().unwrap();
    assert_eq!(got.system_prompt.as_deref(), Some("be brief"), "{n}");
    // The JSON text is stored as given, key order and spacing kept.
    assert_eq!(
        got.model_config.as_deref(),
        Some(r#"{"b":1, "a":2}"#),
        "{n}"
    );
    assert_eq!(got.model.as_deref(), Some("m0"), "{n}");
    s.update_session_meta("a", None, Some("m1")).unwrap();
    let got = s.get_session("a").unwrap().unwrap();
    assert_eq!(
        (got.model_config, got.model.as_deref()),
        (None, Some("m1")),
        "{n}"
    );
    s.update_session_model("a", Some("m2")).unwrap();
    s.update_session_meta("a", Some("{}"), None).unwrap();
    s.update_session_meta("a", None, None).unwrap();
    assert_eq!(
        cols("a", &["model", "model_config"]),
        [json!("m2"), json!(null)],
        "{n}: the model kept when None, the config cleared"
    );
    s.update_session_model("a", None).unwrap();
    assert_eq!(s.get_session("a").unwrap().unwrap().model, None, "{n}");

    // A new route clears the prompt snapshot; a `None` mode keeps the mode.
    s.update_session_billing_route("a", Some("openrouter"), Some("https://x"), Some("api"))
        .unwrap();
    let route = [
        "billing_provider",
        "billing_base_url",
        "billing_mode",
        "system_prompt",
    ];
    assert_eq!(
        cols("a", &route),
        [
            json!("openrouter"),
            json!("https://x"),
            json!("api"),
            json!(null)
        ],
        "{n}"
    );
    s.update_system_prompt("a", "again").unwrap();
    s.update_session_billing_route("a", Some("nous"), None, None)
        .unwrap();
    let got = s.get_session("a").unwrap().unwrap();
    assert_eq!(
        (
            got.billing_provider.as_deref(),
            got.billing_base_url.as_deref(),
            got.billing_mode.as_deref(),
            got.system_prompt.as_deref()
        ),
        (Some("nous"), None, Some("api"), None),
        "{n}"
    );

    // Branch and root are trimmed; blank ones keep the stored value.
    s.update_session_cwd("a", "/w", Some("  main \n"), Some(" /w "))
        .unwrap();
    s.update_session_cwd("a", " /w/sub ", Some("   "), None)
        .unwrap();
    // An empty cwd or id is a no-op; the cwd is stored as given.
    s.update_session_cwd("a", "", Some("other"), None).unwrap();
    s.update_session_cwd("", "/x", None, None).unwrap();
    let workspace = ["cwd", "git_branch", "git_repo_root"];
    assert_eq!(
        cols("a", &workspace),
        [json!(" /w/sub "), json!("main"), json!("/w")],
        "{n}"
    );
    assert_eq!(
        cols("", &workspace),
        [Value::Null, Value::Null, Value::Null],
        "{n}"
    );

    assert_eq!(cols("a", &["expiry_finalized"]), [json!(0)], "{n}");
    s.set_expiry_finalized("a", true).unwrap();
    assert_eq!(
        s.get_session("a").unwrap().unwrap().expiry_finalized,
        Some(1),
        "{n}"
    );
    s.set_expiry_finalized("a", false).unwrap();
    assert_eq!(
        s.get_session("a").unwrap().unwrap().expiry_finalized,
        Some(0),
        "{n}"
    );
    s.set_expiry_finalized("", true).unwrap();
    s.update_system_prompt("", "empty id").unwrap();
    assert_eq!(
        cols("", &["expiry_finalized", "system_prompt"]),
        [json!(0), json!("empty id")],
        "{n}: an empty id is a no-op for the flag, an ordinary id for the prompt"
    );

    // An unknown session is no error and creates nothing.
    s.update_system_prompt("nope", "x").unwrap();
    s.update_session_model("nope", Some("m")).unwrap();
    s.update_session_meta("nope", Some("{}"), Some("m"))
        .unwrap();
    s.update_session_billing_route("nope", Some("p"), None, None)
        .unwrap();
    s.update_session_cwd("nope", "/w", None, None).unwrap();
    s.set_expiry_finalized("nope", true).unwrap();
    assert_eq!(s.get_session("nope").unwrap(), None, "{n}");
}

/// From a session the flags go up through parents that ended by
/// compression and down through sessions that did, never to a branched
/// or user-ended session's children, and stop on a parent cycle.
pub fn archive_and_pin_cover_the_compression_lineage_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    // gp --user_exit--> root --compression--> mid --compression--> tip,
    // `side` another continuation of root, `br` a child of `tip` (which
    // did not end), `other` a child of the branched `bra`, and `lone`.
    let ids = [
        "gp", "root", "mid", "tip", "side", "br", "lone", "bra", "other", "cy_a", "cy_b",
    ];
    for (id, parent) in [
        ("gp", ""),
        ("root", "gp"),
        ("mid", "root"),
        ("tip", "mid"),
        ("side", "root"),
        ("br", "tip"),
        ("lone", ""),
        ("bra", ""),
        ("other", "bra"),
        ("cy_a", ""),
        ("cy_b", "cy_a"),
    ] {
        let session = if parent.is_empty() {
            NewSession::new(id, "cli")
        } else {
            child(id, parent)
        };
        s.create_session(&session).unwrap();
    }
    for (id, reason) in [
        ("gp", "user_exit"),
        ("root", "compression"),
        ("mid", "compression"),
        ("bra", "branched"),
    ] {
        s.end_session(id, reason).unwrap();
    }
    let flagged = |pinned: bool| -> Vec<&str> {
        let mut set: Vec<&str> = ids
            .into_iter()
            .filter(|id| {
                let got = s.get_session(id).unwrap().unwrap();
                (if pinned { got.pinned } else { got.archived }) == 1
            })
            .collect();
        set.sort_unstable();
        set
    };
    let archive = |id: &str, on: bool, want: &[&str]| {
        assert!(s.set_session_archived(id, on).unwrap(), "{n}: {id}");
        assert_eq!(flagged(false), want, "{n}: archived from {id}");
    };
    archive("mid", true, &["mid", "root", "tip"]);
    archive("root", true, &["mid", "root", "side", "tip"]);
    archive("tip", false, &["side"]);
    archive("other", true, &["other", "side"]);
    // Setting a flag already set still matches rows.
    archive("other", true, &["other", "side"]);
    archive("tip", true, &["mid", "other", "root", "side", "tip"]);
    archive("root", false, &["other"]);

    let pin = |id: &str, on: bool, want: &[&str]| {
        assert!(s.set_session_pinned(id, on).unwrap(), "{n}: {id}");
        assert_eq!(flagged(true), want, "{n}: pinned from {id}");
    };
    pin("lone", true, &["lone"]);
    pin("br", true, &["br", "lone"]);
    pin("tip", true, &["br", "lone", "mid", "root", "tip"]);
    pin("gp", true, &["br", "gp", "lone", "mid", "root", "tip"]);
    pin("side", false, &["br", "gp", "lone", "mid", "tip"]);
    assert_eq!(flagged(false), ["other"], "{n}: the flags are apart");

    for id in ["nope", ""] {
        assert!(!s.set_session_archived(id, true).unwrap(), "{n}");
        assert!(!s.set_session_pinned(id, true).unwrap(), "{n}");
    }
    b.exec(
        "UPDATE sessions SET parent_session_id = 'cy_b' WHERE id = 'cy_a'; \
         UPDATE sessions SET end_reason = 'compression', ended_at = 1 \
         WHERE id IN ('cy_a', 'cy_b')",
    );
    archive("cy_a", true, &["cy_a", "cy_b", "other"]);
}

pub fn compression_bookkeeping_alike(backend: &dyn Backend) {
    let now = 1_800_000_000.5;
    let b = backend.open_at(now);
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("a", "cli")).unwrap();
    s.create_session(&NewSession::new("", "cli")).unwrap();
    assert_eq!(
        s.get_compression_failure_cooldown("a").unwrap(),
        None,
        "{n}"
    );
    let stored = |id: &str| {
        b.columns(
            id,
            &[
                "compression_failure_cooldown_until",
                "compression_failure_error",
            ],
        )
    };

    let far = now + 600.0;
    s.record_compression_failure_cooldown("a", far, Some("413 too large"))
        .unwrap();
    assert_eq!(stored("a"), [json!(far), json!("413 too large")], "{n}");
    let cooldown = s.get_compression_failure_cooldown("a").unwrap().unwrap();
    assert_eq!(cooldown.cooldown_until, far, "{n}");
    assert_eq!(cooldown.error.as_deref(), Some("413 too large"), "{n}");
    assert_eq!(cooldown.remaining_seconds, 600.0, "{n}");

    // An expired cooldown reads as none, though it is still stored.
    s.record_compression_failure_cooldown("a", now - 1.0, None)
        .unwrap();
    assert_eq!(
        s.get_compression_failure_cooldown("a").unwrap(),
        None,
        "{n}"
    );
    assert_eq!(stored("a"), [json!(now - 1.0), json!(null)], "{n}");

    s.record_compression_failure_cooldown("a", far, Some("e"))
        .unwrap();
    s.clear_compression_failure_cooldown("a").unwrap();
    assert_eq!(
        s.get_compression_failure_cooldown("a").unwrap(),
        None,
        "{n}"
    );
    let got = s.get_session("a").unwrap().unwrap();
    assert_eq!(
        (
            got.compression_failure_cooldown_until,
            got.compression_failure_error
        ),
        (None, None),
        "{n}"
    );

    // Empty and unknown ids: no-ops and nothing read.
    s.record_compression_failure_cooldown("", far, None)
        .unwrap();
    assert_eq!(stored(""), [json!(null), json!(null)], "{n}");
    s.clear_compression_failure_cooldown("").unwrap();
    assert_eq!(s.get_compression_failure_cooldown("").unwrap(), None, "{n}");
    s.record_compression_failure_cooldown("nope", far, None)
        .unwrap();
    assert_eq!(
        s.get_compression_failure_cooldown("nope").unwrap(),
        None,
        "{n}"
    );

    // Counters: clamped at zero, 0 for an unknown session.
    assert_eq!(s.get_compression_fallback_streak("a").unwrap(), 0, "{n}");
    s.set_compression_fallback_streak("a", 3).unwrap();
    assert_eq!(s.get_compression_fallback_streak("a").unwrap(), 3, "{n}");
    s.set_compression_fallback_streak("a", -5).unwrap();
    assert_eq!(s.get_compression_fallback_streak("a").unwrap(), 0, "{n}");
    s.set_compression_ineffective_count("a", 2).unwrap();
    assert_eq!(s.get_compression_ineffective_count("a").unwrap(), 2, "{n}");
    let counts = [
        "compression_fallback_streak",
        "compression_ineffective_count",
    ];
    assert_eq!(b.columns("a", &counts), [json!(0), json!(2)], "{n}");
    s.set_compression_ineffective_count("a", i64::MIN).unwrap();
    assert_eq!(s.get_compression_ineffective_count("a").unwrap(), 0, "{n}");
    assert_eq!(b.columns("a", &counts), [json!(0), json!(0)], "{n}");
    // A value another writer stored as text still reads.
    b.exec("UPDATE sessions SET compression_fallback_streak = '7' WHERE id = 'a'");
    assert_eq!(s.get_compression_fallback_streak("a").unwrap(), 7, "{n}");
    assert_eq!(s.get_compression_ineffective_count("").unwrap(), 0, "{n}");
    s.set_compression_fallback_streak("nope", 4).unwrap();
    assert_eq!(s.get_compression_fallback_streak("nope").unwrap(), 0, "{n}");
    assert_eq!(
        s.get_compression_ineffective_count("nope").unwrap(),
        0,
        "{n}"
    );
    assert_eq!(s.get_session("nope").unwrap(), None, "{n}");
}
