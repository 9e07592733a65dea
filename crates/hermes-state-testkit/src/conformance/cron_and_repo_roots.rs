//! The runs of a cron job (`api.md` §10.4), the message count of a source,
//! and backfilling repository roots (§2.5) through the seam.

use hermes_state_types::NewSession;

use super::Backend;
use crate::build::say;

/// Session ids with their `last_active` and `preview`, in the order listed.
type Runs = Vec<(String, f64, String)>;

/// Session ids with their `git_repo_root`.
type Roots = Vec<(String, Option<String>)>;

fn ids_and_activity(rows: Vec<hermes_state_core::rich_listing::RichSession>) -> Runs {
    rows.into_iter()
        .map(|row| (row.session.id, row.last_active, row.preview))
        .collect()
}

/// The original's `[cron_<job>_, cron_<job>\`)` id range: literal,
/// case-sensitive; rows carry `preview`.
pub fn cron_runs_match_the_job_prefix_literally_and_case_sensitively_newest_first_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("cron_job1_20260101", "cron"), 1.0);
    b.add(NewSession::new("cron_job1_20260102", "cron"), 2.0);
    say(&*b, "cron_job1_20260102", "ran", 7.0);
    b.add(NewSession::new("cron_job10_20260101", "cron"), 3.0);
    b.add(NewSession::new("cron_jobX1_x", "cron"), 4.0);
    b.add(NewSession::new("cron_job1_cli", "cli"), 5.0);
    b.add(NewSession::new("CRON_JOB1_upper", "cron"), 6.0);
    b.add(NewSession::new("cron_job1_other-source", "Cron"), 6.5);
    b.add(NewSession::new("cron_a%b_1", "cron"), 8.0);
    b.add(NewSession::new("cron_aXb_1", "cron"), 9.0);
    let mut lists = Vec::new();
    let mut runs = |job: &str, limit: u32, offset: u32| {
        let got = ids_and_activity(s.list_cron_job_runs(job, limit, offset).unwrap());
        lists.push(got.clone());
        got
    };
    let job1 = vec![
        ("cron_job1_20260102".to_owned(), 7.0, "ran".to_owned()),
        ("cron_job1_20260101".to_owned(), 1.0, String::new()),
    ];
    assert_eq!(
        runs("job1", 20, 0),
        job1,
        "{n}: source 'cron' only, case-sensitive, newest start first"
    );
    assert_eq!(
        runs("JOB1", 20, 0),
        vec![],
        "{n}: `CRON_JOB1_upper` is not `cron_JOB1_`"
    );
    assert_eq!(runs("job1", 1, 1), job1[1..2].to_vec(), "{n}: paged");
    assert_eq!(runs("job1", 0, 0), vec![], "{n}: limit 0");
    assert_eq!(runs("job_", 20, 0), vec![], "{n}: `_` is literal");
    assert_eq!(
        runs("a%b", 20, 0),
        vec![("cron_a%b_1".to_owned(), 8.0, String::new())],
        "{n}: `%` is literal"
    );
    assert_eq!(runs("", 20, 0), vec![], "{n}");
    assert_eq!(runs("nope", 20, 0), vec![], "{n}");
    super::agreed::check(
        "cron_and_repo_roots::cron_runs_match_the_job_prefix_literally_and_case_sensitively_newest_first_alike",
        n,
        &(lists),
    );
}

pub fn messages_are_counted_per_exact_source_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("t1", "telegram"), 1.0);
    b.add(NewSession::new("t2", "telegram"), 2.0);
    b.add(NewSession::new("T", "Telegram"), 3.0);
    b.add(NewSession::new("c", "cli"), 4.0);
    for (id, count) in [("t1", 2), ("t2", 1), ("T", 4), ("c", 0)] {
        for i in 0..count {
            say(&*b, id, "hello", 10.0 + f64::from(i));
        }
    }
    assert_eq!(s.message_count_of_source("telegram").unwrap(), 3, "{n}");
    assert_eq!(s.message_count_of_source("Telegram").unwrap(), 4, "{n}");
    assert_eq!(s.message_count_of_source("cli").unwrap(), 0, "{n}");
    assert_eq!(s.message_count_of_source("nope").unwrap(), 0, "{n}");
    assert_eq!(s.message_count_of_source("").unwrap(), 0, "{n}");
}

pub fn repo_roots_are_backfilled_only_where_missing_for_non_empty_pairs_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let with_cwd = |id: &str, cwd: &str, root: Option<&str>| {
        let mut session = NewSession::new(id, "cli");
        session.cwd = Some(cwd.into());
        session.git_repo_root = root.map(String::from);
        session
    };
    b.add(with_cwd("missing", "/w/app", None), 1.0);
    b.add(with_cwd("empty", "/w/app", Some("")), 2.0);
    b.add(with_cwd("known", "/w/app", Some("/w")), 3.0);
    b.add(with_cwd("other", "/w/lib", None), 4.0);
    b.add(with_cwd("case", "/W/APP", None), 5.0);
    b.add(NewSession::new("no-cwd", "cli"), 6.0);
    s.backfill_repo_roots(&[
        ("/w/app", "/w/app-root"),
        ("/w/app", "/second"),
        ("", "/ignored"),
        ("/w/lib", ""),
        ("/nowhere", "/r"),
    ])
    .unwrap();
    s.backfill_repo_roots(&[]).unwrap();
    let roots: Roots = ["missing", "empty", "known", "other", "case", "no-cwd"]
        .iter()
        .map(|id| {
            let row = s.get_session(id).unwrap().unwrap();
            (row.id, row.git_repo_root)
        })
        .collect();
    let expected: Roots = [
        ("missing", Some("/w/app-root")),
        ("empty", Some("/w/app-root")),
        ("known", Some("/w")),
        ("other", None),
        ("case", None),
        ("no-cwd", None),
    ]
    .iter()
    .map(|(id, root)| (id.to_string(), root.map(String::from)))
    .collect();
    assert_eq!(
        roots, expected,
        "{n}: the first root of a cwd wins, exact cwd only, known roots kept"
    );
    super::agreed::check(
        "cron_and_repo_roots::repo_roots_are_backfilled_only_where_missing_for_non_empty_pairs_alike",
        n,
        &(roots),
    );
}
