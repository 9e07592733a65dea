//! `title set|get|resolve|next`.

use hermes_state::SessionStore;
use serde_json::json;

use crate::cli::TitleSetArgs;
use crate::error::{CliError, CliResult};
use crate::store::{Access, Context};

/// `title set`
pub fn set(ctx: &Context, args: &TitleSetArgs) -> CliResult {
    let db = ctx.open(Access::Write)?;
    let title = Some(args.title.as_str()).filter(|t| !t.is_empty());
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

/// `title get`
pub fn get(ctx: &Context, id: &str) -> CliResult {
    let db = ctx.open(Access::Read)?;
    ctx.require_session(&db, id)?;
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
    next_in(ctx, &ctx.open(Access::Read)?, title)
}

/// `title next` on any store.
pub(super) fn next_in(ctx: &Context, db: &dyn SessionStore, title: &str) -> CliResult {
    let next = db
        .get_next_title_in_lineage(title)
        .map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx.out.json(&json!({"base": title, "title": next}));
    }
    ctx.out.line(next)
}
