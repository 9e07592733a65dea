//! `sessions show|create|end|reopen|delete|clear|lineage`.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};

use hermes_state::{Content, LineageEntry, Message, MessagePage, NewSession, Session, SessionDb};
use serde_json::{Value, json};

use crate::cli::{ClearArgs, CreateArgs, DeleteArgs, EndArgs, ShowArgs};
use crate::commands::{session_count, to_json};
use crate::confirm::{Consent, sessions_summary};
use crate::error::CliResult;
use crate::output::{self, Output, cost, count, datetime, datetime_seconds, one_line, shorten};
use crate::store::{Access, Context};

/// Finds a session by id, or else by title.
fn find_session(ctx: &Context, db: &SessionDb, id: &str) -> CliResult<Session> {
    if let Some(session) = db.get_session(id).map_err(|e| ctx.fail(&e))? {
        return Ok(session);
    }
    if let Some(by_title) = db.resolve_session_by_title(id).map_err(|e| ctx.fail(&e))?
        && let Some(session) = db.get_session(&by_title).map_err(|e| ctx.fail(&e))?
    {
        return Ok(session);
    }
    Err(ctx.unknown_session(id))
}

/// `sessions show`
pub fn show(ctx: &Context, args: &ShowArgs) -> CliResult {
    let db = ctx.open(Access::Read)?;
    let session = find_session(ctx, &db, &args.id)?;
    let page = MessagePage {
        include_inactive: args.all,
        limit: None,
        offset: 0,
    };
    let messages = db
        .get_messages_page(&session.id, page)
        .map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if out.json {
        // The original's export_session shape: the session row, then `messages`.
        let mut value = to_json!(&session);
        if let Value::Object(map) = &mut value {
            map.insert("messages".to_owned(), to_json!(&messages));
        }
        return out.json(&value);
    }
    let mut text = session_header(out, &session);
    text.push('\n');
    if messages.is_empty() {
        let _ = writeln!(text, "{}", out.dim("(no messages)"));
    }
    for message in &messages {
        render_message(&mut text, out, message, args);
    }
    out.text(text)
}

fn session_header(out: &Output, s: &Session) -> String {
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
    let mut when = datetime_seconds(s.started_at) + " UTC";
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

fn render_message(text: &mut String, out: &Output, m: &Message, args: &ShowArgs) {
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
            let _ = writeln!(text, "{line}");
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

struct ToolCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// The OpenAI-style tool calls of a message (`[{id, type, function: {name, arguments}}]`).
fn tool_calls(value: Option<&Value>) -> Vec<ToolCall> {
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

/// A new session id in the original's shape: `YYYYMMDD_HHMMSS_xxxxxx` (UTC).
fn new_session_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{}_{:06x}", output::id_stamp(now), random & 0xff_ffff)
}

/// `sessions create`
pub fn create(ctx: &Context, args: &CreateArgs) -> CliResult {
    let db = ctx.open(Access::Create)?;
    let id = args.id.clone().unwrap_or_else(new_session_id);
    let existed = db.get_session(&id).map_err(|e| ctx.fail(&e))?.is_some();
    let mut session = NewSession::new(&id, &args.source);
    session.model = args.model.clone();
    session.user_id = args.user_id.clone();
    session.parent_session_id = args.parent.clone();
    session.cwd = args.cwd.clone();
    session.system_prompt = args.system_prompt.clone();
    db.create_session(&session).map_err(|e| ctx.fail(&e))?;
    if existed {
        ctx.out.note(format!(
            "note: session {id} already existed; only its empty fields were filled"
        ));
    }
    if ctx.out.json {
        let row = ctx.require_session(&db, &id)?;
        return ctx.out.json(&to_json!(&row));
    }
    ctx.out.line(&id)
}

/// Prints a session row (JSON) or a confirmation (human).
fn confirm(ctx: &Context, db: &SessionDb, id: &str, message: String) -> CliResult {
    if ctx.out.json {
        let row = ctx.require_session(db, id)?;
        return ctx.out.json(&to_json!(&row));
    }
    if !ctx.out.quiet {
        ctx.out.line(message)?;
    }
    Ok(())
}

/// `sessions end`
pub fn end(ctx: &Context, args: &EndArgs) -> CliResult {
    let db = ctx.open(Access::Write)?;
    let before = ctx.require_session(&db, &args.id)?;
    if before.ended_at.is_some() {
        // The first end wins, as in the original: nothing changes.
        return confirm(
            ctx,
            &db,
            &args.id,
            format!(
                "session {} was already ended ({}); the first end is kept (`sessions reopen` makes it live again)",
                args.id,
                before.end_reason.as_deref().unwrap_or("no reason")
            ),
        );
    }
    db.end_session(&args.id, &args.reason)
        .map_err(|e| ctx.fail(&e))?;
    confirm(
        ctx,
        &db,
        &args.id,
        format!("ended session {} ({})", args.id, args.reason),
    )
}

/// `sessions reopen`
pub fn reopen(ctx: &Context, id: &str) -> CliResult {
    let db = ctx.open(Access::Write)?;
    ctx.require_session(&db, id)?;
    db.reopen_session(id).map_err(|e| ctx.fail(&e))?;
    confirm(ctx, &db, id, format!("reopened session {id}"))
}

/// `sessions delete`: every id must exist, else nothing is deleted (a typo
/// does not delete the rest of the list).
pub fn delete(ctx: &Context, args: &DeleteArgs) -> CliResult {
    let consent = Consent::new(args.consent.yes);
    consent.require(ctx)?;
    let db = ctx.open(Access::Write)?;
    let mut ids: Vec<&str> = Vec::new();
    for id in &args.ids {
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    for id in &ids {
        ctx.require_session(&db, id)?;
    }
    consent.ask(
        ctx,
        &format!(
            "delete {} and their messages (and their delegate children)?",
            sessions_summary(&ids)
        ),
    )?;
    let before = session_count(ctx, &db)?;
    db.delete_sessions(&ids, args.sessions_dir.as_deref())
        .map_err(|e| ctx.fail(&e))?;
    let deleted = before - session_count(ctx, &db)?;
    if ctx.out.json {
        let mut value = json!({"ids": ids, "deleted": true, "sessions_deleted": deleted});
        if let ([id], Value::Object(map)) = (ids.as_slice(), &mut value) {
            map.insert("id".to_owned(), (*id).into());
        }
        return ctx.out.json(&value);
    }
    if !ctx.out.quiet {
        let delegates = deleted - ids.len() as i64;
        let extra = if delegates > 0 {
            format!(" and {delegates} delegate session(s)")
        } else {
            String::new()
        };
        let what = match ids.as_slice() {
            [id] => format!("session {id}"),
            _ => sessions_summary(&ids),
        };
        ctx.out.line(format!("deleted {what}{extra}"))?;
    }
    Ok(())
}

/// `sessions clear`
pub fn clear(ctx: &Context, args: &ClearArgs) -> CliResult {
    let id = args.id.as_str();
    let consent = Consent::new(args.consent.yes);
    consent.require(ctx)?;
    let db = ctx.open(Access::Write)?;
    ctx.require_session(&db, id)?;
    let removed = db.message_count(Some(id)).map_err(|e| ctx.fail(&e))?;
    consent.ask(
        ctx,
        &format!("delete the {removed} message(s) of session {id}?"),
    )?;
    db.clear_messages(id).map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx
            .out
            .json(&json!({"id": id, "messages_deleted": removed}));
    }
    if !ctx.out.quiet {
        ctx.out.line(format!(
            "cleared session {id}: {removed} message(s) deleted"
        ))?;
    }
    Ok(())
}

/// `sessions lineage`
pub fn lineage(ctx: &Context, id: &str) -> CliResult {
    let db = ctx.open(Access::Read)?;
    let ancestors = db.ancestors(id).map_err(|e| ctx.fail(&e))?;
    if ancestors.is_empty() {
        return Err(ctx.unknown_session(id));
    }
    let descendants = db.descendants(id).map_err(|e| ctx.fail(&e))?;
    let root = ancestors
        .last()
        .map(|a| a.id.clone())
        .unwrap_or_else(|| id.to_owned());
    let out = &ctx.out;
    if out.json {
        return out.json(&json!({
            "id": id,
            "root": root,
            "ancestors": to_json!(&ancestors),
            "descendants": to_json!(&descendants),
        }));
    }
    let mut text = String::new();
    // The chain from the root down to the session…
    let chain: Vec<&LineageEntry> = ancestors.iter().rev().collect();
    for (depth, entry) in chain.iter().enumerate() {
        let prefix = if depth == 0 {
            String::new()
        } else {
            format!("{}└─ ", "   ".repeat(depth - 1))
        };
        let _ = writeln!(
            text,
            "{prefix}{}",
            describe_entry(out, entry, entry.id == id)
        );
    }
    // …then the session's descendants as a tree below it.
    let mut children: HashMap<&str, Vec<&LineageEntry>> = HashMap::new();
    for entry in descendants.iter().skip(1) {
        if let Some(parent) = entry.parent_session_id.as_deref() {
            children.entry(parent).or_default().push(entry);
        }
    }
    let indent = if chain.len() > 1 {
        "   ".repeat(chain.len() - 1)
    } else {
        String::new()
    };
    let mut seen = HashSet::from([id.to_owned()]);
    render_children(&mut text, out, &children, id, &indent, &mut seen);
    out.text(text)
}

fn render_children(
    text: &mut String,
    out: &Output,
    children: &HashMap<&str, Vec<&LineageEntry>>,
    parent: &str,
    indent: &str,
    seen: &mut HashSet<String>,
) {
    let Some(list) = children.get(parent) else {
        return;
    };
    for (i, child) in list.iter().enumerate() {
        if !seen.insert(child.id.clone()) {
            continue;
        }
        let last = i + 1 == list.len();
        let branch = if last { "└─ " } else { "├─ " };
        let _ = writeln!(
            text,
            "{indent}{branch}{}",
            describe_entry(out, child, false)
        );
        let deeper = format!("{indent}{}", if last { "   " } else { "│  " });
        render_children(text, out, children, &child.id, &deeper, seen);
    }
}

fn describe_entry(out: &Output, entry: &LineageEntry, this: bool) -> String {
    let mut line = if this {
        out.bold(&entry.id)
    } else {
        entry.id.clone()
    };
    if let Some(title) = &entry.title {
        let _ = write!(line, "  “{title}”");
    }
    let _ = write!(line, "  {}", out.dim(&datetime(entry.started_at)));
    if this {
        line.push_str(&out.style("1;33", "  ← this session"));
    }
    line
}
