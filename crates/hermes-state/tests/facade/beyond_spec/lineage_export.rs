//! `export_session_lineage`: a compression lineage as one logical session.

use hermes_state::serde_json::{self, Value, json};
use hermes_state::{NewMessage, NewSession};

use super::Clocked;
use hermes_state::prelude::Exchange;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

#[test]
fn a_lineage_exports_as_its_tip_with_every_segments_messages() {
    let s = Clocked::at(1000.0);
    let db = &s.db;
    db.create_session(&NewSession::new("root", "cli").model("m1"))
        .unwrap();
    db.append_message(&NewMessage::new("root", "user").content("before"))
        .unwrap();
    db.end_session("root", "compression").unwrap();
    s.clock.set(1001.0);
    db.create_session(
        &NewSession::new("tip", "cli")
            .model("m2")
            .parent_session_id("root"),
    )
    .unwrap();
    db.append_message(&NewMessage::new("tip", "assistant").content("after"))
        .unwrap();
    db.create_session(
        &NewSession::new("branch", "cli")
            .parent_session_id("root")
            .model_config(json!({"_branched_from": "root"})),
    )
    .unwrap();

    let exported = db.export_session_lineage("tip").unwrap().unwrap();
    let value = serde_json::to_value(&exported).unwrap();
    let tip = db.export_session("tip").unwrap().unwrap().to_value();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    let mut expected_keys: Vec<&String> = tip.as_object().unwrap().keys().collect();
    let extra = ["segments".to_owned(), "lineage_session_ids".to_owned()];
    expected_keys.extend(extra.iter());
    assert_eq!(keys, expected_keys, "the tip's keys, then segments and ids");
    assert_eq!(value["id"], json!("tip"));
    assert_eq!(value["model"], json!("m2"));
    assert_eq!(value["lineage_session_ids"], json!(["root", "tip"]));
    assert_eq!(value["message_count"], json!(2));
    let contents: Vec<&Value> = value["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["content"])
        .collect();
    assert_eq!(contents, [&json!("before"), &json!("after")]);
    assert_eq!(
        value["segments"],
        json!([db.export_session("root").unwrap().unwrap().to_value(), tip])
    );
    // Any member of the chain exports the whole chain; a branch and a lone
    // session are their own lineage; an unknown id is None.
    let ids = |id: &str| {
        db.export_session_lineage(id)
            .unwrap()
            .map(|e| e.lineage_session_ids())
    };
    assert_eq!(ids("root"), Some(vec!["root".to_owned(), "tip".to_owned()]));
    assert_eq!(ids("branch"), Some(vec!["branch".to_owned()]));
    assert_eq!(ids("nobody"), None);
    assert_eq!(ids(""), None);
}
