//! Creates a store, appends a short conversation with a tool call, and prints
//! it back the way the agent reads it (the OpenAI-style message list).
//!
//! `cargo run -p hermes-state --example conversation [PATH]` (default: a fresh
//! store in a temporary folder).
#![allow(clippy::print_stdout)]

use hermes_state::prelude::*;
use hermes_state::{NewMessage, NewSession, SessionDb, TokenUpdate};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let path = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| scratch.path().join("state.db"));
    let db = SessionDb::open(&path)?;
    let session = format!("demo-{}", std::process::id());
    db.create_session(
        &NewSession::new(&session, "cli")
            .model("gpt-5")
            .cwd("/home/demo/project"),
    )?;

    db.append_message(
        &NewMessage::new(&session, "user").content("What's the weather in Paris right now?"),
    )?;
    let call = json!([{
        "id": "call_1",
        "type": "function",
        "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}
    }]);
    db.append_message(
        &NewMessage::new(&session, "assistant")
            .tool_calls(call)
            .finish_reason("tool_calls"),
    )?;
    db.append_message(
        &NewMessage::new(&session, "tool")
            .content("18°C, clear sky")
            .tool_result("weather", "call_1"),
    )?;
    db.append_message(
        &NewMessage::new(&session, "assistant")
            .content("It is 18°C and clear in Paris.")
            .finish_reason("stop"),
    )?;
    db.update_token_counts(
        &session,
        &TokenUpdate {
            input_tokens: 412,
            output_tokens: 58,
            api_call_count: 2,
            ..Default::default()
        },
    )?;
    db.end_session(&session, "user_exit")?;

    let row = db
        .get_session(&session)?
        .ok_or("the session just created is missing")?;
    println!("store:    {}", db.path().display());
    println!(
        "session:  {} (source {}, {} messages, {} tool call, {} tokens in / {} out)",
        row.id,
        row.source,
        row.message_count.unwrap_or(0),
        row.tool_call_count.unwrap_or(0),
        row.input_tokens.unwrap_or(0),
        row.output_tokens.unwrap_or(0)
    );
    println!("conversation:");
    for entry in db.get_messages_as_conversation(&session, false)? {
        println!("  {}", serde_json::to_string(&entry)?);
    }
    db.close()?;
    Ok(())
}
