//! Sessions (`api.md` §2): the bound of every lineage walk, and what a
//! session count counts.

/// How far lineage walks go before giving up: a damaged file can hold a
/// parent chain that never ends; walks also stop at the first repeated id.
pub const MAX_LINEAGE_STEPS: usize = 100;

/// What a session count (`session_count`) counts: the original's keyword arguments
/// (`api.md` §2.4), [`Default`] being the original's defaults (archived
/// sessions left out, children counted). The filters mean what they mean
/// in [`crate::rich_listing::RichListOptions`], so a count pairs with a
/// listing page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionCountOptions {
    /// Only this source (when non-empty).
    pub source: Option<String>,
    /// Not these sources.
    pub exclude_sources: Vec<String>,
    /// Only sessions whose `cwd` is this folder or lies below it (when
    /// non-empty).
    pub cwd_prefix: Option<String>,
    /// Only sessions with at least this many messages (`message_count`;
    /// ignored unless positive).
    pub min_message_count: i64,
    /// Also count archived sessions.
    pub include_archived: bool,
    /// Only archived sessions (wins over `include_archived`).
    pub archived_only: bool,
    /// Only listable sessions: roots and branch children, no delegate
    /// children (`api.md` §9.2), as `list_sessions_rich` lists them.
    pub exclude_children: bool,
}

impl SessionCountOptions {
    /// Every session row, archived ones included.
    pub fn all() -> Self {
        SessionCountOptions {
            include_archived: true,
            ..SessionCountOptions::default()
        }
    }
}
