//! `search --by-conversation`: hits collapsed by compression lineage, one
//! result per conversation. `--session` (its lineage, or one segment with
//! `--segment-only`) and `--since` / `--until` narrow the hits before they
//! are grouped (the library's `ConversationScope`), so the counts and spans
//! are those of the hits in scope.

use std::fmt::Write as _;

use hermes_state::{ConversationHit, SearchOptions, SessionStore};

use crate::cli::SearchArgs;
use crate::commands::to_json;
use crate::error::CliResult;
use crate::local_time;
use crate::output::{datetime, when};
use crate::row_format::RowFormat;
use crate::store::Context;

/// `search --by-conversation`: `--limit` and `--offset` count conversations.
pub fn search(
    ctx: &Context,
    db: &dyn SessionStore,
    args: &SearchArgs,
    options: &SearchOptions,
    format: RowFormat,
) -> CliResult {
    let scope = super::search::scope(ctx, db, args)?;
    let conversations = db
        .search_conversations_in(&args.query, options, &scope)
        .map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if conversations.is_empty()
        && let Some(error) = super::search::unrunnable(ctx, &args.query)
    {
        return Err(error);
    }
    if format.print(out, &to_json!(&conversations))? {
        return Ok(());
    }
    if conversations.is_empty() {
        out.note(format!("no conversations match {:?}", args.query));
        return Ok(());
    }
    let mut text = String::new();
    for conversation in &conversations {
        let _ = writeln!(text, "{}", header(ctx, conversation));
        let best = &conversation.best;
        let mut role = best.role.clone();
        if let Some(tool) = &best.tool_name {
            let _ = write!(role, " {tool}");
        }
        let _ = writeln!(
            text,
            "    {} {}  {}",
            out.dim("best in"),
            best.session_id,
            out.dim(&format!("{role}  {}  #{}", when(best.timestamp), best.id)),
        );
        super::search::write_hit_body(&mut text, out, best, args.context);
    }
    out.text(text)?;
    let n = conversations.len();
    out.note(format!(
        "{n} conversation{}{}",
        if n == 1 { "" } else { "s" },
        if n as u32 == args.limit {
            format!(
                " (more with --offset {})",
                args.offset.saturating_add(args.limit)
            )
        } else {
            String::new()
        }
    ));
    Ok(())
}

/// `ROOT  Title  [source · model]  3 hits in 2 segments · SPAN ZONE`.
fn header(ctx: &Context, conversation: &ConversationHit) -> String {
    let out = &ctx.out;
    let best = &conversation.best;
    let mut origin = best.source.clone().unwrap_or_else(|| "?".to_owned());
    if let Some(model) = &best.model {
        let _ = write!(origin, " · {model}");
    }
    let title = conversation
        .title
        .as_deref()
        .map_or_else(|| out.dim("(untitled)"), |t| out.style("36", t));
    let hits = conversation.hits;
    let segments = conversation.session_ids.len();
    let mut counts = format!("{hits} hit{}", if hits == 1 { "" } else { "s" });
    if segments > 1 {
        let _ = write!(counts, " in {segments} segments");
    }
    let span = if conversation.first_timestamp == conversation.last_timestamp {
        datetime(conversation.first_timestamp)
    } else {
        format!(
            "{} – {}",
            datetime(conversation.first_timestamp),
            datetime(conversation.last_timestamp)
        )
    };
    format!(
        "{}  {}  {}  {}",
        out.bold(&conversation.root_session_id),
        title,
        out.dim(&format!("[{origin}]")),
        out.dim(&format!(
            "{counts} · {span} {}",
            local_time::label(conversation.last_timestamp)
        )),
    )
}
