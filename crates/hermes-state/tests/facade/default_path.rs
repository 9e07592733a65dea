//! `SessionDb::open_default` resolves `$HERMES_HOME/state.db` and creates the
//! folder. The test changes the process environment, so it runs in a
//! process of its own (`common::in_own_process`): no other test of this
//! binary reads the environment while it changes.

use hermes_state::SessionDb;

use crate::common::in_own_process;

#[test]
fn open_default_uses_hermes_home_and_creates_the_folder() {
    in_own_process(
        module_path!(),
        "open_default_uses_hermes_home_and_creates_the_folder",
        open_default_in_this_process,
    );
}

fn open_default_in_this_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("nested").join("hermes-home");
    // SAFETY: this process runs this one test only (`in_own_process`), so no
    // other thread reads the environment while it is changed.
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
