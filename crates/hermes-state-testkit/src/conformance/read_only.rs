//! The writes added to the seam refuse a read-only handle alike (kind
//! `ReadOnly`, nothing written); the lock calls, which never fail, say `false`.

use hermes_state_core::prune::PruneOptions;
use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

use super::Backend;

pub fn the_new_writes_refuse_a_read_only_handle_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.store
        .create_session(&NewSession::new("s", "cli"))
        .unwrap();
    let reader = b.read_only();
    let usage = AuxiliaryUsage {
        task: "vision".into(),
        ..AuxiliaryUsage::default()
    };
    let prune = PruneOptions {
        older_than_days: None,
        ..PruneOptions::default()
    };
    let errors = [
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
    ];
    for error in errors {
        assert_eq!(error.kind(), ErrorKind::ReadOnly, "{n}: {error}");
    }
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
