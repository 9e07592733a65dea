//! `sessions rewind|restore` (`api.md` §4.5).

use hermes_state::SessionStore;
use serde_json::{Value, json};

use crate::cli::{RestoreArgs, RewindArgs};
use crate::commands::sessions::content_text;
use crate::commands::to_json;
use crate::error::CliResult;
use crate::output::{one_line, shorten};
use crate::store::{Access, Context};

/// `sessions rewind`
pub fn rewind(ctx: &Context, args: &RewindArgs) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    ctx.require_session(db, &args.id)?;
    require_rewind_target(ctx, db, &args.id, args.to)?;
    ctx.start_writing(db)?;
    let result = db
        .rewind_to_message(&args.id, args.to)
        .map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if out.json {
        let mut value = to_json!(&result);
        if let Value::Object(map) = &mut value {
            map.insert("session_id".to_owned(), args.id.clone().into());
        }
        return out.json(&value);
    }
    if out.quiet {
        return Ok(());
    }
    let said = content_text(result.target_message.content.as_ref())
        .map(|text| format!(" (“{}”)", shorten(&one_line(&text), 60)))
        .unwrap_or_default();
    let head = match result.new_head_id {
        Some(head) => format!("the conversation now ends at message #{head}"),
        None => "no live message is left".to_owned(),
    };
    out.line(format!(
        "rewound session {} to user message #{}{said}: {} message(s) rewound; {head} \
         (`sessions restore {} --since {}` undoes it)",
        args.id, args.to, result.rewound_count, args.id, args.to
    ))
}

/// The library's refusals of a rewind target (`api.md` §4.5: a message of
/// the session, with the role `user`), checked on the read side so that a
/// mistyped id changes nothing (the library checks them again in its write).
fn require_rewind_target(
    ctx: &Context,
    db: &dyn SessionStore,
    session_id: &str,
    message_id: i64,
) -> CliResult {
    let around = db
        .get_messages_around(session_id, message_id, 0)
        .map_err(|e| ctx.fail(&e))?;
    let refusal = match around.window.get(around.messages_before) {
        Some(target) if target.id == message_id && target.role == "user" => return Ok(()),
        Some(target) if target.id == message_id => format!(
            "rewind target must be a 'user' message (got role='{}', id={message_id})",
            target.role
        ),
        _ => format!("message {message_id} not found in session {session_id}"),
    };
    Err(ctx.fail(&hermes_state::Error::InvalidInput(refusal)))
}

/// `sessions restore`
pub fn restore(ctx: &Context, args: &RestoreArgs) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    ctx.require_session(db, &args.id)?;
    let since = args.since.unwrap_or(0);
    ctx.start_writing(db)?;
    let restored = db
        .restore_rewound(&args.id, since)
        .map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if out.json {
        return out.json(&json!({
            "session_id": args.id,
            "since": args.since,
            "restored": restored,
        }));
    }
    if out.quiet {
        return Ok(());
    }
    let scope = match args.since {
        Some(since) => format!(" from message #{since} on"),
        None => String::new(),
    };
    out.line(format!(
        "restored {restored} rewound message(s) of session {}{scope}",
        args.id
    ))
}
