//! The other session updates (`api.md` §2.5) through the seam: prompt,
//! model, billing route, workspace, flags, the compression lineage's
//! archive and pin flags, and the compression bookkeeping.

use hermes_state_types::NewSession;

use super::Backend;
use crate::build::child;

pub fn prompt_model_meta_route_and_cwd_updates_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let mut new = NewSession::new("a", "cli");
    new.model = Some("m0".into());
    s.create_session(&new).unwrap();

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
    s.update_session_model("a", None).unwrap();
    assert_eq!(s.get_session("a").unwrap().unwrap().model, None, "{n}");

    // A new route clears the prompt snapshot; a `None` mode keeps the mode.
    s.update_session_billing_route("a", Some("openrouter"), Some("https://x"), Some("api"))
        .unwrap();
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
    s.update_session_cwd("a", "/w", Some("  main "), Some("/w"))
        .unwrap();
    s.update_session_cwd("a", "/w/sub", Some("   "), None)
        .unwrap();
    // An empty cwd or id is a no-op.
    s.update_session_cwd("a", "", Some("other"), None).unwrap();
    s.update_session_cwd("", "/x", None, None).unwrap();
    let got = s.get_session("a").unwrap().unwrap();
    assert_eq!(
        (
            got.cwd.as_deref(),
            got.git_branch.as_deref(),
            got.git_repo_root.as_deref()
        ),
        (Some("/w/sub"), Some("main"), Some("/w")),
        "{n}"
    );

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

pub fn archive_and_pin_cover_the_compression_lineage_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    // root --compression--> mid --compression--> tip, and `br`, a
    // child of `tip` (which did not end by compression), plus `lone`.
    s.create_session(&NewSession::new("root", "cli")).unwrap();
    s.create_session(&child("mid", "root")).unwrap();
    s.create_session(&child("tip", "mid")).unwrap();
    s.create_session(&child("br", "tip")).unwrap();
    s.create_session(&NewSession::new("lone", "cli")).unwrap();
    s.end_session("root", "compression").unwrap();
    s.end_session("mid", "compression").unwrap();

    let flags = |id: &str| {
        let got = s.get_session(id).unwrap().unwrap();
        (got.archived, got.pinned)
    };
    assert!(s.set_session_archived("mid", true).unwrap(), "{n}");
    for id in ["root", "mid", "tip"] {
        assert_eq!(flags(id).0, 1, "{n} {id}");
    }
    // `tip` did not end by compression: its child is another conversation.
    assert_eq!(flags("br").0, 0, "{n}");
    assert_eq!(flags("lone").0, 0, "{n}");
    // Setting a flag already set still matches rows.
    assert!(s.set_session_archived("tip", true).unwrap(), "{n}");
    assert!(s.set_session_archived("root", false).unwrap(), "{n}");
    for id in ["root", "mid", "tip"] {
        assert_eq!(flags(id).0, 0, "{n} {id}");
    }

    assert!(s.set_session_pinned("lone", true).unwrap(), "{n}");
    assert_eq!(flags("lone"), (0, 1), "{n}");
    assert_eq!(flags("root").1, 0, "{n}");
    assert!(s.set_session_pinned("br", true).unwrap(), "{n}");
    assert_eq!((flags("br").1, flags("tip").1), (1, 0), "{n}");

    assert!(!s.set_session_archived("nope", true).unwrap(), "{n}");
    assert!(!s.set_session_pinned("nope", true).unwrap(), "{n}");
}

pub fn compression_bookkeeping_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("a", "cli")).unwrap();
    assert_eq!(
        s.get_compression_failure_cooldown("a").unwrap(),
        None,
        "{n}"
    );

    let far = 4_000_000_000.0;
    s.record_compression_failure_cooldown("a", far, Some("413 too large"))
        .unwrap();
    let cooldown = s.get_compression_failure_cooldown("a").unwrap().unwrap();
    assert_eq!(cooldown.cooldown_until, far, "{n}");
    assert_eq!(cooldown.error.as_deref(), Some("413 too large"), "{n}");
    assert!(cooldown.remaining_seconds > 0.0, "{n}");
    assert!(cooldown.remaining_seconds <= far, "{n}");

    // An expired cooldown reads as none, though it is still stored.
    s.record_compression_failure_cooldown("a", 1.0, None)
        .unwrap();
    assert_eq!(
        s.get_compression_failure_cooldown("a").unwrap(),
        None,
        "{n}"
    );
    let got = s.get_session("a").unwrap().unwrap();
    assert_eq!(got.compression_failure_cooldown_until, Some(1.0), "{n}");
    assert_eq!(got.compression_failure_error, None, "{n}");

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
    s.set_compression_ineffective_count("a", -1).unwrap();
    assert_eq!(s.get_compression_ineffective_count("a").unwrap(), 0, "{n}");
    s.set_compression_fallback_streak("nope", 4).unwrap();
    assert_eq!(s.get_compression_fallback_streak("nope").unwrap(), 0, "{n}");
    assert_eq!(
        s.get_compression_ineffective_count("nope").unwrap(),
        0,
        "{n}"
    );
}
