//! `messages append|list`.

use hermes_state::prelude::*;
use std::io::{IsTerminal, Read};
use std::path::Path;

use hermes_state::{MessagePage, NewMessage};
use serde_json::json;

use crate::cli::{AppendArgs, MessagesListArgs};
use crate::commands::sessions::content_text;
use crate::commands::to_json;
use crate::error::{CliError, CliResult};
use crate::output::{datetime_seconds, one_line, shorten};
use crate::store::{Access, Context};

/// Where the content comes from: `--content`, `--content-file` (`-` is
/// stdin), else stdin when it is not a terminal. Empty stdin means no content
/// (NULL), so `--tool-calls` alone works in a pipe; `--content ""` stores "".
fn read_content(args: &AppendArgs) -> CliResult<Option<String>> {
    if let Some(text) = &args.content {
        return Ok(Some(text.clone()));
    }
    if let Some(file) = &args.content_file {
        if file == Path::new("-") {
            return read_stdin().map(Some);
        }
        return std::fs::read_to_string(file)
            .map(Some)
            .map_err(|e| CliError::io("cannot read --content-file", file, &e));
    }
    if std::io::stdin().is_terminal() {
        if args.tool_calls.is_some() {
            return Ok(None);
        }
        return Err(CliError::usage(
            "no content: give --content TEXT or --content-file FILE, or pipe the content on stdin",
        ));
    }
    let text = read_stdin()?;
    Ok((!text.is_empty()).then_some(text))
}

fn read_stdin() -> CliResult<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::failed(format!("cannot read the content from stdin: {e}")))?;
    Ok(text)
}

/// `messages append`
pub fn append(ctx: &Context, args: AppendArgs) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    let content = read_content(&args)?;
    ctx.require_session(db, &args.id)?;
    ctx.start_writing(db)?;
    let mut message = NewMessage::new(&args.id, args.role());
    message.content = content.map(Into::into);
    message.tool_calls = args.tool_calls;
    message.tool_name = args.tool_name;
    message.tool_call_id = args.tool_call_id;
    message.token_count = args.token_count;
    message.finish_reason = args.finish_reason;
    message.reasoning = args.reasoning;
    let id = db.append_message(&message).map_err(|e| {
        if e.kind() == hermes_state::ErrorKind::NotFound {
            ctx.unknown_session(&args.id)
        } else {
            ctx.fail(&e)
        }
    })?;
    if ctx.out.json {
        return ctx.out.json(&json!({"id": id, "session_id": args.id}));
    }
    ctx.out.line(id.to_string())
}

/// `messages list`
pub fn list(ctx: &Context, args: &MessagesListArgs) -> CliResult {
    let db = ctx.open(Access::Read)?;
    ctx.require_session(db.as_ref(), &args.id)?;
    let page = MessagePage {
        include_inactive: args.all,
        limit: args.limit.map(i64::from),
        offset: i64::from(args.offset),
    };
    let messages = db
        .get_messages_page(&args.id, page)
        .map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if out.json {
        return out.json(&to_json!(&messages));
    }
    let mut text = String::new();
    for m in messages {
        let body = content_text(m.content.as_ref()).unwrap_or_default();
        let calls = match &m.tool_calls {
            Some(serde_json::Value::Array(list)) if !list.is_empty() => {
                format!(" [{} tool call(s)]", list.len())
            }
            _ => String::new(),
        };
        text.push_str(&format!(
            "{:>6}  {}  {:<9}  {}{calls}\n",
            m.id,
            datetime_seconds(m.timestamp),
            m.role,
            shorten(&one_line(&body), 80),
        ));
    }
    out.text(text)
}
