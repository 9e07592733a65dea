//! The writes added to the seam refuse a read-only handle alike (kind
//! `ReadOnly`, nothing written) and its reads are served; the lock calls,
//! which never fail, say `false`.

use hermes_state_core::gateway::GatewayPeer;
use hermes_state_core::messages::MessagePage;
use hermes_state_core::prune::PruneOptions;
use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::Content;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

use super::Backend;
use crate::build::{assistant, user};

pub fn the_new_writes_refuse_a_read_only_handle_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    let w = &b.store;
    w.create_session(&NewSession::new("s", "cli")).unwrap();
    w.record_compression_failure_cooldown("s", 4e9, Some("e"))
        .unwrap();
    w.set_compression_fallback_streak("s", 2).unwrap();
    let mut pm = user("s", "q1");
    pm.platform_message_id = Some("pm".into());
    let ids = w
        .append_messages(&[
            pm,
            assistant("s", "a1"),
            user("s", "q2"),
            assistant("s", "a2"),
        ])
        .unwrap();
    w.rewind_to_message("s", ids[2]).unwrap();
    let reader = b.read_only();
    let peer = GatewayPeer {
        source: "telegram".into(),
        session_key: "k".into(),
        ..GatewayPeer::default()
    };
    let q1 = Content::from("q1");
    let usage = AuxiliaryUsage {
        task: "vision".into(),
        ..AuxiliaryUsage::default()
    };
    let prune = PruneOptions {
        older_than_days: None,
        ..PruneOptions::default()
    };
    let refused = [
        reader
            .update_token_counts(
                "s",
                &TokenUpdate {
                    input_tokens: 1,
                    ..TokenUpdate::default()
                },
            )
            .unwrap_err(),
        reader.record_auxiliary_usage("s", &usage).unwrap_err(),
        reader.clear_messages("s").unwrap_err(),
        reader.set_meta("k", "v").unwrap_err(),
        reader
            .save_gateway_routing_entry("key", "{}", "")
            .unwrap_err(),
        reader
            .delete_gateway_routing_entries(&["key"], "")
            .unwrap_err(),
        reader.prune_sessions(&prune).unwrap_err(),
        reader.update_system_prompt("s", "x").unwrap_err(),
        reader.update_session_model("s", Some("x")).unwrap_err(),
        reader
            .update_session_meta("s", Some("{}"), None)
            .unwrap_err(),
        reader
            .update_session_billing_route("s", Some("p"), None, None)
            .unwrap_err(),
        reader
            .update_session_cwd("s", "/w", None, None)
            .unwrap_err(),
        reader.backfill_repo_roots(&[("/w", "/r")]).unwrap_err(),
        reader.record_gateway_session_peer("s", &peer).unwrap_err(),
        reader.set_expiry_finalized("s", true).unwrap_err(),
        reader.set_session_archived("s", true).unwrap_err(),
        reader.set_session_pinned("s", true).unwrap_err(),
        reader.finalize_orphaned_compression_sessions().unwrap_err(),
        reader.prune_empty_ghost_sessions(None).unwrap_err(),
        reader
            .record_compression_failure_cooldown("s", 1.0, None)
            .unwrap_err(),
        reader.clear_compression_failure_cooldown("s").unwrap_err(),
        reader.set_compression_fallback_streak("s", 1).unwrap_err(),
        reader
            .set_compression_ineffective_count("s", 1)
            .unwrap_err(),
        reader
            .replace_messages("s", &[user("s", "x")], false)
            .unwrap_err(),
        reader.replace_messages("s", &[], true).unwrap_err(),
        reader.archive_and_compact("s", &[]).unwrap_err(),
        reader.rewind_to_message("s", ids[0]).unwrap_err(),
        reader.restore_rewound("s", ids[0]).unwrap_err(),
        reader
            .set_latest_user_api_content("s", Some(&q1), "x")
            .unwrap_err(),
        reader
            .set_latest_matching_message_display_kind("s", "user", "q1", "k", None)
            .unwrap_err(),
    ];
    for error in refused {
        assert_eq!(error.kind(), ErrorKind::ReadOnly, "{n}: {error}");
    }
    // The reads are served.
    assert!(
        reader
            .get_compression_failure_cooldown("s")
            .unwrap()
            .is_some(),
        "{n}"
    );
    assert_eq!(
        reader.get_compression_fallback_streak("s").unwrap(),
        2,
        "{n}"
    );
    assert_eq!(
        reader.get_compression_ineffective_count("s").unwrap(),
        0,
        "{n}"
    );
    let around = reader.get_messages_around("s", ids[2], 1).unwrap();
    assert_eq!(around.window.len(), 3, "{n}");
    assert_eq!(
        reader
            .list_recent_user_messages("s", 20, true)
            .unwrap()
            .len(),
        2,
        "{n}"
    );
    assert!(reader.has_archived_messages("s").unwrap(), "{n}");
    assert!(reader.has_platform_message_id("s", "pm").unwrap(), "{n}");
    assert!(!reader.has_platform_message_id("s", "pm2").unwrap(), "{n}");
    let every_row = MessagePage {
        include_inactive: true,
        ..MessagePage::default()
    };
    let rows = reader.get_messages_page("s", every_row).unwrap();
    assert_eq!(
        rows.iter().map(|m| m.active).collect::<Vec<_>>(),
        [1, 1, 0, 0],
        "{n}: nothing written"
    );
    assert_eq!(w.get_session("s").unwrap().unwrap().model, None, "{n}");

    assert!(!reader.try_acquire_compression_lock("s", "h", 60.0), "{n}");
    assert!(!reader.refresh_compression_lock("s", "h", 60.0), "{n}");
    reader.release_compression_lock("s", "h");
    let session = b.store.get_session("s").unwrap().unwrap();
    assert_eq!(session.input_tokens, Some(0), "{n}: nothing written");
    assert_eq!(b.store.get_meta("k").unwrap(), None, "{n}");
    // A dry run reads only, so a reader may do it.
    let dry = PruneOptions {
        dry_run: true,
        ..prune
    };
    assert!(reader.prune_sessions(&dry).unwrap().ids.is_empty(), "{n}");
}
