//! The `Accounting` part of the contract: token and cost accounting and the
//! usage statistics (`api.md` §3).

use crate::error::Result;
use crate::stats::{ModelTotals, TopSession, UsageAttribution};
use hermes_state_types::{AuxiliaryUsage, TokenUpdate};

/// Token and cost accounting and the usage statistics (`api.md` §3).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Accounting {
    /// `api.md` §3.1, §3.3.
    fn update_token_counts(&self, session_id: &str, update: &TokenUpdate) -> Result<()>;
    /// `api.md` §3.2.
    fn record_auxiliary_usage(&self, session_id: &str, usage: &AuxiliaryUsage) -> Result<()>;
    /// `api.md` §3.4: totals per model, most expensive first.
    fn model_totals(&self) -> Result<Vec<ModelTotals>>;
    /// `api.md` §3.4: the sessions with the most tokens.
    fn top_sessions(&self, limit: u32) -> Result<Vec<TopSession>>;
    /// `api.md` §3.4: usage per model and task.
    fn usage_by_model_and_task(&self) -> Result<Vec<UsageAttribution>>;
}
