//! `build_conversation` / `clean_memory_context` against `api.md` §5.2: the
//! measured example table (key for key, in order), the lineage example, the
//! memory-context cleaning, the duplicate-user rule and the harness removal.
//! The helpers are here, one module per subject below.

mod cleaning;
mod duplicates;
mod example;
mod harness;
mod key_presence;

use hermes_state_core::conversation::{build_conversation, clean_memory_context};
use hermes_state_types::{Content, ConversationMessage, Message};
use serde_json::{Value, json};

/// A row of `session` with the given id, role and text content; everything else empty.
fn row(id: i64, session: &str, role: &str, content: &str) -> Message {
    Message {
        id,
        session_id: session.to_owned(),
        role: role.to_owned(),
        content: Some(Content::Text(content.to_owned())),
        active: 1,
        ..Default::default()
    }
}

fn to_json(entries: &[ConversationMessage]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| serde_json::to_string(entry).expect("entries serialise"))
        .collect()
}

/// `(role, content)` of each entry, content as a string ("<non-text>" otherwise).
fn roles_and_texts(entries: &[ConversationMessage]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|entry| {
            let text = match &entry.content {
                Some(Content::Text(text)) => text.clone(),
                _ => "<non-text>".to_owned(),
            };
            (entry.role.clone(), text)
        })
        .collect()
}

fn texts(entries: &[ConversationMessage]) -> Vec<String> {
    roles_and_texts(entries)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}
