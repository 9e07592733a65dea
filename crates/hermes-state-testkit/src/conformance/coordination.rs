//! The coordination tables through the seam (`api.md` §12): `state_meta`
//! writes, the gateway routing map and compression locks.

use std::collections::BTreeMap;

use super::Backend;

pub fn state_meta_is_written_and_replaced_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    assert_eq!(s.get_meta("k").unwrap(), None, "{n}");
    s.set_meta("k", "one").unwrap();
    s.set_meta("k", "two").unwrap();
    s.set_meta("empty", "").unwrap();
    assert_eq!(s.get_meta("k").unwrap().as_deref(), Some("two"), "{n}");
    assert_eq!(s.get_meta("empty").unwrap().as_deref(), Some(""), "{n}");
}

pub fn gateway_routing_entries_are_saved_loaded_and_deleted_per_scope_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.save_gateway_routing_entry("b-key", r#"{"chat": 2}"#, "")
        .unwrap();
    s.save_gateway_routing_entry("a-key", r#"{"chat": 1}"#, "")
        .unwrap();
    s.save_gateway_routing_entry("a-key", r#"{"chat": 10}"#, "")
        .unwrap();
    s.save_gateway_routing_entry("a-key", r#"{"other": true}"#, "profile-x")
        .unwrap();
    // Empty keys or entries are ignored.
    s.save_gateway_routing_entry("", "{}", "").unwrap();
    s.save_gateway_routing_entry("c-key", "", "").unwrap();
    let default = s.load_gateway_routing_entries("").unwrap();
    assert_eq!(
        default,
        BTreeMap::from([
            ("a-key".to_owned(), r#"{"chat": 10}"#.to_owned()),
            ("b-key".to_owned(), r#"{"chat": 2}"#.to_owned()),
        ]),
        "{n}"
    );
    assert_eq!(
        s.load_gateway_routing_entries("profile-x").unwrap().len(),
        1,
        "{n}"
    );
    assert!(
        s.load_gateway_routing_entries("nobody").unwrap().is_empty(),
        "{n}"
    );
    s.delete_gateway_routing_entries(&["a-key", "missing"], "")
        .unwrap();
    s.delete_gateway_routing_entries(&[], "").unwrap();
    assert_eq!(
        s.load_gateway_routing_entries("")
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["b-key"],
        "{n}"
    );
    assert_eq!(
        s.load_gateway_routing_entries("profile-x").unwrap().len(),
        1,
        "{n}: other scopes untouched"
    );
}

pub fn compression_locks_are_held_refreshed_released_and_reclaimed_on_expiry_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    assert!(
        s.try_acquire_compression_lock("s", "host-a:pid=1", 300.0),
        "{n}"
    );
    assert!(
        s.try_acquire_compression_lock("s", "host-a:pid=1", 300.0),
        "{n}: re-acquire"
    );
    assert!(
        !s.try_acquire_compression_lock("s", "host-b:pid=1", 300.0),
        "{n}"
    );
    assert!(!s.try_acquire_compression_lock("", "host-a", 300.0), "{n}");
    assert_eq!(
        s.get_compression_lock_holder("s").unwrap().as_deref(),
        Some("host-a:pid=1"),
        "{n}"
    );
    assert!(
        s.refresh_compression_lock("s", "host-a:pid=1", 600.0),
        "{n}"
    );
    assert!(
        !s.refresh_compression_lock("s", "host-b:pid=1", 600.0),
        "{n}"
    );
    // Another holder's release leaves the lock alone.
    s.release_compression_lock("s", "host-b:pid=1");
    assert_eq!(
        s.get_compression_lock_holder("s").unwrap().as_deref(),
        Some("host-a:pid=1"),
        "{n}"
    );
    s.release_compression_lock("s", "host-a:pid=1");
    assert_eq!(s.get_compression_lock_holder("s").unwrap(), None, "{n}");
    assert!(
        s.try_acquire_compression_lock("s", "host-b:pid=1", 300.0),
        "{n}"
    );

    // An expired lease (a negative ttl expires at once) is taken over,
    // and cannot be refreshed by its old holder.
    assert!(s.try_acquire_compression_lock("e", "old", -1.0), "{n}");
    assert_eq!(
        s.get_compression_lock_holder("e").unwrap(),
        None,
        "{n}: expired"
    );
    assert!(!s.refresh_compression_lock("e", "old", 300.0), "{n}");
    assert!(s.try_acquire_compression_lock("e", "new", 300.0), "{n}");
    assert_eq!(
        s.get_compression_lock_holder("e").unwrap().as_deref(),
        Some("new"),
        "{n}"
    );
    assert_eq!(s.get_compression_lock_holder("").unwrap(), None, "{n}");

    // A live lease whose holder names a process that cannot exist
    // (above Linux's largest pid). SQLite reclaims it at once: the
    // process is provably gone on this machine. PostgreSQL does not:
    // a pid says nothing about a process on another host, so the lease
    // lasts until it expires (docs/POSTGRES.md).
    assert!(
        s.try_acquire_compression_lock("d", "pid=4194400:host-c", 300.0),
        "{n}"
    );
    let taken = s.try_acquire_compression_lock("d", "pid=1:host-d", 300.0);
    // Per backend: SQLite `true` (on Linux, where it can prove the
    // process gone), PostgreSQL `false`.
    let expected = n == "sqlite" && cfg!(target_os = "linux");
    assert_eq!(taken, expected, "{n}");
}
