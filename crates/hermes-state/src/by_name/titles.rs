//! api.md §6: titles.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
        // api.md §6: titles
        "sanitize_title" => {
            args.only(&["title"])?;
            Ok(json(SessionDb::sanitize_title(args.opt_str("title")?)?))
        }
        "set_session_title" => {
            args.only(&["session_id", "title"])?;
            Ok(json(db.set_session_title(
                args.str("session_id")?,
                args.opt_str("title")?,
            )?))
        }
        "set_auto_title_if_empty" => {
            args.only(&["session_id", "title"])?;
            Ok(json(db.set_auto_title_if_empty(
                args.str("session_id")?,
                args.str("title")?,
            )?))
        }
        "get_session_title" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_session_title(args.str("session_id")?)?))
        }
        "get_session_by_title" => {
            args.only(&["title"])?;
            Ok(json(db.get_session_by_title(args.str("title")?)?))
        }
        "resolve_session_by_title" => {
            args.only(&["title"])?;
            Ok(json(db.resolve_session_by_title(args.str("title")?)?))
        }
        "get_next_title_in_lineage" => {
            args.only(&["base_title"])?;
            Ok(json(db.get_next_title_in_lineage(args.str("base_title")?)?))
        }
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
