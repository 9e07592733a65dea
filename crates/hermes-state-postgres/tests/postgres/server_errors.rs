//! A server's refusal reaches the operator with the server's own words
//! (message, detail, hint, SQLSTATE), classified by SQLSTATE, with what to
//! do next (issue 26, item 2). Each case is produced for real on a
//! throwaway server of the test's own: password authentication for some
//! roles, a role refused by `pg_hba.conf`, a missing database, a role
//! without rights on the store's schema, a read-only role, and a port
//! nothing listens on.

use hermes_state_postgres::{PgError, PgStore, ServerProblem, StoreUrl};
use hermes_state_testkit::throwaway::Throwaway;
use hermes_state_types::ErrorKind;

/// Opens the store at `url` writable; the error it gives.
fn open_error(url: &str) -> PgError {
    let parsed = StoreUrl::parse(url).expect("the test's URL parses");
    match PgStore::open(&parsed) {
        Ok(_) => panic!("{url}: opened, but the case must be refused"),
        Err(error) => error,
    }
}

struct Case {
    what: &'static str,
    url: String,
    kind: ErrorKind,
    problem: ServerProblem,
    /// Words of the server's message (never the client's "db error").
    says: &'static str,
    sqlstate: &'static str,
}

#[test]
fn each_refusal_carries_the_servers_words_its_class_and_the_fix() {
    let Some(server) = Throwaway::start(
        "server errors",
        None,
        &[
            "host all alice 127.0.0.1/32 scram-sha-256",
            "host all blocked 127.0.0.1/32 reject",
        ],
    ) else {
        return;
    };
    let port = server.port();
    let mut admin = server.admin();
    admin
        .batch_execute(
            "CREATE ROLE alice LOGIN PASSWORD 'right'; \
             CREATE ROLE blocked LOGIN; \
             CREATE ROLE reader LOGIN; \
             ALTER ROLE reader SET default_transaction_read_only = on; \
             CREATE ROLE guest LOGIN; \
             REVOKE CREATE ON DATABASE postgres FROM PUBLIC; \
             CREATE SCHEMA owned; GRANT USAGE ON SCHEMA owned TO guest;",
        )
        .expect("set up the roles");
    let at = |userinfo: &str, rest: &str| format!("postgres://{userinfo}@127.0.0.1:{port}/{rest}");
    let unused_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.local_addr().expect("its address").port()
    };
    let cases = [
        Case {
            what: "a wrong password",
            url: at("alice:wrong", "postgres?schema=s"),
            kind: ErrorKind::AccessDenied,
            problem: ServerProblem::Authentication,
            says: "password authentication failed for user \"alice\"",
            sqlstate: "28P01",
        },
        Case {
            what: "an unknown role",
            url: at("nobody", "postgres?schema=s"),
            kind: ErrorKind::AccessDenied,
            problem: ServerProblem::RoleNotAllowed,
            says: "role \"nobody\" does not exist",
            sqlstate: "28000",
        },
        Case {
            what: "a role pg_hba.conf rejects",
            url: at("blocked", "postgres?schema=s"),
            kind: ErrorKind::AccessDenied,
            problem: ServerProblem::RoleNotAllowed,
            says: "pg_hba.conf rejects connection",
            sqlstate: "28000",
        },
        Case {
            what: "a missing database",
            url: at("alice:right", "nodb?schema=s"),
            kind: ErrorKind::InvalidInput,
            problem: ServerProblem::MissingDatabase,
            says: "database \"nodb\" does not exist",
            sqlstate: "3D000",
        },
        Case {
            what: "a role that may not create the store's schema",
            url: at("guest", "postgres?schema=fresh"),
            kind: ErrorKind::ReadOnly,
            problem: ServerProblem::Permission,
            says: "permission denied for database postgres",
            sqlstate: "42501",
        },
        Case {
            what: "a role without rights in an existing schema",
            url: at("guest", "postgres?schema=owned"),
            kind: ErrorKind::ReadOnly,
            problem: ServerProblem::Permission,
            says: "permission denied for schema owned",
            sqlstate: "42501",
        },
        Case {
            what: "a read-only role",
            url: at("reader", "postgres?schema=ro"),
            kind: ErrorKind::ReadOnly,
            problem: ServerProblem::ReadOnlyRole,
            says: "read-only transaction",
            sqlstate: "25006",
        },
    ];
    for case in &cases {
        let error = open_error(&case.url);
        let text = error.to_string();
        assert_eq!(error.kind(), case.kind, "{}: {text}", case.what);
        assert_eq!(
            error.server_problem(),
            Some(case.problem),
            "{}: {text}",
            case.what
        );
        assert!(
            text.contains(case.says),
            "{}: the server's words are missing: {text}",
            case.what
        );
        assert!(
            text.contains(&format!("SQLSTATE {}", case.sqlstate)),
            "{}: the SQLSTATE is missing: {text}",
            case.what
        );
        assert!(
            !text.contains("db error"),
            "{}: the client's bare kind: {text}",
            case.what
        );
        assert!(
            !text.contains("right"),
            "{}: a password printed: {text}",
            case.what
        );
        assert_eq!(
            error.next_step(),
            Some(case.problem.next_step()),
            "{}",
            case.what
        );
    }
    // Nothing answers: no SQLSTATE, the I/O error named, the fix given.
    let error = open_error(&format!(
        "postgres://alice:right@127.0.0.1:{unused_port}/postgres"
    ));
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert_eq!(
        error.server_problem(),
        Some(ServerProblem::Unreachable),
        "{error}"
    );
    assert!(error.to_string().contains("refused"), "{error}");
    // A refused writable open created nothing: no schema for the read-only
    // role, none for the guest.
    let schemas: Vec<String> = admin
        .query(
            "SELECT nspname FROM pg_namespace WHERE nspname IN ('s', 'fresh', 'ro')",
            &[],
        )
        .expect("list schemas")
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(
        schemas.is_empty(),
        "a refused open left schemas behind: {schemas:?}"
    );
}
