//! The compression chain through a session (`api.md` §9.2), written once
//! for every backend over the reads of [`LineageReads`].
//!
//! The original's rule, in full:
//! * an unknown session has no chain (`[]`);
//! * a branch child (`$._branched_from` in its `model_config`) is a
//!   conversation of its own (`[id]`);
//! * otherwise walk up while the current session is a compression child (it
//!   has a parent that ended with `compression`, and it is no branch child
//!   itself), then down from that root through the earliest non-branch
//!   child of each compression-ended session;
//! * a session that the downward walk does not reach (a later sibling of
//!   the chain) is a conversation of its own (`[id]`).
//!
//! Both walks stop at the first repeated id, so a damaged file whose parent
//! links form a cycle still answers; there is no step bound besides that,
//! as in the original.

use std::collections::HashSet;

/// What the rule reads of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineageNode {
    /// The session id.
    pub id: String,
    /// Its `parent_session_id`.
    pub parent: Option<String>,
    /// Its `end_reason`.
    pub end_reason: Option<String>,
    /// Whether its `model_config` is a JSON object with a non-null
    /// `_branched_from` ([`crate::lookups::has_marker`]).
    pub branched: bool,
}

impl LineageNode {
    fn ended_with_compression(&self) -> bool {
        self.end_reason.as_deref() == Some("compression")
    }
}

/// The reads the rule needs; each backend implements them with its own SQL.
pub trait LineageReads {
    /// The store's error.
    type Error;
    /// The session `id`, `None` when there is no such row.
    fn node(&mut self, id: &str) -> Result<Option<LineageNode>, Self::Error>;
    /// The children of `id` by `started_at` ascending (the first one that is
    /// not a branch child is taken).
    fn children(&mut self, id: &str) -> Result<Vec<LineageNode>, Self::Error>;
}

/// The compression chain through `session_id`, root first (module
/// documentation); `[]` for an unknown session.
pub fn compression_lineage<R: LineageReads>(
    reads: &mut R,
    session_id: &str,
) -> Result<Vec<String>, R::Error> {
    let Some(session) = reads.node(session_id)? else {
        return Ok(Vec::new());
    };
    if session.branched {
        return Ok(vec![session.id]);
    }
    let mut root = session;
    let mut above: HashSet<String> = HashSet::from([root.id.clone()]);
    while let Some(parent) = compression_parent(reads, &root)? {
        if !above.insert(parent.id.clone()) {
            break;
        }
        root = parent;
    }
    let mut chain = vec![root.id.clone()];
    let mut seen: HashSet<String> = HashSet::from([root.id.clone()]);
    let mut current = root;
    while current.ended_with_compression() {
        let next = reads
            .children(&current.id)?
            .into_iter()
            .find(|child| !child.branched);
        let Some(next) = next else { break };
        if !seen.insert(next.id.clone()) {
            break;
        }
        chain.push(next.id.clone());
        current = next;
    }
    if seen.contains(session_id) {
        Ok(chain)
    } else {
        Ok(vec![session_id.to_owned()])
    }
}

/// The parent of `child` when `child` is its compression continuation: a
/// parent that exists and ended with `compression`, of a child that is no
/// branch child.
fn compression_parent<R: LineageReads>(
    reads: &mut R,
    child: &LineageNode,
) -> Result<Option<LineageNode>, R::Error> {
    let Some(parent_id) = child.parent.as_deref().filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if child.branched {
        return Ok(None);
    }
    Ok(reads
        .node(parent_id)?
        .filter(LineageNode::ended_with_compression))
}
