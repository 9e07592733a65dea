//! The cost of the facade's every-1000th-write FTS merge, committed two
//! ways on the same store, interleaved: the bounded `'merge'` of the three
//! FTS indexes as three autocommit statements (three commits, three
//! fsyncs, what `SessionDb` runs) against the same three statements in one
//! `BEGIN IMMEDIATE` … `COMMIT` (one fsync), the alternative tried for issue
//! #15's item 4. Between rounds, 20 appends give the merges something to do.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example merge_commit -- 10k 30
//! ```
//!
//! Arguments: corpus size (default `10k`) and rounds (default 30). The copy
//! lives in `TMPDIR` (a disk by default: the point is the fsyncs).

// A command-line tool: the figures go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]
use hermes_state::prelude::*;
use std::time::Instant;

use hermes_state::{FTS_MERGE_PAGES, NewMessage, NewSession, SessionDb};
use hermes_state_benches::corpus::{Corpus, parse_size, size_label};

const TABLES: [&str; 3] = ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"];

fn merges(conn: &hermes_state::rusqlite::Connection, one_transaction: bool) -> f64 {
    let started = Instant::now();
    if one_transaction {
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    }
    for table in TABLES {
        conn.execute_batch(&format!(
            "INSERT INTO {table}({table}, rank) VALUES('merge', {FTS_MERGE_PAGES})"
        ))
        .expect("merge");
    }
    if one_transaction {
        conn.execute_batch("COMMIT").expect("commit");
    }
    started.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size = args.next().and_then(|a| parse_size(&a)).unwrap_or(10_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(30);
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus.copy_to(dir.path()).expect("copy");
    let db = SessionDb::open(&path).expect("open");
    db.migrate().expect("writable");
    db.create_session(&NewSession::new("bench-merge", "cli"))
        .expect("session");
    let conn = hermes_state::rusqlite::Connection::open(&path).expect("second connection");
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .expect("busy timeout");
    let (mut three, mut one) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for i in 0..20 {
            db.append_message(
                &NewMessage::new("bench-merge", "user")
                    .content(format!("round {round} message {i}: kubernetes 東京 deploy")),
            )
            .expect("append");
        }
        // Alternate which way goes first, so neither always follows the appends.
        let first_one = round % 2 == 0;
        for one_transaction in [first_one, !first_one] {
            let ms = merges(&conn, one_transaction);
            if one_transaction {
                one.push(ms);
            } else {
                three.push(ms);
            }
        }
    }
    let summary = |label: &str, mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "| {label} | {:.2} | {mean:.2} | {:.2} |",
            v[v.len() / 2],
            v[v.len() - 1]
        );
    };
    println!(
        "corpus {}, {rounds} rounds\n\n| merges of the three indexes | median ms | mean ms | max ms |\n| --- | --- | --- | --- |",
        size_label(size)
    );
    summary("three autocommits", three);
    summary("one transaction", one);
}
