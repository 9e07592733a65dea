//! Prints the figures of the last bench run as the Markdown tables of
//! `docs/PERFORMANCE.md`: for each group and case, criterion's median (and,
//! for the throughput groups, mean) for the
//! facade and the baseline, their ratio, and the goal where the issue sets one.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example report
//! ```
//!
//! It reads `$CARGO_TARGET_DIR/criterion` (else the workspace's
//! `target/criterion`), or the folder given as the first argument.

// A command-line tool: the tables go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// One side's figures: median ns, mean ns, elements per iteration.
type Side = (f64, f64, Option<u64>);

/// group -> case -> side -> figures.
type Figures = BTreeMap<String, BTreeMap<String, BTreeMap<String, Side>>>;

fn main() {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
                    manifest.parent().unwrap_or(manifest).join("target")
                })
                .join("criterion")
        });
    // group -> case -> side -> (median ns, mean ns, elements per iteration)
    let mut figures: Figures = BTreeMap::new();
    let Ok(groups) = fs::read_dir(&root) else {
        eprintln!("no criterion results in {}", root.display());
        std::process::exit(1);
    };
    for group in groups.flatten() {
        let group_name = group.file_name().to_string_lossy().into_owned();
        // Criterion stores `case/side` as the folder `case_side`.
        for entry in fs::read_dir(group.path()).into_iter().flatten().flatten() {
            let folder = entry.file_name().to_string_lossy().into_owned();
            let Some((case_name, side)) = ["facade", "baseline"].iter().find_map(|side| {
                folder
                    .strip_suffix(&format!("_{side}"))
                    .map(|case| (case.to_owned(), *side))
            }) else {
                continue;
            };
            let dir = entry.path().join("new");
            let Some(estimates) = read_json(&dir.join("estimates.json")) else {
                continue;
            };
            let point = |key: &str| {
                estimates
                    .pointer(&format!("/{key}/point_estimate"))
                    .and_then(Value::as_f64)
            };
            let (Some(median), Some(mean)) = (point("median"), point("mean")) else {
                continue;
            };
            let elements = read_json(&dir.join("benchmark.json"))
                .and_then(|v| v.pointer("/throughput/Elements")?.as_u64());
            figures
                .entry(group_name.clone())
                .or_default()
                .entry(case_name)
                .or_default()
                .insert(side.to_owned(), (median, mean, elements));
        }
    }
    let mut order: Vec<&String> = figures.keys().collect();
    order.sort_by_key(|g| (group_rank(g), size_rank(g), (*g).clone()));
    for group in order {
        println!("\n#### `{group}`\n");
        let throughput = group.starts_with("append") || group.starts_with("export");
        if throughput {
            println!(
                "| case | facade (median) | baseline (median) | ratio | facade (mean) | baseline (mean) | ratio of means | facade rate (mean) | baseline rate (mean) | goal |"
            );
            println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
        } else {
            println!("| case | facade (median) | baseline (median) | ratio | goal |");
            println!("| --- | ---: | ---: | ---: | --- |");
        }
        for (case, sides) in &figures[group] {
            let (Some(&(facade, facade_mean, elements)), Some(&(baseline, baseline_mean, _))) =
                (sides.get("facade"), sides.get("baseline"))
            else {
                continue;
            };
            let ratio = facade / baseline;
            let goal = goal(group, case, facade, ratio, facade_mean / baseline_mean);
            if throughput {
                let rate = |ns: f64| {
                    elements.map_or_else(String::new, |n| {
                        format!("{} msg/s", si(n as f64 / (ns / 1e9)))
                    })
                };
                println!(
                    "| {case} | {} | {} | {ratio:.2}× | {} | {} | {:.2}× | {} | {} | {goal} |",
                    time(facade),
                    time(baseline),
                    time(facade_mean),
                    time(baseline_mean),
                    facade_mean / baseline_mean,
                    rate(facade_mean),
                    rate(baseline_mean)
                );
            } else {
                println!(
                    "| {case} | {} | {} | {ratio:.2}× | {goal} |",
                    time(facade),
                    time(baseline)
                );
            }
        }
    }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

fn group_rank(group: &str) -> u8 {
    match group.split('_').next() {
        Some("append") => 0,
        Some("search") => 1,
        Some("read") => 2,
        Some("export") => 3,
        _ => 4,
    }
}

fn size_rank(group: &str) -> u64 {
    group
        .rsplit('_')
        .next()
        .and_then(hermes_state_benches::corpus::parse_size)
        .unwrap_or(0)
}

fn goal(group: &str, case: &str, facade_ns: f64, ratio: f64, ratio_of_means: f64) -> String {
    let mut goals = Vec::new();
    if group.starts_with("append") {
        // Periodic maintenance (checkpoints, FTS merges) shows in the mean only.
        goals.push(mark("≤ 1.3×", ratio <= 1.3 && ratio_of_means <= 1.3));
    } else if group.starts_with("search") {
        goals.push(mark("≤ 1.5×", ratio <= 1.5));
        if group.ends_with("_1m") && case.starts_with("word_") {
            goals.push(mark("p50 < 10 ms", facade_ns < 10e6));
        }
    }
    goals.join(", ")
}

fn mark(goal: &str, met: bool) -> String {
    format!("{goal} {}", if met { "met" } else { "**missed**" })
}

fn time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}
