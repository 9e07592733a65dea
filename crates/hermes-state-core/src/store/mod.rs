//! The store's operations, one trait per section of `api.md`, and
//! [`SessionStore`]: every store is all of them.
//!
//! A caller that needs one section asks for that trait (`impl Search`); one
//! that takes any store, whatever it does with it, takes
//! `&dyn SessionStore`. Bring them into scope with [`crate::prelude`].

mod accounting;
mod cleanup;
mod coordination;
mod exchange;
mod lineage;
mod listings;
mod messages;
mod search;
mod sessions;
mod titles;

pub use accounting::Accounting;
pub use cleanup::Cleanup;
pub use coordination::Coordination;
pub use exchange::Exchange;
pub use lineage::Lineage;
pub use listings::Listings;
pub use messages::Messages;
pub use search::Search;
pub use sessions::Sessions;
pub use titles::Titles;

/// Which backend keeps a store.
pub trait BackendName {
    /// `sqlite` or `postgres`, e.g. for messages.
    fn backend_name(&self) -> &'static str;
}

/// A whole store: every section of the contract, shared between threads.
///
/// Implemented for every type that implements all the sections (a blanket
/// implementation), so a backend implements the sections and nothing else.
pub trait SessionStore:
    Sessions
    + Accounting
    + Messages
    + Titles
    + Search
    + Lineage
    + Listings
    + Cleanup
    + Exchange
    + Coordination
    + BackendName
    + Send
    + Sync
    + std::fmt::Debug
    + 'static
{
    /// The store as [`Any`](std::any::Any), for what only one backend
    /// offers: the backend's crate downcasts it to its own type (the SQLite
    /// store's `as_sqlite`).
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T> SessionStore for T
where
    T: Sessions
        + Accounting
        + Messages
        + Titles
        + Search
        + Lineage
        + Listings
        + Cleanup
        + Exchange
        + Coordination
        + BackendName
        + Send
        + Sync
        + std::fmt::Debug
        + 'static,
{
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
