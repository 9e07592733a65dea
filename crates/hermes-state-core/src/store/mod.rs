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
///
/// Code written against it runs on either backend; it is handed a store
/// by the backend's crate (`hermes_state::open_store`, or `SessionDb` /
/// `PgStore` directly):
///
/// ```
/// use hermes_state_core::prelude::*;
/// use hermes_state_core::search::SearchOptions;
/// use hermes_state_core::Result;
/// use hermes_state_types::{NewMessage, NewSession};
///
/// /// Records one exchange and says how many messages now match `word`.
/// fn note(store: &dyn SessionStore, word: &str) -> Result<usize> {
///     let id = store.create_session(&NewSession::new("demo-1", "cli"))?;
///     store.append_message(&NewMessage::new(&id, "user").content(format!("about {word}")))?;
///     Ok(store.search_messages(word, &SearchOptions::default())?.len())
/// }
/// ```
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
