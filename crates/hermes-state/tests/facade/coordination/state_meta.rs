//! `state_meta` writes.

use super::*;
use hermes_state_core::store::Coordination;

#[test]
fn set_meta_upserts() {
    let (_dir, db) = temp_db();
    assert_eq!(db.get_meta("k").expect("get"), None);
    db.set_meta("k", "1").expect("set");
    assert_eq!(db.get_meta("k").expect("get").as_deref(), Some("1"));
    db.set_meta("k", "2").expect("set");
    assert_eq!(db.get_meta("k").expect("get").as_deref(), Some("2"));
    let count: i64 = db
        .read(|conn| {
            Ok(conn
                .query_row("SELECT count(*) FROM state_meta WHERE key = 'k'", [], |r| {
                    r.get(0)
                })
                .expect("count"))
        })
        .expect("read");
    assert_eq!(count, 1);
}
