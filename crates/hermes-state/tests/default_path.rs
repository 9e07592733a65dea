//! `SessionDb::open_default` resolves `$HERMES_HOME/state.db` and creates the
//! folder. One test per binary: it changes the process environment.
#![allow(missing_docs)]

use hermes_state::SessionDb;

#[test]
fn open_default_uses_hermes_home_and_creates_the_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("nested").join("hermes-home");
    // SAFETY: this test binary has a single test, so no other thread reads
    // the environment while it is changed.
    unsafe { std::env::set_var("HERMES_HOME", format!("  {}  ", home.display())) };
    assert_eq!(
        hermes_state::paths::hermes_home().expect("home"),
        home,
        "trimmed, used verbatim"
    );
    let db = SessionDb::open_default().expect("open default");
    assert_eq!(db.path(), home.join("state.db"));
    assert!(
        home.join("state.db").is_file(),
        "the store and its folder were created"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&home)
            .expect("folder")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700, "a folder created for the store is private");
    }
    // An empty (whitespace-only) HERMES_HOME falls back to ~/.hermes.
    // SAFETY: as above.
    unsafe { std::env::set_var("HERMES_HOME", "   ") };
    let fallback = hermes_state::paths::hermes_home().expect("home");
    assert!(fallback.ends_with(".hermes"), "{}", fallback.display());
}
