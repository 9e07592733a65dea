//! `export --format markdown --session ID`: one conversation, its active
//! messages, as the Markdown of [`crate::render::markdown`].

use std::io::Write;

use hermes_state::{MessagePage, SessionDb};

use crate::cli::ExportArgs;
use crate::error::CliResult;
use crate::render::markdown;
use crate::store::Context;

/// Writes the document; returns the (sessions, messages) written, as the
/// other formats do. The caller checked that `--session` names a session.
pub fn export(
    ctx: &Context,
    db: &SessionDb,
    args: &ExportArgs,
    writer: &mut dyn Write,
) -> CliResult<(u64, u64)> {
    let Some(id) = &args.session else {
        return Ok((0, 0));
    };
    let Some(session) = db.get_session(id).map_err(|e| ctx.fail(&e))? else {
        return Err(ctx.unknown_session(id));
    };
    let messages = db
        .get_messages_page(&session.id, MessagePage::default())
        .map_err(|e| ctx.fail(&e))?;
    writer.write_all(markdown::conversation(&session, &messages).as_bytes())?;
    Ok((1, messages.len() as u64))
}
