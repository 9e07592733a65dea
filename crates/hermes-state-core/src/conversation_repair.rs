//! The role-alternation repair the original applies to a conversation it
//! restores for live replay (its agent's `repair_message_sequence`, which
//! `get_resume_conversations` runs over the tip's messages): providers want
//! user/tool turns and assistant turns to alternate, and a transcript can
//! hold two assistant turns in a row, tool results nobody asked for, or two
//! user turns in a row.
//!
//! The messages are the conversation view's dicts as JSON objects, because
//! the repair adds keys to a message (a merged turn's `tool_calls`, its
//! `reasoning_content`) at the end of the dict, as Python does, which a
//! struct with a fixed field order cannot show. Truth values are Python's.

use std::collections::HashSet;

use hermes_state_types::ConversationMessage;
use hermes_state_types::dynamic::python_truthy;
use hermes_state_types::text::python_strip;
use serde_json::{Map, Value};

/// One message of a repaired conversation: the conversation view's dict.
pub type ConversationDict = Map<String, Value>;

/// The `TypeError` Python raises in the repair, with its text: tool calls
/// that are not a list, or a call id that is a list or an object. Its own
/// type, so each backend maps it to its error's `TypeError` kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RepairError(pub String);

/// The conversation view as the original's dicts, repaired
/// ([`repair_message_sequence`]): what its `get_messages_as_conversation`
/// returns with `repair_alternation=True`, on any backend's view.
pub fn repaired(
    conversation: &[ConversationMessage],
) -> Result<Vec<ConversationDict>, RepairError> {
    let mut dicts: Vec<ConversationDict> = conversation.iter().map(conversation_dict).collect();
    repair_message_sequence(&mut dicts).map_err(RepairError)?;
    Ok(dicts)
}

/// A conversation entry as the dict the original builds (its keys in the
/// same order).
fn conversation_dict(entry: &ConversationMessage) -> ConversationDict {
    match serde_json::to_value(entry) {
        Ok(Value::Object(map)) => map,
        _ => ConversationDict::new(),
    }
}

/// Finish reasons of a provisional assistant turn that a later one replaces.
const VERIFICATION_CANDIDATES: [&str; 2] = ["verification_required", "verify_hook_continue"];

/// Repairs `messages` in place and returns how many repairs were made, in
/// the original's three passes:
///
/// 0. two adjacent assistant turns (neither a Codex interim turn: one with
///    Codex items or finish reason `incomplete`) become one: a provisional
///    one (`verification_required`, `verify_hook_continue`) is replaced by
///    the later, otherwise their tool calls are joined, their text contents
///    joined by a newline (each stripped, empty ones left out), and the
///    later `reasoning_content` taken when the earlier has none;
/// 1. a `tool` result whose `tool_call_id` answers no call of the latest
///    assistant turn (each call answered once; a user turn forgets them) is
///    dropped;
/// 2. two adjacent user turns with text contents become one, joined by a
///    blank line, without the stale `api_content`.
///
/// The list is replaced only when something was repaired. An `Err` carries
/// the `TypeError` text Python raises on tool calls that are not a list
/// (a number, `true`) or a call id that is a list or an object.
pub fn repair_message_sequence(messages: &mut Vec<ConversationDict>) -> Result<usize, String> {
    if messages.is_empty() {
        return Ok(0);
    }
    let mut repairs = 0;
    let collapsed = merge_assistant_turns(messages.clone(), &mut repairs)?;
    let filtered = drop_stray_tool_results(collapsed, &mut repairs)?;
    let merged = merge_user_turns(filtered, &mut repairs);
    if repairs > 0 {
        *messages = merged;
    }
    Ok(repairs)
}

fn role(message: &ConversationDict) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// Python's `bool()` of a JSON value (a missing key is `None`).
fn truthy(value: Option<&Value>) -> bool {
    value.is_some_and(python_truthy)
}

fn finish_reason(message: &ConversationDict) -> Option<&str> {
    message.get("finish_reason").and_then(Value::as_str)
}

fn is_codex_interim(message: &ConversationDict) -> bool {
    truthy(message.get("codex_reasoning_items"))
        || truthy(message.get("codex_message_items"))
        || finish_reason(message) == Some("incomplete")
}

fn is_verification_candidate(message: &ConversationDict) -> bool {
    finish_reason(message).is_some_and(|reason| VERIFICATION_CANDIDATES.contains(&reason))
}

/// Python's `list(value or [])`: a list's items, a dict's keys, a string's
/// characters; a truthy number or `true` is not iterable.
fn python_list(value: Option<&Value>) -> Result<Vec<Value>, String> {
    if !truthy(value) {
        return Ok(Vec::new());
    }
    match value {
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(Value::Object(map)) => Ok(map.keys().cloned().map(Value::String).collect()),
        Some(Value::String(text)) => Ok(text.chars().map(|c| Value::String(c.into())).collect()),
        Some(Value::Bool(_)) => Err("'bool' object is not iterable".to_owned()),
        Some(Value::Number(n)) if n.is_f64() => Err("'float' object is not iterable".to_owned()),
        _ => Err("'int' object is not iterable".to_owned()),
    }
}

/// Pass 0: adjacent assistant turns merged.
fn merge_assistant_turns(
    messages: Vec<ConversationDict>,
    repairs: &mut usize,
) -> Result<Vec<ConversationDict>, String> {
    let mut collapsed: Vec<ConversationDict> = Vec::with_capacity(messages.len());
    for message in messages {
        let Some(prev) = collapsed.last_mut().filter(|prev| {
            role(&message) == Some("assistant")
                && role(prev) == Some("assistant")
                && !is_codex_interim(&message)
                && !is_codex_interim(prev)
        }) else {
            collapsed.push(message);
            continue;
        };
        *repairs += 1;
        if is_verification_candidate(prev) {
            *prev = message;
            continue;
        }
        let mut calls = python_list(prev.get("tool_calls"))?;
        let new_calls = python_list(message.get("tool_calls"))?;
        if !new_calls.is_empty() || !calls.is_empty() {
            calls.extend(new_calls);
            prev.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        match (prev.get("content"), message.get("content")) {
            (Some(Value::String(old)), Some(Value::String(new))) => {
                let joined = [python_strip(old), python_strip(new)]
                    .into_iter()
                    .filter(|part| !part.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                prev.insert("content".to_owned(), Value::String(joined));
            }
            (old, Some(new)) if !truthy(old) && !new.is_null() => {
                prev.insert("content".to_owned(), new.clone());
            }
            _ => {}
        }
        if !truthy(prev.get("reasoning_content")) && truthy(message.get("reasoning_content")) {
            let reasoning = message
                .get("reasoning_content")
                .cloned()
                .unwrap_or_default();
            prev.insert("reasoning_content".to_owned(), reasoning);
        }
    }
    Ok(collapsed)
}

/// Pass 1: tool results that answer no pending call dropped.
fn drop_stray_tool_results(
    messages: Vec<ConversationDict>,
    repairs: &mut usize,
) -> Result<Vec<ConversationDict>, String> {
    let mut known: HashSet<String> = HashSet::new();
    let mut filtered = Vec::with_capacity(messages.len());
    for message in messages {
        match role(&message) {
            Some("assistant") => {
                known.clear();
                for call in python_list(message.get("tool_calls"))? {
                    let Value::Object(call) = call else { continue };
                    for key in ["id", "call_id"] {
                        let id = call.get(key);
                        if !truthy(id) {
                            continue;
                        }
                        match id {
                            Some(Value::String(id)) => {
                                known.insert(id.clone());
                            }
                            Some(Value::Array(_)) => {
                                return Err("unhashable type: 'list'".to_owned());
                            }
                            Some(Value::Object(_)) => {
                                return Err("unhashable type: 'dict'".to_owned());
                            }
                            // Hashable, but never equal to a text call id.
                            _ => {}
                        }
                    }
                }
                filtered.push(message);
            }
            Some("tool") => {
                // Each call is answered once: a second result for it is dropped.
                let answered = message
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| known.remove(id));
                if answered {
                    filtered.push(message);
                } else {
                    *repairs += 1;
                }
            }
            other => {
                if other == Some("user") {
                    known.clear();
                }
                filtered.push(message);
            }
        }
    }
    Ok(filtered)
}

/// Pass 2: adjacent user turns with text contents merged.
fn merge_user_turns(messages: Vec<ConversationDict>, repairs: &mut usize) -> Vec<ConversationDict> {
    let mut merged: Vec<ConversationDict> = Vec::with_capacity(messages.len());
    for message in messages {
        if let Some(prev) = merged
            .last_mut()
            .filter(|prev| role(&message) == Some("user") && role(prev) == Some("user"))
            && let (Some(Value::String(old)), Some(Value::String(new))) =
                (prev.get("content"), message.get("content"))
        {
            let content = match (old.is_empty(), new.is_empty()) {
                (false, false) => format!("{old}\n\n{new}"),
                (false, true) => old.clone(),
                _ => new.clone(),
            };
            prev.insert("content".to_owned(), Value::String(content));
            prev.shift_remove("api_content");
            *repairs += 1;
            continue;
        }
        merged.push(message);
    }
    merged
}
