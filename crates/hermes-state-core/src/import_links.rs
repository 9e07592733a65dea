//! Which parent links of an `import_sessions` (`api.md` §11.2) are made:
//! the original's rule, written once for every backend over the two reads
//! it needs ([`StoredLinks`]).
//!
//! The import writes every new session without its parent, then takes the
//! `(child, parent)` links in payload order. A link is made when the parent
//! exists (in the store, the import's sessions included) and following
//! parents up from it never comes back to a session already met on the
//! way, the child included; otherwise the child stays a root ("detached").
//! The walk follows the import's own links first — those made and those
//! still to come, not those refused — and the store's `parent_session_id`
//! for any other session. Any repeated session on the walk counts as a
//! cycle, even one the child is not part of.

use std::collections::{HashMap, HashSet};

/// The reads the rule asks of a store, inside the import's transaction.
pub trait StoredLinks {
    /// The store's error.
    type Error;
    /// Whether a session with this id exists.
    fn session_exists(&mut self, id: &str) -> Result<bool, Self::Error>;
    /// The session's `parent_session_id`: `None` for a root and for an
    /// unknown session.
    fn parent_of(&mut self, id: &str) -> Result<Option<String>, Self::Error>;
}

/// For each `(child, parent)` link, in order: `true` to link the child to
/// its parent, `false` to leave it detached (see the module documentation).
/// The reads never depend on the links made before, so a backend may apply
/// the plan after computing it.
pub fn plan_parent_links<S: StoredLinks>(
    store: &mut S,
    links: &[(String, String)],
) -> Result<Vec<bool>, S::Error> {
    let mut pending: HashMap<&str, &str> = links
        .iter()
        .map(|(child, parent)| (child.as_str(), parent.as_str()))
        .collect();
    let mut plan = Vec::with_capacity(links.len());
    for (child, parent) in links {
        let link = store.session_exists(parent)? && !closes_cycle(store, &pending, child, parent)?;
        if !link {
            pending.remove(child.as_str());
        }
        plan.push(link);
    }
    Ok(plan)
}

/// Whether the walk up from `parent` meets a session twice (`child` counts
/// as met).
fn closes_cycle<S: StoredLinks>(
    store: &mut S,
    pending: &HashMap<&str, &str>,
    child: &str,
    parent: &str,
) -> Result<bool, S::Error> {
    let mut seen: HashSet<String> = HashSet::from([child.to_owned()]);
    let mut current = parent.to_owned();
    while !current.is_empty() {
        if !seen.insert(current.clone()) {
            return Ok(true);
        }
        current = match pending.get(current.as_str()) {
            Some(next) => (*next).to_owned(),
            None => match store.parent_of(&current)? {
                Some(next) => next,
                None => return Ok(false),
            },
        };
    }
    Ok(false)
}
