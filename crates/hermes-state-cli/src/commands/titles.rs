//! `title set|get|resolve|next`.

use hermes_state::prelude::*;
use hermes_state::{SessionDb, SessionStore};
use serde_json::json;

use crate::cli::TitleSetArgs;
use crate::error::{CliError, CliResult};
use crate::store::{Access, Context};

/// `title set`
pub fn set(ctx: &Context, args: &TitleSetArgs) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    let title = Some(args.title.as_str()).filter(|t| !t.is_empty());
    ctx.require_session(db, &args.id)?;
    require_title_free(ctx, db, &args.id, title)?;
    ctx.start_writing(db)?;
    let found = db
        .set_session_title(&args.id, title)
        .map_err(|e| ctx.fail(&e))?;
    if !found {
        return Err(ctx.unknown_session(&args.id));
    }
    // The stored, normalised title.
    let stored = db.get_session_title(&args.id).map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx.out.json(&json!({"id": args.id, "title": stored}));
    }
    if !ctx.out.quiet {
        match &stored {
            Some(title) => ctx.out.line(format!("session {}: “{title}”", args.id))?,
            None => ctx
                .out
                .line(format!("session {}: title cleared", args.id))?,
        }
    }
    Ok(())
}

/// The library's refusals of a title (`api.md` §6.2), checked on the read
/// side so that a refused title changes nothing (the library checks them
/// again in its write): too long once normalised, or held by another
/// session that is not a compression ancestor of this one (a continuation
/// takes over its ancestor's title).
fn require_title_free(
    ctx: &Context,
    db: &dyn SessionStore,
    session_id: &str,
    title: Option<&str>,
) -> CliResult {
    let title = SessionDb::sanitize_title(title).map_err(|e| ctx.fail(&e))?;
    let Some(title) = title else {
        return Ok(());
    };
    let Some(holder) = db
        .get_session_by_title(&title)
        .map_err(|e| ctx.fail(&e))?
        .filter(|holder| holder.id != session_id)
    else {
        return Ok(());
    };
    if is_compression_ancestor(ctx, db, session_id, &holder.id)? {
        return Ok(());
    }
    Err(ctx.fail(&hermes_state::Error::TitleInUse {
        title,
        session_id: holder.id,
    }))
}

/// Whether `ancestor` is reached from `session_id` by walking up parent
/// links through parents ended by compression (cycles end the walk).
fn is_compression_ancestor(
    ctx: &Context,
    db: &dyn SessionStore,
    session_id: &str,
    ancestor: &str,
) -> CliResult<bool> {
    let mut seen = vec![session_id.to_owned()];
    let mut current = session_id.to_owned();
    while let Some(parent_id) = db
        .get_session(&current)
        .map_err(|e| ctx.fail(&e))?
        .and_then(|s| s.parent_session_id)
    {
        let Some(parent) = db.get_session(&parent_id).map_err(|e| ctx.fail(&e))? else {
            return Ok(false);
        };
        if parent.end_reason.as_deref() != Some("compression") || seen.contains(&parent.id) {
            return Ok(false);
        }
        if parent.id == ancestor {
            return Ok(true);
        }
        seen.push(parent.id.clone());
        current = parent.id;
    }
    Ok(false)
}

/// `title get`
pub fn get(ctx: &Context, id: &str) -> CliResult {
    let db = ctx.open(Access::Read)?;
    ctx.require_session(db.as_ref(), id)?;
    let title = db.get_session_title(id).map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx.out.json(&json!({"id": id, "title": title}));
    }
    match title {
        Some(title) => ctx.out.line(title),
        None => {
            ctx.out.note(format!("session {id} has no title"));
            Ok(())
        }
    }
}

/// `title resolve`
pub fn resolve(ctx: &Context, title: &str) -> CliResult {
    let db = ctx.open(Access::Read)?;
    let id = db
        .resolve_session_by_title(title)
        .map_err(|e| ctx.fail(&e))?;
    let Some(id) = id else {
        return Err(CliError::failed(format!(
            "title resolve: no session has the title {title:?} in {}",
            ctx.path.display()
        ))
        .hint(
            "titles are matched exactly (case-sensitive); `hermes-state sessions list` shows them",
        ));
    };
    if ctx.out.json {
        return ctx.out.json(&json!({"title": title, "session_id": id}));
    }
    ctx.out.line(id)
}

/// `title next`
pub fn next(ctx: &Context, title: &str) -> CliResult {
    let next = ctx
        .open(Access::Read)?
        .get_next_title_in_lineage(title)
        .map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx.out.json(&json!({"base": title, "title": next}));
    }
    ctx.out.line(next)
}
