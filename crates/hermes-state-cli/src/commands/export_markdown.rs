//! `export --format markdown --session ID [--lineage]`: one conversation,
//! its active messages, as the Markdown of [`crate::render::markdown`]; with
//! `--lineage` every segment of its compression chain, root to tip, one
//! after another under a rule.

use std::io::Write;

use std::cell::RefCell;
use std::ops::ControlFlow;

use hermes_state::SessionStore;

use crate::cli::ExportArgs;
use crate::error::CliResult;
use crate::render::markdown::Document;
use crate::store::Context;

/// Writes the document, message by message from one read snapshot
/// ([`SessionStore::walk_messages`]); returns the (sessions, messages) written,
/// as the other formats do. The caller checked that `--session` names a
/// session.
pub fn export(
    ctx: &Context,
    store: &dyn SessionStore,
    args: &ExportArgs,
    writer: &mut dyn Write,
) -> CliResult<(u64, u64)> {
    let Some(id) = &args.session else {
        return Ok((0, 0));
    };
    let ids = if args.lineage {
        store
            .get_compression_lineage(id)
            .map_err(|e| ctx.fail(&e))?
    } else {
        vec![id.clone()]
    };
    let (mut sessions, mut messages) = (0, 0);
    for (index, segment) in ids.iter().enumerate() {
        if index > 0 {
            writer.write_all(b"\n---\n\n")?;
        }
        messages += export_session(ctx, store, segment, writer)?;
        sessions += 1;
    }
    Ok((sessions, messages))
}

/// One session's document; the messages written.
fn export_session(
    ctx: &Context,
    store: &dyn SessionStore,
    id: &str,
    writer: &mut dyn Write,
) -> CliResult<u64> {
    let Some(session) = store.get_session(id).map_err(|e| ctx.fail(&e))? else {
        return Err(ctx.unknown_session(id));
    };
    // Both callbacks write to the one document (and note the first output
    // error), one after the other.
    let document = RefCell::new(None);
    let mut writer = Some(writer);
    let output_error = RefCell::new(None);
    let stop = |error: std::io::Error| {
        output_error.replace(Some(error));
        ControlFlow::Break(())
    };
    let walked = store.walk_messages(
        &session.id,
        false,
        // Called once; the writer moves into the document then.
        &mut |count| match writer.take().map(|w| Document::start(w, &session, count)) {
            Some(Ok(started)) => {
                document.replace(Some(started));
                ControlFlow::Continue(())
            }
            Some(Err(error)) => stop(error),
            None => ControlFlow::Break(()),
        },
        &mut |message| match document.borrow_mut().as_mut().map(|d| d.message(&message)) {
            Some(Err(error)) => stop(error),
            _ => ControlFlow::Continue(()),
        },
    );
    if let Some(error) = output_error.into_inner() {
        return Err(error.into());
    }
    let messages = walked.map_err(|e| ctx.fail(&e))?;
    if let Some(doc) = document.into_inner() {
        doc.finish()?;
    }
    Ok(messages)
}
