//! One conversation as a Markdown document (`export --format markdown`): a
//! title heading, the session's metadata as a list, then one section per
//! message. Nothing is folded or shortened, as befits an export: reasoning
//! sits in a `<details>` block, tool calls and results in code blocks. The
//! document is written message by message ([`Document`]), so a long
//! conversation is never held in memory.
//! Times are in the zone of human output (local, UTC with `--utc`), named.

use std::fmt::Write as _;
use std::io::{self, Write};

use hermes_state::{Message, Session};

use crate::output::when_seconds;
use crate::render::conversation::{content_text, tool_calls};

/// The document of one conversation, written as it goes: the heading and
/// metadata first (with the number of messages, known before they are
/// read), then one section per message. The bytes are those of the whole
/// document built at once and stripped of trailing whitespace, plus one
/// newline: whitespace at the end of a section is held back until more text
/// follows.
pub struct Document<W: Write> {
    out: W,
    held: String,
}

impl<W: Write> Document<W> {
    /// Writes the heading and the metadata list.
    pub fn start(out: W, session: &Session, messages: u64) -> io::Result<Self> {
        let mut doc = Document {
            out,
            held: String::new(),
        };
        doc.push(&header(session, messages))?;
        Ok(doc)
    }

    /// Writes one message's section.
    pub fn message(&mut self, message: &Message) -> io::Result<()> {
        let mut section = String::new();
        write_message(&mut section, message);
        self.push(&section)
    }

    /// Ends the document with one newline.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.write_all(b"\n")
    }

    fn push(&mut self, chunk: &str) -> io::Result<()> {
        let text = chunk.trim_end();
        if text.is_empty() {
            self.held.push_str(chunk);
            return Ok(());
        }
        self.out.write_all(self.held.as_bytes())?;
        self.out.write_all(text.as_bytes())?;
        self.held.clear();
        self.held.push_str(&chunk[text.len()..]);
        Ok(())
    }
}

/// The heading and the metadata list, ending with a blank line.
fn header(session: &Session, messages: u64) -> String {
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
    item("Messages", messages.to_string());
    // Every section ends with a blank line, which separates it from the next.
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

    #[test]
    fn trailing_whitespace_is_held_back_until_text_follows() {
        let mut out = Vec::new();
        let mut doc = Document {
            out: &mut out,
            held: String::new(),
        };
        for chunk in ["# T\n\n", "  \n", "body  \n\n", "\n", "end\n\n"] {
            doc.push(chunk).expect("push");
        }
        doc.finish().expect("finish");
        let whole = "# T\n\n  \nbody  \n\n\nend\n\n";
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{}\n", whole.trim_end())
        );
    }
}
