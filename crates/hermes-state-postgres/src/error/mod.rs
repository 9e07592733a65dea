//! The backend's one error type, classified by SQLSTATE, never by message text.

mod contract;
mod server;

use hermes_state_types::ErrorKind;
use postgres::error::SqlState;

pub use server::{ServerProblem, db_words, server_words};

/// What went wrong in the PostgreSQL backend.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The store URL or the schema name it names is not acceptable.
    #[error("invalid store URL: {0}")]
    InvalidUrl(String),
    /// An operator setting of the URL (`pool_size`, `statement_timeout`)
    /// has a value this library does not take; the value is not repeated.
    #[error("invalid store URL: invalid value for option `{option}`: {expected}")]
    InvalidSetting {
        /// The option.
        option: &'static str,
        /// What it accepts.
        expected: &'static str,
    },
    /// Every connection of the handle's pool (`pool_size`) stayed on loan
    /// for as long as a write may wait.
    #[error(
        "all {size} connections of the pool (pool_size) stayed in use for {:.1} s",
        waited.as_secs_f64()
    )]
    PoolExhausted {
        /// Connections on loan.
        size: usize,
        /// How long the request waited.
        waited: std::time::Duration,
    },
    /// The TLS settings cannot be used (`sslmode` without the root
    /// certificates it needs, a root certificate file that cannot be read).
    #[error("TLS: {0}")]
    Tls(String),
    /// The server could not be reached, or refused the connection (TLS
    /// refused or failed, authentication failed).
    #[error(
        "connecting to PostgreSQL (sslmode={sslmode}): {}",
        server_words(source)
    )]
    Connect {
        /// The `sslmode` in force.
        sslmode: &'static str,
        /// The client's error.
        #[source]
        source: postgres::Error,
    },
    /// An argument was refused before anything was written.
    #[error("{0}")]
    InvalidInput(String),
    /// The original's `ValueError` for a call it refuses (a Telegram
    /// session already bound to another topic), with its text.
    #[error("{0}")]
    InvalidValue(String),
    /// The original's `TypeError` on a stored value its code cannot take
    /// (the conversation repair's tool calls that are no list), with its
    /// text.
    #[error("{0}")]
    TypeError(String),
    /// The session the operation needs does not exist: a write was refused
    /// by the `session_id` foreign key.
    #[error("session not found: {0:?}")]
    SessionNotFound(String),
    /// The message is not one of the session's; the original's text.
    #[error("message {message_id} not found in session {session_id}")]
    MessageNotFound {
        /// The session named.
        session_id: String,
        /// The message named.
        message_id: i64,
    },
    /// A rewind target that is not a `user` message; the original's text.
    #[error(
        "rewind target must be a 'user' message (got role={}, id={message_id})",
        hermes_state_types::pyrepr::str_repr(role)
    )]
    RewindTargetRole {
        /// The target's role.
        role: String,
        /// The target message.
        message_id: i64,
    },
    /// The title is already used by another session; the original's text.
    #[error("Title '{title}' is already in use by session {holder}")]
    TitleInUse {
        /// The refused title.
        title: String,
        /// The session holding it.
        holder: String,
    },
    /// The title was refused by normalisation (too long).
    #[error(transparent)]
    Title(#[from] hermes_state_core::titles::TitleError),
    /// The schema does not hold a store, or holds an older one, and the
    /// handle may not create or upgrade it (read-only).
    #[error("schema {schema:?} {problem}")]
    NoStore {
        /// The PostgreSQL schema.
        schema: String,
        /// What is missing.
        problem: String,
    },
    /// The store was written by a newer release (its migration ledger
    /// names steps this library does not know).
    #[error(
        "schema {schema:?} is at PostgreSQL step {found}; this library knows steps up to {known}"
    )]
    SchemaTooNew {
        /// The PostgreSQL schema.
        schema: String,
        /// The newest step recorded in the store.
        found: i64,
        /// The newest step this library has.
        known: i64,
    },
    /// A write on a handle opened read-only.
    #[error("the store is open read-only: {0}")]
    ReadOnly(String),
    /// The connection was lost while COMMIT was in flight.
    #[error(
        "{context}: the connection was lost during COMMIT; the write may or may not have been committed"
    )]
    UnknownOutcome {
        /// What was being written.
        context: String,
    },
    /// The target of a copy is not empty.
    #[error("{0}")]
    NotEmpty(String),
    /// A copy's verification found a difference.
    #[error("verification failed: {0}")]
    Mismatch(String),
    /// An error from the server or the connection; its text carries the
    /// server's message, detail, hint and SQLSTATE.
    #[error("{context}: {}", server_words(source))]
    Postgres {
        /// What was being done.
        context: String,
        /// The client's error (with the server's SQLSTATE when it has one).
        #[source]
        source: postgres::Error,
    },
    /// An error from the migration runner.
    #[error("migrating the PostgreSQL schema: {0}")]
    Migration(String),
    /// The server refused a step of the schema's migration; `message` is
    /// the runner's context and the server's words.
    #[error("migrating the PostgreSQL schema: {message}")]
    MigrationRefused {
        /// What the runner was doing and what the server said.
        message: String,
        /// The server's SQLSTATE.
        code: Option<SqlState>,
    },
}

impl PgError {
    /// The kind of the error, shared with the SQLite backend.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PgError::InvalidUrl(_)
            | PgError::InvalidSetting { .. }
            | PgError::Tls(_)
            | PgError::InvalidInput(_)
            | PgError::InvalidValue(_)
            | PgError::TypeError(_)
            | PgError::NotEmpty(_) => ErrorKind::InvalidInput,
            // A refusal the server explains (a SQLSTATE: authentication,
            // a missing database) is of its kind; anything else — no
            // answer, TLS declined or failed — means the server cannot be
            // reached as asked.
            PgError::Connect { source, .. } => match source.code() {
                Some(state) => sqlstate_kind(state),
                None => ErrorKind::Unavailable,
            },
            PgError::SessionNotFound(_)
            | PgError::MessageNotFound { .. }
            | PgError::NoStore { .. } => ErrorKind::NotFound,
            PgError::RewindTargetRole { .. } | PgError::Title(_) => ErrorKind::InvalidInput,
            PgError::TitleInUse { .. } => ErrorKind::Constraint,
            PgError::PoolExhausted { .. } => ErrorKind::Busy,
            PgError::SchemaTooNew { .. } => ErrorKind::SchemaTooNew,
            PgError::ReadOnly(_) => ErrorKind::ReadOnly,
            PgError::UnknownOutcome { .. } => ErrorKind::UnknownOutcome,
            PgError::Mismatch(_) => ErrorKind::Corrupt,
            PgError::Postgres { source, .. } => postgres_error_kind(source),
            PgError::Migration(_) => ErrorKind::Other,
            PgError::MigrationRefused { code, .. } => {
                code.as_ref().map_or(ErrorKind::Other, sqlstate_kind)
            }
        }
    }

    /// The problem an operator fixes outside this library (credentials,
    /// rights, a missing database, an unreachable server), read from the
    /// server's SQLSTATE; `None` for other failures.
    pub fn server_problem(&self) -> Option<ServerProblem> {
        match self {
            PgError::Connect { source, .. } | PgError::Postgres { source, .. } => {
                ServerProblem::of(source)
            }
            PgError::MigrationRefused { code, .. } => {
                code.as_ref().and_then(ServerProblem::of_state)
            }
            _ => None,
        }
    }

    /// What to do next, where the failure is one an operator fixes.
    pub fn next_step(&self) -> Option<&'static str> {
        match self {
            PgError::NoStore { .. } => Some(
                "check the schema name in the URL (`?schema=NAME`, default `hermes`); a writing command creates the store there",
            ),
            _ => self.server_problem().map(ServerProblem::next_step),
        }
    }

    /// An error of the migration runner, with the server's words and
    /// SQLSTATE when the server refused (the runner's own text names only
    /// its step: "error asserting migrations table").
    pub(crate) fn migration(step: &str, error: &(dyn std::error::Error + 'static)) -> PgError {
        match server::find_in_chain(error) {
            Some((words, code)) => PgError::MigrationRefused {
                message: format!("{step}: {words}"),
                code,
            },
            None => PgError::Migration(error.to_string()),
        }
    }

    /// Wraps a client error with what was being done.
    pub(crate) fn postgres(context: impl Into<String>, source: postgres::Error) -> PgError {
        PgError::Postgres {
            context: context.into(),
            source,
        }
    }
}

/// The kind of a client error: by SQLSTATE when the server sent one;
/// a closed connection or an I/O failure is [`ErrorKind::Unavailable`].
pub fn postgres_error_kind(error: &postgres::Error) -> ErrorKind {
    let Some(state) = error.code() else {
        return if server::reached_no_server(error) {
            ErrorKind::Unavailable
        } else {
            ErrorKind::Other
        };
    };
    sqlstate_kind(state)
}

/// The kind of a SQLSTATE.
pub fn sqlstate_kind(state: &SqlState) -> ErrorKind {
    if is_retryable(state) {
        return ErrorKind::Busy;
    }
    match state.code() {
        "28P01" | "28000" => ErrorKind::AccessDenied, // wrong password; role not let in
        "3D000" => ErrorKind::InvalidInput,           // the URL names no existing database
        "25006" => ErrorKind::ReadOnly,               // read_only_sql_transaction
        "42501" => ErrorKind::ReadOnly,               // insufficient_privilege
        "22P02" | "22021" | "22001" | "54000" => ErrorKind::InvalidInput,
        code if code.starts_with("23") => ErrorKind::Constraint,
        code if code.starts_with("08") => ErrorKind::Unavailable,
        "57P01" | "57P02" | "57P03" => ErrorKind::Unavailable,
        "XX001" | "XX002" => ErrorKind::Corrupt,
        _ => ErrorKind::Other,
    }
}

/// The SQLSTATEs a whole write is run again for: a lock wait that ran out
/// (`55P03`, from `lock_timeout` on the store's writer lock), a
/// serialization failure (`40001`) and a deadlock (`40P01`).
pub fn is_retryable(state: &SqlState) -> bool {
    matches!(state.code(), "55P03" | "40001" | "40P01")
}

/// `Result` with [`PgError`].
pub type Result<T, E = PgError> = std::result::Result<T, E>;

/// Adds what was being done to a client error.
pub(crate) trait Context<T> {
    /// Wraps the error with `context`.
    fn context(self, context: &str) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, postgres::Error> {
    fn context(self, context: &str) -> Result<T> {
        self.map_err(|source| PgError::postgres(context, source))
    }
}
