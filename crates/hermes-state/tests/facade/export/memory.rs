//! Bounded memory of the streaming export.
//!
//! Measured in child processes (this binary re-run on the ignored
//! `export_memory_child` test): each opens a store read-only, resets its peak
//! RSS (`/proc/self/clear_refs`), exports to `io::sink()` and prints its peak
//! RSS (`VmHWM`, SQLite's memory included) and the peak growth of the Rust
//! heap during the export (a counting global allocator). A 10× larger store
//! must not need markedly more memory. The same holds for the original's
//! shape walked with `export_all_each` (as `export --format json` writes it),
//! whose memory is bounded by the largest session, and for one session's
//! messages walked with `walk_messages` (as `export --format markdown` writes
//! them), whose memory is bounded by the largest message.
#![allow(clippy::print_stdout)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use hermes_state::ExportSummary;
use hermes_state_testkit::PgSchema;

use super::*;
use hermes_state::prelude::Exchange;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

struct CountingAllocator;

static HEAP_NOW: AtomicUsize = AtomicUsize::new(0);
static HEAP_PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are only bookkeeping.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, passed on as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let now = HEAP_NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        HEAP_NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = HEAP_NOW.fetch_add(grow, Ordering::Relaxed) + grow;
                HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HEAP_NOW.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        new
    }
}

// The allocator of the whole facade test binary: the counters cost the other
// tests two atomic operations per allocation and change nothing else; only
// the memory children read them.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const CHILD_DB: &str = "HERMES_STATE_EXPORT_MEMORY_DB";
/// `original`: the child walks `export_all_each`, serializing each session
/// as the CLI does; `walk`: it walks the messages of the session `big` with
/// `walk_messages`, serializing each; otherwise it writes the JSONL export.
const CHILD_SHAPE: &str = "HERMES_STATE_EXPORT_MEMORY_SHAPE";
/// When set, the child exports the PostgreSQL store this URL names instead,
/// through the seam (the same shapes).
const CHILD_PG_URL: &str = "HERMES_STATE_EXPORT_MEMORY_PG_URL";

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("status field")
}

#[test]
#[ignore = "a child process of the memory tests"]
fn export_memory_child() {
    let Ok(path) = std::env::var(CHILD_DB) else {
        return;
    };
    let db = SessionDb::open_read_only(&path).expect("open");
    let pg = std::env::var(CHILD_PG_URL).ok().map(|url| {
        hermes_state::open_store(&hermes_state::StoreLocation::parse(&url).unwrap(), true)
            .expect("open")
    });
    // Reset the peak RSS to the current RSS (Linux ≥ 4.0).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before = status_kb("VmRSS:");
    let heap_before = HEAP_NOW.load(Ordering::Relaxed);
    HEAP_PEAK.store(heap_before, Ordering::Relaxed);
    let started = std::time::Instant::now();
    let shape = std::env::var(CHILD_SHAPE).unwrap_or_default();
    let summary = if let Some(store) = &pg {
        seam_to_sink(store.as_ref(), &shape)
    } else if shape == "original" {
        original_shape_to_sink(&db)
    } else if shape == "walk" {
        one_session_to_sink(&db, "big")
    } else if shape == "parts" {
        original_shape_in_parts_to_sink(&db)
    } else {
        db.export_jsonl(std::io::sink(), &ExportFilter::default(), |_| {})
            .expect("export")
    };
    let elapsed = started.elapsed();
    let heap_peak = HEAP_PEAK.load(Ordering::Relaxed) - heap_before;
    println!(
        "MEMORY messages={} sessions={} bytes={} rss_before_kb={} vmhwm_kb={} heap_peak_bytes={} reset={} seconds={:.2}",
        summary.messages,
        summary.sessions,
        summary.bytes,
        rss_before,
        status_kb("VmHWM:"),
        heap_peak,
        reset,
        elapsed.as_secs_f64()
    );
}

/// The original's shape, one session at a time, serialized to nowhere.
fn original_shape_to_sink(db: &SessionDb) -> ExportSummary {
    let mut summary = ExportSummary::default();
    db.export_all_each(None, |export| {
        let text = serde_json::to_vec(&export.to_value()).expect("json");
        summary.sessions += 1;
        summary.messages += export.messages.len() as u64;
        summary.bytes += text.len() as u64;
        std::ops::ControlFlow::Continue(())
    })
    .expect("export_all_each");
    summary
}

/// The original's shape in parts (`export_all_parts`, as `export --format
/// json` writes it), each part serialized to nowhere.
fn original_shape_in_parts_to_sink(db: &SessionDb) -> ExportSummary {
    let mut summary = ExportSummary::default();
    db.export_all_parts(None, |part| {
        let text = match part {
            hermes_state::ExportPart::Session(export) => {
                summary.sessions += 1;
                serde_json::to_vec(&export.to_value()).expect("json")
            }
            hermes_state::ExportPart::Message(message) => {
                summary.messages += 1;
                serde_json::to_vec(&message).expect("json")
            }
            hermes_state::ExportPart::SessionEnd => Vec::new(),
        };
        summary.bytes += text.len() as u64;
        std::ops::ControlFlow::Continue(())
    })
    .expect("export_all_parts");
    summary
}

/// The streaming shapes through the seam (`jsonl`, `parts`, `walk` of the
/// session `big`), to nowhere.
fn seam_to_sink(store: &dyn hermes_state::SessionStore, shape: &str) -> ExportSummary {
    let mut summary = ExportSummary::default();
    let mut count = |bytes: Vec<u8>, message: bool| {
        summary.bytes += bytes.len() as u64;
        summary.messages += u64::from(message);
        std::ops::ControlFlow::Continue(())
    };
    match shape {
        "parts" => {
            let sessions = store
                .export_all_parts(None, &mut |part| match part {
                    hermes_state::ExportPart::Session(export) => {
                        count(serde_json::to_vec(&export.to_value()).expect("json"), false)
                    }
                    hermes_state::ExportPart::Message(message) => {
                        count(serde_json::to_vec(&message).expect("json"), true)
                    }
                    hermes_state::ExportPart::SessionEnd => std::ops::ControlFlow::Continue(()),
                })
                .expect("export_all_parts");
            summary.sessions = sessions;
            summary
        }
        "walk" => {
            store
                .walk_messages(
                    "big",
                    false,
                    &mut |_| std::ops::ControlFlow::Continue(()),
                    &mut |message| count(serde_json::to_vec(&message).expect("json"), true),
                )
                .expect("walk_messages");
            summary.sessions = 1;
            summary
        }
        _ => store
            .export_jsonl(&mut std::io::sink(), &ExportFilter::default(), &mut |_| {})
            .expect("export"),
    }
}

/// One session's messages, one at a time, serialized to nowhere.
fn one_session_to_sink(db: &SessionDb, id: &str) -> ExportSummary {
    let mut summary = ExportSummary::default();
    db.walk_messages(
        id,
        false,
        |_| std::ops::ControlFlow::Continue(()),
        |message| {
            let text = serde_json::to_vec(&message).expect("json");
            summary.messages += 1;
            summary.bytes += text.len() as u64;
            std::ops::ControlFlow::Continue(())
        },
    )
    .expect("walk_messages");
    summary.sessions = 1;
    summary
}

#[derive(Debug)]
struct Measured {
    messages: u64,
    bytes: u64,
    vmhwm_kb: u64,
    heap_peak: u64,
}

fn measure(path: &Path, shape: &str) -> Measured {
    measure_on(path, shape, None)
}

/// [`measure`], exporting the PostgreSQL store `pg_url` names when given.
fn measure_on(path: &Path, shape: &str, pg_url: Option<&str>) -> Measured {
    let mut child = child_test(module_path!(), "export_memory_child");
    child.env(CHILD_DB, path).env(CHILD_SHAPE, shape);
    if let Some(url) = pg_url {
        child.env(CHILD_PG_URL, url);
    }
    let output = child.output().expect("child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed: {stdout}");
    let line = stdout
        .lines()
        .find_map(|l| l.find("MEMORY ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("no MEMORY line in {stdout}"));
    println!("{line}");
    let field = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line}"))
    };
    Measured {
        messages: field("messages"),
        bytes: field("bytes"),
        vmhwm_kb: field("vmhwm_kb"),
        heap_peak: field("heap_peak_bytes"),
    }
}

/// A store of `total` messages: half in one session, the rest in sessions of
/// 1000; ~300-byte varied contents, a tool call on every tenth message.
fn fill(total: usize) -> Store {
    fill_with_big(total, total / 2)
}

/// As [`fill`], with `big` messages in the one big session.
fn fill_with_big(total: usize, big: usize) -> Store {
    let s = Store::new();
    let mut plan = vec![("big".to_owned(), big)];
    let mut rest = total - big;
    let mut n = 0;
    while rest > 0 {
        let size = rest.min(1000);
        plan.push((format!("s{n:05}"), size));
        rest -= size;
        n += 1;
    }
    let mut counter = 0_usize;
    for (id, size) in plan {
        s.db.create_session(&NewSession::new(&id, "cli").model("m"))
            .expect("create");
        let mut left = size;
        while left > 0 {
            let chunk = left.min(5000);
            let batch: Vec<NewMessage> = (0..chunk)
                .map(|_| {
                    counter += 1;
                    let text = format!(
                        "message {counter} of the memory test: {} {}",
                        "lorem ipsum dolor sit amet ".repeat(8),
                        counter.wrapping_mul(2_654_435_761) % 1_000_003
                    );
                    let message = NewMessage::new(
                        &id,
                        if counter.is_multiple_of(2) {
                            "assistant"
                        } else {
                            "user"
                        },
                    )
                    .content(text)
                    .timestamp(1_700_000_000.0 + counter as f64);
                    if counter.is_multiple_of(10) {
                        message
                            .tool_calls(json!([{"id": format!("c{counter}"), "type": "function"}]))
                    } else {
                        message
                    }
                })
                .collect();
            s.db.append_messages(&batch).expect("append");
            left -= chunk;
        }
    }
    s
}

/// A fresh PostgreSQL schema holding a copy of a store, dropped afterwards.
struct PgCopy {
    schema: PgSchema,
}

impl PgCopy {
    fn of(store: &Store, admin: &str, tag: &str) -> PgCopy {
        let schema = PgSchema::on(admin, &format!("memory_{tag}"));
        store
            .db
            .migrate_to_postgres(schema.url())
            .expect("copy to PostgreSQL");
        PgCopy { schema }
    }
}

/// The streaming exports hold bounded memory on PostgreSQL too: the JSONL
/// export (a server-side cursor over the sessions, each session's messages
/// streamed), the original's shape in parts and one session's walk, each
/// on a store 10× larger (with a session 10× longer) than the other.
#[test]
fn streaming_exports_on_postgresql_hold_bounded_memory() {
    let Ok(admin) = std::env::var(hermes_state_testkit::PG_URL_VAR) else {
        println!("skipped: HERMES_STATE_TEST_PG_URL is not set (PostgreSQL export memory)");
        return;
    };
    let (small, large) = (2_000, 20_000);
    let (small_store, large_store) = (fill(small), fill(large));
    let small_pg = PgCopy::of(&small_store, &admin, "s");
    let large_pg = PgCopy::of(&large_store, &admin, "l");
    for shape in ["jsonl", "parts", "walk"] {
        let a = measure_on(&small_store.path, shape, Some(small_pg.schema.url()));
        let b = measure_on(&large_store.path, shape, Some(large_pg.schema.url()));
        let expected = |total: usize| if shape == "walk" { total / 2 } else { total } as u64;
        assert_eq!(
            (a.messages, b.messages),
            (expected(small), expected(large)),
            "{shape}"
        );
        assert!(b.bytes > 9 * a.bytes, "{shape}: {a:?} {b:?}");
        assert!(
            b.vmhwm_kb < a.vmhwm_kb * 3 / 2 + 8 * 1024,
            "{shape}: peak RSS grew with the store: {a:?} {b:?}"
        );
        assert!(
            b.heap_peak < 2 * a.heap_peak + (1 << 20),
            "{shape}: heap peak grew with the store: {a:?} {b:?}"
        );
    }
}

fn assert_bounded(small: usize, large: usize) {
    assert_bounded_with(fill(small), fill(large), small, large, "jsonl");
}

fn assert_bounded_with(
    small_store: Store,
    large_store: Store,
    small: usize,
    large: usize,
    shape: &str,
) {
    let a = measure(&small_store.path, shape);
    let b = measure(&large_store.path, shape);
    assert_eq!(a.messages, small as u64);
    assert_eq!(b.messages, large as u64);
    assert!(b.bytes > 9 * a.bytes, "{a:?} {b:?}");
    // Peak RSS: at most 1.5× the small export's + 8 MiB; the Rust heap
    // growth during the export: at most 2× + 1 MiB. A linear algorithm would
    // need ~10× (the large export writes > 9× the bytes).
    assert!(
        b.vmhwm_kb < a.vmhwm_kb * 3 / 2 + 8 * 1024,
        "peak RSS grew with the store: {a:?} {b:?}"
    );
    assert!(
        b.heap_peak < 2 * a.heap_peak + (1 << 20),
        "heap peak grew with the store: {a:?} {b:?}"
    );
}

#[test]
fn streaming_export_memory_is_bounded() {
    assert_bounded(2_000, 20_000);
}

/// `export_all_each` holds one session at a time: with sessions of at most
/// 1000 messages, a 10× larger store needs about the same memory (all of
/// `export_all` at once would need ~10×).
#[test]
fn original_shape_walk_memory_is_bounded() {
    let (small, large) = (2_000, 20_000);
    assert_bounded_with(
        fill_with_big(small, 0),
        fill_with_big(large, 0),
        small,
        large,
        "original",
    );
}

/// `export_all_parts` holds one message at a time: a store whose one session
/// is 10× longer needs about the same memory (`export_all_each` would hold
/// the session, ~10×).
#[test]
fn original_shape_parts_memory_is_bounded() {
    let (small, large) = (2_000, 20_000);
    assert_bounded_with(
        fill_with_big(small, small),
        fill_with_big(large, large),
        small,
        large,
        "parts",
    );
}

/// The parts put back together are `export_all` and `export_session`, in
/// their order; Break stops the walk.
#[test]
fn original_shape_parts_are_export_all_and_export_session() {
    use hermes_state::ExportPart;
    let s = fill_with_big(2_500, 1_200);
    let gather = |exports: &mut Vec<hermes_state::SessionExport>, part: ExportPart| {
        match part {
            ExportPart::Session(export) => {
                assert!(export.messages.is_empty());
                exports.push(export);
            }
            ExportPart::Message(message) => {
                exports.last_mut().expect("open").messages.push(message)
            }
            ExportPart::SessionEnd => {}
        }
        std::ops::ControlFlow::Continue(())
    };
    let mut all = Vec::new();
    let started =
        s.db.export_all_parts(None, |part| gather(&mut all, part))
            .expect("parts");
    assert_eq!(started, all.len() as u64);
    assert_eq!(all, s.db.export_all(None).expect("export_all"));
    let mut one = Vec::new();
    assert!(
        s.db.export_session_parts("big", |part| gather(&mut one, part))
            .expect("parts")
    );
    assert_eq!(
        one,
        vec![s.db.export_session("big").expect("export").expect("big")]
    );
    assert!(
        !s.db
            .export_session_parts("nope", |_| unreachable!())
            .expect("parts")
    );
    // Break on the first message: one session started, nothing more.
    let mut parts = 0;
    let started =
        s.db.export_all_parts(None, |part| {
            parts += 1;
            if matches!(part, ExportPart::Message(_)) {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        })
        .expect("parts");
    assert_eq!((started, parts), (1, 2));
}

/// `walk_messages` holds one message at a time: a session 10× longer needs
/// about the same memory (`get_messages` would hold ~10×).
#[test]
fn one_session_walk_memory_is_bounded() {
    let (small, large) = (2_000, 20_000);
    assert_bounded_with(
        fill_with_big(small, small),
        fill_with_big(large, large),
        small,
        large,
        "walk",
    );
}

/// `walk_messages` counts and hands over exactly what `get_messages_page`
/// returns, in its order, inactive rows only when asked; Break stops it.
#[test]
fn one_session_walk_is_get_messages() {
    let s = fill_with_big(1_500, 1_200);
    let first_three: Vec<i64> =
        s.db.get_messages_page("big", hermes_state::MessagePage::default())
            .expect("page")
            .iter()
            .take(3)
            .map(|m| m.id)
            .collect();
    s.db.rewind_to_message("big", first_three[2])
        .expect("rewind");
    for include_inactive in [false, true] {
        let page = hermes_state::MessagePage {
            include_inactive,
            ..hermes_state::MessagePage::default()
        };
        let expected = s.db.get_messages_page("big", page).expect("page");
        let mut counted = None;
        let mut walked = Vec::new();
        let handed =
            s.db.walk_messages(
                "big",
                include_inactive,
                |n| {
                    counted = Some(n);
                    std::ops::ControlFlow::Continue(())
                },
                |m| {
                    walked.push(m);
                    std::ops::ControlFlow::Continue(())
                },
            )
            .expect("walk");
        assert_eq!(walked, expected, "include_inactive={include_inactive}");
        assert_eq!(counted, Some(expected.len() as u64));
        assert_eq!(handed, expected.len() as u64);
    }
    let handed =
        s.db.walk_messages(
            "big",
            false,
            |_| std::ops::ControlFlow::Continue(()),
            |_| std::ops::ControlFlow::Break(()),
        )
        .expect("walk");
    assert_eq!(handed, 1);
    let none =
        s.db.walk_messages(
            "big",
            false,
            |_| std::ops::ControlFlow::Break(()),
            |_| std::ops::ControlFlow::Continue(()),
        )
        .expect("walk");
    assert_eq!(none, 0);
    assert_eq!(
        s.db.walk_messages(
            "nope",
            false,
            |n| {
                assert_eq!(n, 0);
                std::ops::ControlFlow::Continue(())
            },
            |_| std::ops::ControlFlow::Continue(())
        )
        .expect("walk"),
        0
    );
}

/// The walk hands over exactly what `export_all` returns, in its order.
#[test]
fn original_shape_walk_is_export_all() {
    let s = fill_with_big(3_500, 1_200);
    let mut walked = Vec::new();
    let handed =
        s.db.export_all_each(None, |export| {
            walked.push(export);
            std::ops::ControlFlow::Continue(())
        })
        .expect("walk");
    assert_eq!(handed, walked.len() as u64);
    assert_eq!(walked, s.db.export_all(None).expect("export_all"));
    // Break stops the walk.
    let handed =
        s.db.export_all_each(None, |_| std::ops::ControlFlow::Break(()))
            .expect("walk");
    assert_eq!(handed, 1);
}

#[test]
#[ignore = "builds a 200 000-message store (minutes in debug); run with --ignored"]
fn streaming_export_of_200k_messages_has_bounded_memory() {
    assert_bounded(20_000, 200_000);
}

#[test]
fn importing_a_large_export_round_trips() {
    let s = fill(12_000);
    let first = export(&s.db, &all());
    let fresh = Store::new();
    let report = import(&fresh.db, &first, false).expect("import");
    assert_eq!(report.messages, 12_000);
    assert_eq!(report.renumbered_messages, 0);
    assert_eq!(comparable(&first), comparable(&export(&fresh.db, &all())));
}
