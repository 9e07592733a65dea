//! Several hosts on one store, for real: writer processes (each its own
//! pool, standing for a host) and a reader, with the server restarted in
//! the middle. Every acknowledged write must be there exactly once,
//! counters must equal rows, and nothing but typed errors may surface.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hermes_state_postgres::{PgStore, StoreUrl};
use hermes_state_types::{NewMessage, NewSession};

use crate::common::TestSchema;

const WRITERS: usize = 4;
const APPENDS: usize = 150;
const CHILD_URL: &str = "HERMES_STATE_TEST_HOST_URL";
const CHILD_NAME: &str = "HERMES_STATE_TEST_HOST_NAME";
const RESTART_VAR: &str = "HERMES_STATE_TEST_PG_RESTART";

/// One "host": appends to its own session and to a shared one, printing
/// one line per attempt: `@@ack <id> <text>`, `@@unknown <text>` or
/// `@@error <kind> <text>`, then `@@done`.
#[test]
#[ignore = "run by several_hosts_write_through_a_server_restart"]
fn writer_host() {
    let url = StoreUrl::parse(&std::env::var(CHILD_URL).unwrap()).unwrap();
    let name = std::env::var(CHILD_NAME).unwrap();
    let store = PgStore::open(&url).unwrap();
    store
        .create_session(&NewSession::new(name.as_str(), "gateway"))
        .unwrap();
    for i in 0..APPENDS {
        let session = if i % 3 == 0 { "shared" } else { name.as_str() };
        let text = format!("{name}-{i}");
        match store.append_message(&NewMessage::new(session, "user").content(text.as_str())) {
            Ok(id) => println!("\n@@ack {id} {text}"),
            Err(e) if e.kind() == hermes_state_types::ErrorKind::UnknownOutcome => {
                println!("\n@@unknown {text}")
            }
            Err(e) => println!("\n@@error {:?} {text}", e.kind()),
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    println!("\n@@done");
}

#[test]
fn several_hosts_write_through_a_server_restart() {
    let Some(schema) = TestSchema::new("several hosts") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    store
        .create_session(&NewSession::new("shared", "gateway"))
        .unwrap();
    let exe = std::env::current_exe().unwrap();
    let admin_url = std::env::var(crate::common::PG_URL_VAR).unwrap();
    let child_url = format!(
        "{admin_url}{}schema={}",
        if admin_url.contains('?') { '&' } else { '?' },
        schema.url.schema()
    );
    let children: Vec<_> = (0..WRITERS)
        .map(|n| {
            Command::new(&exe)
                .args([
                    "hosts::writer_host",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD_URL, &child_url)
                .env(CHILD_NAME, format!("host{n}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();

    // The reader: polls while the writers run; only typed errors allowed.
    let reader = std::thread::spawn({
        let url = schema.url.clone();
        move || {
            let reader = PgStore::open_read_only(&url).unwrap();
            let started = Instant::now();
            let mut reads = 0;
            while started.elapsed() < Duration::from_secs(3) {
                match reader.message_count(None) {
                    Ok(_) => reads += 1,
                    Err(e) => assert!(
                        matches!(e.kind(), hermes_state_types::ErrorKind::Unavailable),
                        "a read failed with {e}"
                    ),
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            reads
        }
    });

    std::thread::sleep(Duration::from_millis(400));
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let restarted = match std::env::var(RESTART_VAR) {
        Ok(command) => {
            let before = now();
            let status = Command::new("sh").args(["-c", &command]).status().unwrap();
            assert!(status.success(), "restarting the server failed");
            Some((before, now()))
        }
        Err(_) => {
            println!(
                "skipped: the server restart ({RESTART_VAR} is not set); the writers ran without it"
            );
            None
        }
    };

    let mut acknowledged: BTreeMap<i64, String> = BTreeMap::new();
    let mut unknown = BTreeSet::new();
    let mut errors = Vec::new();
    let mut acks_after_restart_per_host = Vec::new();
    for mut child in children {
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut done = false;
        let mut lines = Vec::new();
        // The harness prints its own text around ours; our lines start with `@@`.
        for line in stdout.lines() {
            if let Some(ours) = line.unwrap().strip_prefix("@@") {
                lines.push(ours.to_owned());
            }
        }
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.success(), "a host failed: {stderr}");
        let mut last_error_at = None;
        for (at, line) in lines.iter().enumerate() {
            let mut parts = line.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("ack"), Some(id), Some(text)) => {
                    acknowledged.insert(id.parse().unwrap(), text.to_owned());
                }
                (Some("unknown"), Some(text), None) => {
                    unknown.insert(text.to_owned());
                }
                (Some("error"), Some(kind), Some(text)) => {
                    assert!(
                        matches!(kind, "Unavailable" | "Busy"),
                        "untyped or unexpected error {kind} for {text}"
                    );
                    errors.push(text.to_owned());
                    last_error_at = Some(at);
                }
                (Some("done"), None, None) => done = true,
                _ => {}
            }
        }
        assert!(done, "a host did not finish its run: {lines:?}");
        // Recovered: acknowledged writes after its last failure.
        let after = lines[last_error_at.map_or(0, |at| at + 1)..]
            .iter()
            .filter(|l| l.starts_with("ack "))
            .count();
        acks_after_restart_per_host.push(after);
    }
    assert!(reader.join().unwrap() > 0, "the reader never read");

    // Every acknowledged write is there, exactly once, with its text.
    let mut client = schema.client();
    let rows = client
        .query(
            &format!(
                "SELECT id, content FROM \"{}\".messages ORDER BY id",
                schema.url.schema()
            ),
            &[],
        )
        .unwrap();
    let stored: BTreeMap<i64, String> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    if let Some((down, up)) = restarted {
        // The restart really fell in the middle of the writing.
        let times: Vec<f64> = client
            .query(
                &format!("SELECT timestamp FROM \"{}\".messages", schema.url.schema()),
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert!(
            times.iter().any(|&t| t < down),
            "no write before the restart"
        );
        assert!(times.iter().any(|&t| t > up), "no write after the restart");
    }
    for (id, text) in &acknowledged {
        assert_eq!(
            stored.get(id),
            Some(text),
            "acknowledged write {id} ({text}) is missing"
        );
    }
    let texts: Vec<&String> = stored.values().collect();
    let distinct: BTreeSet<&&String> = texts.iter().collect();
    assert_eq!(distinct.len(), texts.len(), "a write was applied twice");
    // Nothing is stored that was neither acknowledged nor of unknown outcome.
    for text in stored.values() {
        assert!(
            acknowledged.values().any(|t| t == text) || unknown.contains(text),
            "{text} is stored but its writer was told it failed; errors: {errors:?}"
        );
    }
    // Counters equal rows.
    let mismatched: i64 = client
        .query_one(
            &format!(
                "SELECT count(*) FROM \"{0}\".sessions s WHERE s.message_count <> \
                 (SELECT count(*) FROM \"{0}\".messages m WHERE m.session_id = s.id)",
                schema.url.schema()
            ),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(mismatched, 0, "a session's counter differs from its rows");
    assert!(
        acknowledged.len() + errors.len() + unknown.len() == WRITERS * APPENDS,
        "every attempt reported once"
    );
    assert!(
        acks_after_restart_per_host.iter().all(|&n| n > 0),
        "a host did not recover: {acks_after_restart_per_host:?}"
    );
    println!(
        "{} acknowledged, {} failed with typed errors, {} unknown outcomes; server restarted: {}",
        acknowledged.len(),
        errors.len(),
        unknown.len(),
        restarted.is_some()
    );
}
