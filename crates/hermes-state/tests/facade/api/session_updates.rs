//! The facade's own argument forms (`api.md` §2.5, §11.6): `SessionDb`
//! takes any iterator of pairs or ids where the contract takes slices.
//! What the session updates do is the conformance suite's, on both
//! backends (`session_updates::…`, `sweeps::…`, `coordination::…`,
//! `cron_and_repo_roots::…`, `read_only::…`).

use std::collections::HashMap;

use crate::common::{Store, t};

#[test]
fn repo_roots_and_deleted_ids_may_come_as_maps_and_owned_strings() {
    let store = Store::new();
    store.session("s");
    store.exec("UPDATE sessions SET cwd = '/v' WHERE id = 's'", []);
    let map = HashMap::from([("/v".to_owned(), "/vr".to_owned())]);
    store.db.backfill_repo_roots(&map).expect("map");
    store
        .db
        .backfill_repo_roots(Vec::<(String, String)>::new())
        .expect("nothing to do");
    assert_eq!(
        store.row("SELECT git_repo_root FROM sessions WHERE id = 's'", []),
        vec![t("/vr")]
    );
    let delete = |ids: Vec<String>| store.db.delete_sessions(ids, None).expect("delete");
    assert_eq!(delete(vec!["missing".to_owned()]), 0);
    assert_eq!(delete(vec!["s".to_owned()]), 1);
}
