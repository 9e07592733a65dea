//! Times other SQL shapes for the same word query, to see where the time of a
//! frequent word goes and what a different query would save (the figures of
//! the "search p50" section of `docs/PERFORMANCE.md`):
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example search_plans -- 1m harbor lantern
//! ```
//!
//! Shapes: `current` (the facade's final SQL: joins, visibility filter,
//! `snippet()`, `ORDER BY rank LIMIT 20`), `no_snippet` (the same without
//! `snippet()` and content), `fts_only` (`SELECT rowid … ORDER BY rank LIMIT
//! 20` on the FTS table alone), `two_phase` (the top 20 ids chosen without
//! `snippet()`, then `snippet()` for those 20 only). Each runs 15 times; the
//! median is printed.

// A command-line tool: the timings go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use hermes_state_benches::baseline::Baseline;
use hermes_state_benches::corpus::{self, Corpus};

const SELECT: &str = "m.id, m.session_id, m.role, m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at";
const JOIN: &str = "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id";
const VISIBLE: &str = "(m.active = 1 OR m.compacted = 1)";

fn main() {
    let mut args = std::env::args().skip(1);
    let size = args
        .next()
        .and_then(|a| corpus::parse_size(&a))
        .unwrap_or(100_000);
    let words: Vec<String> = args.collect();
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let baseline = Baseline::open(&corpus.path).expect("open");
    let conn = baseline.conn();
    let snippet = "snippet(messages_fts, -1, '>>>', '<<<', '...', 40)";
    let shapes = [
        (
            "current",
            format!("SELECT {SELECT}, {snippet} {JOIN} WHERE messages_fts MATCH ?1 AND {VISIBLE} ORDER BY rank LIMIT 20"),
        ),
        (
            "no_snippet",
            format!("SELECT m.id, m.session_id, m.role, m.timestamp {JOIN} WHERE messages_fts MATCH ?1 AND {VISIBLE} ORDER BY rank LIMIT 20"),
        ),
        (
            "fts_only",
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rank LIMIT 20".to_owned(),
        ),
        (
            "two_phase",
            format!(
                "SELECT {SELECT}, {snippet} {JOIN} WHERE messages_fts MATCH ?1 AND messages_fts.rowid IN (
                    SELECT m.id {JOIN} WHERE messages_fts MATCH ?1 AND {VISIBLE} ORDER BY rank LIMIT 20)
                 ORDER BY rank"
            ),
        ),
        (
            "newest_ids",
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid DESC LIMIT 20".to_owned(),
        ),
        (
            "rank_recent",
            format!(
                "SELECT {SELECT}, {snippet} {JOIN} WHERE messages_fts MATCH ?1 AND {VISIBLE} AND messages_fts.rowid >= (
                    SELECT min(rowid) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid DESC LIMIT 2000))
                 ORDER BY rank LIMIT 20"
            ),
        ),
    ];
    for word in &words {
        let matches: i64 = conn
            .query_row(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
                [word],
                |r| r.get(0),
            )
            .expect("count");
        let mut reference: Option<Vec<i64>> = None;
        for (name, sql) in &shapes {
            let mut stmt = conn.prepare(sql).expect("prepare");
            let mut times = Vec::new();
            let mut ids = Vec::new();
            for _ in 0..15 {
                let started = Instant::now();
                ids = stmt
                    .query_map([word], |r| r.get::<_, i64>(0))
                    .expect("query")
                    .collect::<Result<Vec<_>, _>>()
                    .expect("rows");
                times.push(started.elapsed());
            }
            times.sort();
            let median: Duration = times[times.len() / 2];
            let same = match &reference {
                None => {
                    reference = Some(ids.clone());
                    "reference"
                }
                Some(r) if *r == ids => "same ids",
                Some(_) => "OTHER ids",
            };
            println!(
                "{} {word} ({matches} matches) {name:<11} {:>9.2} ms  {same}",
                corpus::size_label(size),
                median.as_secs_f64() * 1e3
            );
        }
    }
}
