//! A conversation as a person reads it: the session's metadata, then each
//! message with its role and time; tool calls folded to one line
//! (`→ name(arguments)`), long tool results shortened, reasoning folded
//! unless asked for. `sessions show` prints it; nothing here reads the store.

use std::fmt::Write as _;

use hermes_state::{Content, Message, Session};
use serde_json::Value;

use crate::output::{Output, cost, count, datetime_seconds, one_line, shorten, when_seconds};

/// How much of a conversation is unfolded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Folding {
    /// Show the reasoning text of assistant messages.
    pub reasoning: bool,
    /// Show tool results and arguments whole.
    pub full: bool,
}

/// The whole view: the session's header, then every message.
pub fn conversation(
    out: &Output,
    session: &Session,
    messages: &[Message],
    folding: Folding,
) -> String {
    let mut text = session_header(out, session);
    text.push('\n');
    if messages.is_empty() {
        let _ = writeln!(text, "{}", out.dim("(no messages)"));
    }
    for message in messages {
        render_message(&mut text, out, message, folding);
    }
    text
}

/// The session's heading and metadata block.
pub fn session_header(out: &Output, s: &Session) -> String {
    let mut text = String::new();
    let title = s
        .title
        .as_deref()
        .map(|t| format!("  {}", out.bold(&format!("“{t}”"))))
        .unwrap_or_default();
    let _ = writeln!(text, "{}{title}", out.bold(&format!("Session {}", s.id)));
    let mut field = |name: &str, value: String| {
        let _ = writeln!(text, "  {:<10} {value}", format!("{name}:"));
    };
    let mut origin = s.source.clone();
    if let Some(user) = &s.user_id {
        let _ = write!(origin, " (user {user})");
    }
    if let Some(chat) = &s.chat_type {
        let _ = write!(origin, " [{chat}]");
    }
    field("source", origin);
    if let Some(model) = &s.model {
        field("model", model.clone());
    }
    let mut when = when_seconds(s.started_at);
    match (s.ended_at, &s.end_reason) {
        (Some(ended), reason) => {
            let _ = write!(
                when,
                " → ended {} ({})",
                datetime_seconds(ended),
                reason.as_deref().unwrap_or("no reason")
            );
        }
        (None, _) => when.push_str(" → live"),
    }
    field("started", when);
    if let Some(parent) = &s.parent_session_id {
        field("parent", parent.clone());
    }
    if let Some(cwd) = &s.cwd {
        let branch = s
            .git_branch
            .as_deref()
            .map(|b| format!(" ({b})"))
            .unwrap_or_default();
        field("cwd", format!("{cwd}{branch}"));
    }
    field(
        "messages",
        format!(
            "{} ({} tool call{})",
            s.message_count.unwrap_or(0),
            s.tool_call_count.unwrap_or(0),
            if s.tool_call_count == Some(1) {
                ""
            } else {
                "s"
            }
        ),
    );
    let input = s.input_tokens.unwrap_or(0);
    let output = s.output_tokens.unwrap_or(0);
    if input != 0 || output != 0 || s.estimated_cost_usd.is_some_and(|c| c != 0.0) {
        field(
            "tokens",
            format!(
                "{} in / {} out, {} cache read, {} reasoning; cost {}",
                count(input),
                count(output),
                count(s.cache_read_tokens.unwrap_or(0)),
                count(s.reasoning_tokens.unwrap_or(0)),
                cost(s.actual_cost_usd.or(s.estimated_cost_usd))
            ),
        );
    }
    text
}

/// The text of a message's content, for reading.
pub fn content_text(content: Option<&Content>) -> Option<String> {
    let content = content?;
    Some(match content {
        Content::Text(text) => text.clone(),
        Content::Structured(Value::Array(parts)) => parts
            .iter()
            .map(|part| match part {
                Value::String(text) => text.clone(),
                Value::Object(map) => match map.get("type").and_then(Value::as_str) {
                    Some("text" | "input_text" | "output_text") => map
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    Some(kind) => format!("[{kind}]"),
                    None => part.to_string(),
                },
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Content::Structured(other) => other.to_string(),
        Content::Integer(i) => i.to_string(),
        Content::Real(f) => f.to_string(),
        Content::Bool(b) => b.to_string(),
        Content::Bytes(bytes) => format!("[{} bytes of binary content]", bytes.len()),
    })
}

const MAX_TOOL_LINES: usize = 12;
const MAX_ARGUMENTS: usize = 160;
/// A tool result's line is cut here unless `--full` (one-line JSON can be huge).
const MAX_TOOL_LINE: usize = 300;

/// One message: a heading line, its reasoning (folded unless asked for),
/// its content, and its tool calls folded to one line each.
pub fn render_message(text: &mut String, out: &Output, m: &Message, args: Folding) {
    let role_colour = match m.role.as_str() {
        "user" => "1;32",
        "assistant" => "1;36",
        "tool" => "1;35",
        "system" => "1;33",
        _ => "1",
    };
    let mut heading = out.style(role_colour, &m.role);
    if let Some(tool) = &m.tool_name {
        let _ = write!(heading, " {}", out.bold(tool));
    }
    let mut meta = vec![format!("#{}", m.id), datetime_seconds(m.timestamp)];
    if let Some(call) = &m.tool_call_id {
        meta.push(format!("answers {call}"));
    }
    if let Some(reason) = &m.finish_reason {
        meta.push(reason.clone());
    }
    if let Some(tokens) = m.token_count {
        meta.push(format!("{tokens} tokens"));
    }
    if m.active == 0 {
        meta.push(
            if m.compacted != 0 {
                "compacted"
            } else {
                "rewound"
            }
            .to_owned(),
        );
    }
    let _ = writeln!(text, "── {heading}  {}", out.dim(&meta.join(" · ")));

    let reasoning = m
        .reasoning
        .as_deref()
        .or(m.reasoning_content.as_deref())
        .filter(|r| !r.trim().is_empty());
    if let Some(reasoning) = reasoning {
        if args.reasoning {
            let _ = writeln!(text, "{}", out.dim("  ▾ reasoning"));
            for line in reasoning.lines() {
                let _ = writeln!(text, "  {}", out.dim(&format!("│ {line}")));
            }
        } else {
            let _ = writeln!(
                text,
                "{}",
                out.dim(&format!(
                    "  ▸ reasoning ({} chars, folded; --reasoning shows it)",
                    reasoning.chars().count()
                ))
            );
        }
    }

    if let Some(body) = content_text(m.content.as_ref()).filter(|b| !b.is_empty()) {
        let lines: Vec<&str> = body.lines().collect();
        let limit = if m.role == "tool" && !args.full {
            MAX_TOOL_LINES
        } else {
            usize::MAX
        };
        for line in lines.iter().take(limit) {
            if m.role == "tool" && !args.full {
                let _ = writeln!(text, "{}", shorten(line, MAX_TOOL_LINE));
            } else {
                let _ = writeln!(text, "{line}");
            }
        }
        if lines.len() > limit {
            let _ = writeln!(
                text,
                "{}",
                out.dim(&format!(
                    "… {} more lines (--full shows them)",
                    lines.len() - limit
                ))
            );
        }
    }

    for call in tool_calls(m.tool_calls.as_ref()) {
        let arguments = if args.full {
            call.arguments
        } else {
            shorten(&one_line(&call.arguments), MAX_ARGUMENTS)
        };
        let id = call
            .id
            .map(|id| format!("  {}", out.dim(&format!("[{id}]"))))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "  → {}({arguments}){id}",
            out.style("1;35", &call.name)
        );
    }
    text.push('\n');
}

/// A tool call, as the conversation shows it.
pub struct ToolCall {
    /// The call's id, which a tool result answers.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments, as the model wrote them (usually JSON).
    pub arguments: String,
}

/// The OpenAI-style tool calls of a message (`[{id, type, function: {name, arguments}}]`).
pub fn tool_calls(value: Option<&Value>) -> Vec<ToolCall> {
    let calls: Vec<&Value> = match value {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    };
    calls
        .into_iter()
        .map(|call| {
            let function = call.get("function").unwrap_or(call);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            ToolCall {
                id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                name,
                arguments,
            }
        })
        .collect()
}
