//! One conversation as a Markdown document (`export --format markdown`): a
//! title heading, the session's metadata as a list, then one section per
//! message. Nothing is folded or shortened, as befits an export: reasoning
//! sits in a `<details>` block, tool calls and results in code blocks.
//! Times are in the zone of human output (local, UTC with `--utc`), named.

use std::fmt::Write as _;

use hermes_state::{Message, Session};

use crate::output::when_seconds;
use crate::render::conversation::{content_text, tool_calls};

/// The document for `session` and its `messages`.
pub fn conversation(session: &Session, messages: &[Message]) -> String {
    let mut doc = String::new();
    let title = session
        .title
        .clone()
        .unwrap_or_else(|| format!("Session {}", session.id));
    let _ = writeln!(doc, "# {}\n", one_line_text(&title));
    let mut item = |name: &str, value: String| {
        let _ = writeln!(doc, "- **{name}:** {value}");
    };
    item("Session", code_span(&session.id));
    let mut source = session.source.clone();
    if let Some(user) = &session.user_id {
        let _ = write!(source, " (user {user})");
    }
    item("Source", source);
    if let Some(model) = &session.model {
        item("Model", code_span(model));
    }
    item("Started", when_seconds(session.started_at));
    if let Some(ended) = session.ended_at {
        let reason = session.end_reason.as_deref().unwrap_or("no reason");
        item("Ended", format!("{} ({reason})", when_seconds(ended)));
    }
    if let Some(parent) = &session.parent_session_id {
        item("Continues", code_span(parent));
    }
    if let Some(cwd) = &session.cwd {
        item("Working directory", code_span(cwd));
    }
    item("Messages", messages.len().to_string());
    doc.push('\n');
    // Every section ends with a blank line, which separates it from the next.
    for message in messages {
        write_message(&mut doc, message);
    }
    let end = doc.trim_end().len();
    doc.truncate(end);
    doc.push('\n');
    doc
}

fn write_message(doc: &mut String, m: &Message) {
    let mut role = capitalised(&m.role);
    if let Some(tool) = &m.tool_name {
        let _ = write!(role, ": {}", one_line_text(tool));
    }
    let _ = writeln!(doc, "## {role} · {}\n", when_seconds(m.timestamp));
    let reasoning = m
        .reasoning
        .as_deref()
        .or(m.reasoning_content.as_deref())
        .filter(|r| !r.trim().is_empty());
    if let Some(reasoning) = reasoning {
        let _ = writeln!(
            doc,
            "<details><summary>Reasoning</summary>\n\n{}\n</details>\n",
            reasoning.trim_end()
        );
    }
    if let Some(body) = content_text(m.content.as_ref()).filter(|b| !b.trim().is_empty()) {
        if m.role == "tool" {
            let _ = writeln!(doc, "{}", fenced(&body, ""));
        } else {
            let _ = writeln!(doc, "{}\n", body.trim_end());
        }
    }
    for call in tool_calls(m.tool_calls.as_ref()) {
        let id = call
            .id
            .map(|id| format!(" ({})", code_span(&id)))
            .unwrap_or_default();
        let _ = writeln!(doc, "**Tool call** {}{id}:\n", code_span(&call.name));
        let _ = writeln!(
            doc,
            "{}",
            fenced(&pretty_arguments(&call.arguments), "json")
        );
    }
}

/// Arguments as indented JSON when they are JSON, else as written.
fn pretty_arguments(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| arguments.to_owned())
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn fenced(text: &str, language: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(text).max(2) + 1);
    format!(
        "{fence}{language}\n{}\n{fence}\n",
        text.trim_end_matches('\n')
    )
}

/// An inline code span that survives backticks in `text`.
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn one_line_text(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn capitalised(role: &str) -> String {
    let mut chars = role.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "(no role)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fenced("a", ""), "```\na\n```\n");
        assert_eq!(fenced("x ```` y", "json"), "`````json\nx ```` y\n`````\n");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
    }
}
