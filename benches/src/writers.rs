//! The multi-process side of the throughput benches (`gateway … processes`,
//! `postgres_hosts`): latencies and their percentiles, and writer processes
//! (this same example run as `child …`) that start together, append for a
//! phase and hand their latencies back on stdout.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Latencies in microseconds.
pub struct Latencies(pub Vec<f64>);

impl Latencies {
    /// The latency at `quantile` (0.0–1.0); NaN when there is none.
    pub fn at(&self, quantile: f64) -> f64 {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return f64::NAN;
        }
        sorted[((sorted.len() as f64 * quantile) as usize).min(sorted.len() - 1)]
    }

    /// `p50 … ms, p99 … ms, max … ms (N calls)`.
    pub fn summary(&self) -> String {
        format!(
            "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} calls)",
            self.at(0.5) / 1e3,
            self.at(0.99) / 1e3,
            self.at(1.0) / 1e3,
            self.0.len()
        )
    }
}

/// Unix seconds now (the common start of the writer processes).
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Sleeps until the Unix time `start`.
pub fn wait_until(start: f64) {
    let now = unix_now();
    if start > now {
        thread::sleep(Duration::from_secs_f64(start - now));
    }
}

/// The writer side: waits for `start`, calls `append(i)` for i = 0, 1, …
/// for `secs` seconds, then prints `APPENDS <latencies in µs, comma-separated>`.
#[allow(clippy::print_stdout)] // the parent reads the figures from stdout
pub fn run_writer(start: f64, secs: f64, mut append: impl FnMut(usize)) {
    wait_until(start);
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let mut latencies = Vec::new();
    let mut i = 0;
    while Instant::now() < until {
        let t = Instant::now();
        append(i);
        latencies.push(format!("{:.0}", t.elapsed().as_secs_f64() * 1e6));
        i += 1;
    }
    println!("APPENDS {}", latencies.join(","));
}

/// Starts `writers` copies of this executable as
/// `child STORE W START SECS` (W = 0, 1, …), their stdout piped.
pub fn spawn_writers(store: &str, writers: usize, start: f64, secs: f64) -> Vec<Child> {
    let exe = std::env::current_exe().expect("this example");
    (0..writers)
        .map(|w| {
            Command::new(&exe)
                .args([
                    "child",
                    store,
                    &w.to_string(),
                    &start.to_string(),
                    &secs.to_string(),
                ])
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn a writer process")
        })
        .collect()
}

/// Waits for the writers; each one's append latencies (µs).
pub fn collect_appends(children: Vec<Child>) -> Vec<Vec<f64>> {
    children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().expect("writer process");
            assert!(output.status.success(), "a writer process failed");
            let text = String::from_utf8_lossy(&output.stdout);
            let list = text
                .lines()
                .find_map(|l| l.strip_prefix("APPENDS "))
                .expect("the writer's figures");
            list.split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().expect("latency"))
                .collect()
        })
        .collect()
}

/// Makes the writer lock files of the store at `store` impossible to open (a
/// dangling symbolic link each), so that its writers go on without turns:
/// SQLite's lock alone, as before the writer queue and as for the original.
pub fn without_writer_turns(store: &Path) -> std::io::Result<()> {
    let missing = store.with_extension("no-such-folder").join("lock");
    for lock_file in hermes_state_sqlite::writer_queue::WriterQueue::lock_files(store) {
        std::os::unix::fs::symlink(&missing, lock_file)?;
    }
    Ok(())
}
