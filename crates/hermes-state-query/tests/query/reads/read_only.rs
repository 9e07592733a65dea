//! Every read works on a connection from `hermes_state_schema::open_read_only`
//! and returns what the writable connection returns.

use hermes_state_query::listing::{ListFilter, recent_sessions};
use hermes_state_query::{MessagePage, lineage, messages, sessions, stats, titles};
use hermes_state_schema::rusqlite::{Connection, params};

use crate::common::Db;

fn populated() -> Db {
    let db = super::stats::with_usage();
    db.exec(
        "UPDATE sessions SET title = 'Docker fix', model = 'gpt', input_tokens = 5 WHERE id = 's1'",
        [],
    );
    db.end("s1", "compression", 1.5);
    db.child("s3", "s1", Some("Docker fix #2"), 3.0);
    db.child("s4", "s3", None, 4.0);
    db.message("s3", "user", Some("hello\nthere"), 3.5);
    db.message("s3", "assistant", Some("hi"), 3.6);
    db.exec(
        "INSERT OR REPLACE INTO state_meta (key, value) VALUES ('k', 'v')",
        [],
    );
    db
}

/// Everything the crate reads, as debug text, so two connections can be compared.
fn read_everything(conn: &Connection) -> Vec<String> {
    let filter = ListFilter::default();
    vec![
        format!(
            "{:?}",
            titles::get_session_title(conn, "s1").expect("title")
        ),
        format!(
            "{:?}",
            titles::session_id_by_title(conn, "Docker fix").expect("by title")
        ),
        format!(
            "{:?}",
            titles::resolve_session_by_title(conn, "Docker fix").expect("resolve")
        ),
        format!(
            "{:?}",
            titles::get_next_title_in_lineage(conn, "Docker fix").expect("next")
        ),
        format!(
            "{:?}",
            titles::is_compression_ancestor(conn, "s3", "s1").expect("ancestor")
        ),
        format!("{:?}", lineage::ancestors(conn, "s4").expect("ancestors")),
        format!(
            "{:?}",
            lineage::descendants(conn, "s1").expect("descendants")
        ),
        format!("{:?}", lineage::lineage_root(conn, "s4").expect("root")),
        format!(
            "{:?}",
            sessions::lineage_root_to_tip(conn, "s4").expect("root to tip")
        ),
        format!("{:?}", sessions::get_session(conn, "s3").expect("session")),
        format!("{:?}", sessions::parent_of(conn, "s3").expect("parent")),
        format!(
            "{:?}",
            sessions::session_exists(conn, "s2").expect("exists")
        ),
        format!("{:?}", sessions::get_meta(conn, "k").expect("meta")),
        format!("{:?}", recent_sessions(conn, &filter).expect("recent")),
        format!("{:?}", stats::model_totals(conn).expect("totals")),
        format!("{:?}", stats::top_sessions(conn, 10).expect("top")),
        format!("{:?}", stats::usage_by_model_and_task(conn).expect("usage")),
        format!(
            "{:?}",
            messages::get_messages(conn, "s3", MessagePage::default()).expect("messages")
        ),
        format!(
            "{:?}",
            messages::get_messages_as_conversation(conn, "s4", true, false).expect("conversation")
        ),
        format!("{:?}", messages::message_count(conn, None).expect("count")),
    ]
}

#[test]
fn every_read_works_read_only() {
    let db = populated();
    let writable = read_everything(&db.conn);
    let ro = db.read_only();
    assert!(
        ro.is_readonly(hermes_state_schema::rusqlite::MAIN_DB)
            .expect("is_readonly")
    );
    let read_only = read_everything(&ro);
    assert_eq!(read_only, writable);

    // Spot checks of the values read through the read-only connection.
    assert_eq!(
        titles::resolve_session_by_title(&ro, "Docker fix").expect("resolve"),
        Some("s3".to_owned())
    );
    assert_eq!(
        titles::get_next_title_in_lineage(&ro, "Docker fix").expect("next"),
        "Docker fix #3"
    );
    assert_eq!(
        lineage::lineage_root(&ro, "s4").expect("root"),
        "s1".to_owned()
    );
    let listed = recent_sessions(&ro, &ListFilter::default()).expect("recent");
    let s3 = listed.iter().find(|l| l.session.id == "s3").expect("s3");
    assert_eq!(s3.preview, "hello\nthere");
    assert_eq!(s3.last_active, 3.6);

    // And the connection really cannot write.
    let refused = ro.execute(
        "UPDATE sessions SET title = ?1 WHERE id = 's2'",
        params!["nope"],
    );
    assert!(refused.is_err(), "a read-only connection wrote");
}

#[test]
fn reads_see_a_file_closed_by_its_writer() {
    let db = populated();
    let expected = read_everything(&db.conn);
    let Db { conn, path, _dir } = db;
    conn.close().expect("close the writer");
    let ro = hermes_state_schema::open_read_only(&path).expect("open_read_only");
    assert_eq!(read_everything(&ro), expected);
}
