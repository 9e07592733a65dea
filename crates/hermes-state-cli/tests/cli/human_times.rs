//! Human times in the local zone (`TZ`), `--utc` to switch; machine output
//! unchanged. Relative ages in `sessions list`, counted from a clock fixed
//! with `HERMES_STATE_NOW`.

use std::path::{Path, PathBuf};

use crate::common::*;

/// 2026-07-24T00:00:00Z: the demo's "now" in these tests.
const NOW: &str = "1784851200";

fn demo_at_now(env: &Env, name: &str) -> PathBuf {
    let db = env.path(name);
    env.run_env(&db, &[("HERMES_STATE_NOW", NOW)], &["demo"])
        .ok();
    db
}

fn in_zone(env: &Env, db: &Path, tz: &str, args: &[&str]) -> Run {
    env.run_env(db, &[("TZ", tz), ("HERMES_STATE_NOW", NOW)], args)
        .ok()
}

#[test]
fn human_output_is_local_time_and_utc_with_the_flag() {
    let env = Env::new();
    let db = demo_at_now(&env, "t.db");
    // demo-paris: started 2026-07-22T00:00:00Z, first message then.
    in_zone(&env, &db, "UTC", &["sessions", "list"])
        .stdout_has("LAST ACTIVE (UTC)")
        .stdout_has("2026-07-22 00:01");
    for tokyo in ["Asia/Tokyo", "JST-9"] {
        in_zone(&env, &db, tokyo, &["sessions", "list"])
            .stdout_has("LAST ACTIVE (JST)")
            .stdout_has("2026-07-22 09:01");
        in_zone(&env, &db, tokyo, &["search", "bike", "--limit", "1"])
            .stdout_has("2026-07-22 09:00 JST");
        in_zone(
            &env,
            &db,
            tokyo,
            &["sessions", "show", "demo-paris", "--no-pager"],
        )
        .stdout_has("2026-07-22 09:00:00 JST");
        in_zone(
            &env,
            &db,
            tokyo,
            &["export", "--format", "markdown", "--session", "demo-paris"],
        )
        .stdout_has("2026-07-22 09:00:00 JST");
        // --utc switches every one back.
        in_zone(&env, &db, tokyo, &["--utc", "sessions", "list"])
            .stdout_has("LAST ACTIVE (UTC)")
            .stdout_has("2026-07-22 00:01");
        in_zone(
            &env,
            &db,
            tokyo,
            &["search", "bike", "--limit", "1", "--utc"],
        )
        .stdout_has("2026-07-22 00:00 UTC");
    }
    // A zone with daylight saving names the offset in force at each time.
    in_zone(
        &env,
        &db,
        "Europe/Paris",
        &["search", "bike", "--limit", "1"],
    )
    .stdout_has("2026-07-22 02:00 CEST");
}

#[test]
fn machine_output_is_the_same_in_every_zone() {
    let env = Env::new();
    let db = demo_at_now(&env, "m.db");
    for args in [
        &["--json", "sessions", "list"][..],
        &["sessions", "list", "--format", "csv"],
        &["search", "bike", "--format", "jsonl"],
        &["--json", "sessions", "show", "demo-paris"],
        &["export", "--session", "demo-paris"],
    ] {
        let utc = in_zone(&env, &db, "UTC", args).stdout;
        let tokyo = in_zone(&env, &db, "Asia/Tokyo", args).stdout;
        assert_eq!(utc, tokyo, "{args:?}");
        assert!(!utc.is_empty(), "{args:?}");
    }
}

#[test]
fn dates_given_to_since_are_read_in_the_same_zone() {
    let env = Env::new();
    let db = demo_at_now(&env, "w.db");
    let listed = |tz: &str, extra: &[&str]| {
        let mut args = vec!["--json", "sessions", "list"];
        args.extend_from_slice(extra);
        ids(&in_zone(&env, &db, tz, &args).json())
    };
    // 08:00 on 2026-07-22: UTC leaves demo-paris (00:00Z) out, Tokyo
    // (2026-07-21T23:00Z) takes it; a trailing Z is UTC in any zone.
    let since = ["--since", "2026-07-22T08:00"];
    assert_eq!(listed("UTC", &since), ["demo-dinner"]);
    assert_eq!(listed("Asia/Tokyo", &since), ["demo-dinner", "demo-paris"]);
    let mut with_utc = since.to_vec();
    with_utc.insert(0, "--utc");
    assert_eq!(listed("Asia/Tokyo", &with_utc), ["demo-dinner"]);
    assert_eq!(
        listed("Asia/Tokyo", &["--since", "2026-07-22T08:00Z"]),
        ["demo-dinner"]
    );
}

#[test]
fn listings_show_ages_from_the_fixed_clock() {
    let env = Env::new();
    let db = demo_at_now(&env, "a.db");
    let line = |run: &Run, id: &str| -> String {
        run.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no {id} in {}", run.stdout))
            .to_owned()
    };
    let now = in_zone(&env, &db, "UTC", &["sessions", "list"]).stdout_has("AGE");
    // Last active: dinner 2026-07-23 00:05Z, paris 2026-07-22 00:01Z,
    // the cron digest 2026-01-05.
    assert!(
        line(&now, "demo-dinner").contains("  23h ago  "),
        "{}",
        now.stdout
    );
    assert!(
        line(&now, "demo-paris").contains("  1d ago  "),
        "{}",
        now.stdout
    );
    assert!(
        line(&now, "demo-digest-old").contains("  6mo ago  "),
        "{}",
        now.stdout
    );
    // Ten days later, same store.
    let later = env
        .run_env(
            &db,
            &[("TZ", "UTC"), ("HERMES_STATE_NOW", "1785715200")],
            &["sessions", "list"],
        )
        .ok();
    assert!(
        line(&later, "demo-dinner").contains("  10d ago  "),
        "{}",
        later.stdout
    );
    assert!(
        line(&later, "demo-paris").contains("  11d ago  "),
        "{}",
        later.stdout
    );
    assert!(
        line(&later, "demo-refactor-serde").contains("  2w ago  "),
        "{}",
        later.stdout
    );
    // The same clock moves relative bounds: --since 2d is two days before it.
    let recent = ids(&env
        .run_env(
            &db,
            &[("HERMES_STATE_NOW", NOW)],
            &["--json", "sessions", "list", "--since", "2d"],
        )
        .ok()
        .json());
    assert_eq!(recent, ["demo-dinner", "demo-paris"]);
}
