//! What the server said, and what an operator does about it.
//!
//! The client's own text of a refusal is only its kind ("db error",
//! "error connecting to server"); the server's reason — its message,
//! detail, hint and SQLSTATE — is in the error's causes. Operators fix
//! these by SQLSTATE class, so the classification here reads codes only,
//! never message texts.

use std::error::Error as _;

use postgres::error::{DbError, SqlState};

/// A failure an operator fixes outside this library, by what the server
/// answered (or that it did not answer).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerProblem {
    /// The password was wrong or missing (`28P01`).
    Authentication,
    /// The server does not let this role in: the role does not exist, or
    /// `pg_hba.conf` has no entry for it from here (`28000`; PostgreSQL
    /// gives both the same code on purpose, so a client cannot tell them
    /// apart).
    RoleNotAllowed,
    /// The database named in the URL does not exist (`3D000`).
    MissingDatabase,
    /// The role may not do what the store needs in its schema (`42501`).
    Permission,
    /// The session is read-only: a read-only role
    /// (`default_transaction_read_only`) or a standby (`25006`).
    ReadOnlyRole,
    /// The server has no free connection slot (`53300`), or is starting
    /// up or shutting down (`57P0x`).
    NotAccepting,
    /// No answer at all: wrong host or port, server down, network or
    /// firewall (no SQLSTATE; an I/O error underneath).
    Unreachable,
}

impl ServerProblem {
    /// The problem a client error shows, `None` when it is not one an
    /// operator fixes (a constraint, a bug).
    pub fn of(error: &postgres::Error) -> Option<ServerProblem> {
        match error.code() {
            Some(state) => ServerProblem::of_state(state),
            None if reached_no_server(error) => Some(ServerProblem::Unreachable),
            None => None,
        }
    }

    /// The problem of a SQLSTATE.
    pub fn of_state(state: &SqlState) -> Option<ServerProblem> {
        Some(match state.code() {
            "28P01" => ServerProblem::Authentication,
            "28000" => ServerProblem::RoleNotAllowed,
            "3D000" => ServerProblem::MissingDatabase,
            "42501" => ServerProblem::Permission,
            "25006" => ServerProblem::ReadOnlyRole,
            "53300" | "57P01" | "57P02" | "57P03" => ServerProblem::NotAccepting,
            _ => return None,
        })
    }

    /// What to do about it, for an operator reading the error.
    pub fn next_step(self) -> &'static str {
        match self {
            ServerProblem::Authentication => {
                "check the password: in the URL (percent-encode reserved characters), in PGPASSWORD, or in the password file (~/.pgpass or PGPASSFILE)"
            }
            ServerProblem::RoleNotAllowed => {
                "check that the role in the URL exists (`\\du` in psql) and that the server's pg_hba.conf lets it connect from this host to this database"
            }
            ServerProblem::MissingDatabase => {
                "create the database (`createdb NAME`) or name an existing one in the URL"
            }
            ServerProblem::Permission => {
                "give the role the rights the store needs: to create its schema `GRANT CREATE ON DATABASE db TO role`; on an existing schema `GRANT USAGE, CREATE ON SCHEMA name TO role` and rights on its tables (or let the role own the schema); or open the store with a role that has them, or with --read-only to read"
            }
            ServerProblem::ReadOnlyRole => {
                "this connection can only read (a read-only role or a standby server): connect to the primary with a role that may write, or open the store with --read-only"
            }
            ServerProblem::NotAccepting => {
                "the server is not taking connections now (no free slot, starting or stopping): retry later, or lower the pool size in the URL"
            }
            ServerProblem::Unreachable => {
                "check the host and port in the URL, that the server runs, and that it listens on that address (listen_addresses, firewall)"
            }
        }
    }
}

/// The server's own words for a client error: its message, then detail,
/// hint and SQLSTATE; for an error without a server answer, the client's
/// text with its causes (the I/O error, the certificate problem). None of
/// these holds a password: the client never puts one in an error, and the
/// server never repeats it.
pub fn server_words(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db_words(db),
        None => with_causes(error),
    }
}

/// `message (SQLSTATE code; detail: …; hint: …)`.
pub fn db_words(db: &DbError) -> String {
    let mut words = format!("{} (SQLSTATE {}", db.message(), db.code().code());
    if let Some(detail) = db.detail() {
        words.push_str("; detail: ");
        words.push_str(detail);
    }
    if let Some(hint) = db.hint() {
        words.push_str("; hint: ");
        words.push_str(hint);
    }
    words.push(')');
    words
}

/// An error and its causes, `: `-joined.
fn with_causes(error: &postgres::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Whether the client failed to reach or keep the server (no SQLSTATE:
/// refused connection, reset, timeout).
pub(crate) fn reached_no_server(error: &postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    let mut source = error.source();
    while let Some(inner) = source {
        if inner.is::<std::io::Error>() {
            return true;
        }
        source = inner.source();
    }
    false
}

/// The first client error in a chain of causes (a migration runner's
/// error wraps the client's), its server's words and SQLSTATE.
pub(crate) fn find_in_chain(
    error: &(dyn std::error::Error + 'static),
) -> Option<(String, Option<SqlState>)> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(inner) = current {
        if let Some(client) = inner.downcast_ref::<postgres::Error>() {
            return Some((server_words(client), client.code().cloned()));
        }
        current = inner.source();
    }
    None
}
