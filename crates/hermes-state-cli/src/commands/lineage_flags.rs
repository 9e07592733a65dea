//! `sessions archive|unarchive|pin|unpin`: a flag on a whole compression
//! lineage (`api.md` §2.5).

use std::collections::BTreeSet;

use hermes_state::SessionStore;
use serde_json::json;

use crate::error::CliResult;
use crate::store::{Access, Context};

/// The lineage flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `archived`: hidden from the session picker.
    Archived,
    /// `pinned`: left alone by auto archive.
    Pinned,
}

impl Flag {
    fn column(self) -> &'static str {
        match self {
            Flag::Archived => "archived",
            Flag::Pinned => "pinned",
        }
    }

    fn verb(self, on: bool) -> &'static str {
        match (self, on) {
            (Flag::Archived, true) => "archived",
            (Flag::Archived, false) => "unarchived",
            (Flag::Pinned, true) => "pinned",
            (Flag::Pinned, false) => "unpinned",
        }
    }
}

/// The sessions of the lineage tree around `id` (its ancestors and
/// descendants, which hold its compression lineage) whose flag is on.
///
/// The library's setter says only whether a row matched, not how many
/// sessions changed; comparing this set before and after tells that.
fn flagged(
    ctx: &Context,
    db: &dyn SessionStore,
    id: &str,
    flag: Flag,
) -> CliResult<BTreeSet<String>> {
    let mut ids: BTreeSet<String> = BTreeSet::new();
    for entry in db.ancestors(id).map_err(|e| ctx.fail(&e))? {
        ids.insert(entry.id);
    }
    for entry in db.descendants(id).map_err(|e| ctx.fail(&e))? {
        ids.insert(entry.id);
    }
    let mut on = BTreeSet::new();
    for id in ids {
        if let Some(session) = db.get_session(&id).map_err(|e| ctx.fail(&e))? {
            let value = match flag {
                Flag::Archived => session.archived,
                Flag::Pinned => session.pinned,
            };
            if value != 0 {
                on.insert(id);
            }
        }
    }
    Ok(on)
}

/// Sets or clears `flag` on the compression lineage of `id` and says how
/// many sessions changed.
pub fn set(ctx: &Context, id: &str, flag: Flag, on: bool) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    ctx.require_session(db, id)?;
    let before = flagged(ctx, db, id, flag)?;
    ctx.start_writing(db)?;
    let matched = match flag {
        Flag::Archived => db.set_session_archived(id, on),
        Flag::Pinned => db.set_session_pinned(id, on),
    }
    .map_err(|e| ctx.fail(&e))?;
    if !matched {
        return Err(ctx.unknown_session(id));
    }
    let after = flagged(ctx, db, id, flag)?;
    let changed: Vec<&String> = if on {
        after.difference(&before).collect()
    } else {
        before.difference(&after).collect()
    };
    let out = &ctx.out;
    if out.json {
        return out.json(&json!({
            "id": id,
            flag.column(): on,
            "changed": changed.len(),
            "sessions": changed,
        }));
    }
    if out.quiet {
        return Ok(());
    }
    let verb = flag.verb(on);
    out.line(match changed.as_slice() {
        [] => format!("session {id}: its compression lineage was already {verb}; nothing changed"),
        [only] if only.as_str() == id => format!("{verb} session {id}"),
        _ => format!(
            "{verb} session {id} with its compression lineage: {} session(s) changed ({})",
            changed.len(),
            changed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}
