//! Every command on a file and on PostgreSQL, over the same seeded data, in
//! the same order: the same exit code, the same stdout and the same stderr
//! (text and `--json`), once what genuinely differs is normalised (each
//! normalisation below says why). The commands that need the SQLite file
//! itself are compared as "refused on PostgreSQL with the one message".
//! The test ends by checking that its cases ran every command the binary has.
//! Needs the server `HERMES_STATE_TEST_PG_URL` names (else prints `skipped:`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state_testkit::PgSchema;

use crate::common::{Env, Run};

/// One clock for the command line on both sides (ages, `--since 30d`, the
/// times `demo` writes), well before the times the library records itself.
const NOW: &str = "1767225600";

/// The word every store location becomes.
const STORE: &str = "<store>";

/// The groups whose subcommands are commands of their own.
const GROUPS: [&str; 5] = ["sessions", "messages", "title", "fts", "maintenance"];

/// The same seeded store as a file and as a PostgreSQL schema.
struct Twins {
    env: Env,
    file: PathBuf,
    schema: PgSchema,
    /// How the PostgreSQL store is shown (its URL without the password).
    shown: String,
    /// When the test started: what the library records from here on is "now".
    started: f64,
    /// The commands run so far (`sessions show`, `stats`, …).
    covered: RefCell<BTreeSet<String>>,
}

/// Which side of a pair.
#[derive(Clone, Copy)]
enum Side {
    File,
    Server,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

impl Twins {
    fn new(case: &str) -> Option<Twins> {
        let schema = PgSchema::new("cli", case)?;
        let env = Env::new();
        let file = env.path("store.db");
        let mut twins = Twins {
            env,
            file,
            schema,
            shown: String::new(),
            started: unix_now(),
            covered: RefCell::default(),
        };
        let shown = twins.on(Side::Server, &["where"], None).ok().stdout;
        twins.shown = shown.trim_end().to_owned();
        twins.same(&["demo"]);
        Some(twins)
    }

    fn on(&self, side: Side, args: &[&str], stdin: Option<&str>) -> Run {
        let location = match side {
            Side::File => ["--db", self.file.to_str().unwrap()],
            Side::Server => ["--database-url", self.schema.url()],
        };
        let mut all = location.to_vec();
        all.extend_from_slice(args);
        self.env.raw_env(&all, &[("HERMES_STATE_NOW", NOW)], stdin)
    }

    /// Runs `args` on both and notes the command as covered.
    fn pair(&self, args: &[&str], stdin: Option<&str>) -> (Run, Run) {
        self.covered.borrow_mut().insert(command_of(args));
        (
            self.on(Side::File, args, stdin),
            self.on(Side::Server, args, stdin),
        )
    }

    /// The same exit code, stdout and stderr on both, normalised.
    #[track_caller]
    fn same(&self, args: &[&str]) -> Run {
        self.same_with(args, None, Compare::Exact)
    }

    #[track_caller]
    fn same_with(&self, args: &[&str], stdin: Option<&str>, compare: Compare) -> Run {
        let (file, server) = self.pair(args, stdin);
        let seen = |run: &Run| Seen {
            code: run.code,
            stdout: compare.stdout(&self.normal(&run.stdout)),
            stderr: compare.stderr(&self.normal(&run.stderr)),
        };
        assert_eq!(
            seen(&file),
            seen(&server),
            "{args:?} differs between the file (left) and PostgreSQL (right)"
        );
        file
    }

    /// A command that needs the SQLite file: it works on the file, and on
    /// PostgreSQL it is refused, before anything is opened, by the one check.
    #[track_caller]
    fn file_only(&self, args: &[&str]) {
        let (file, server) = self.pair(args, None);
        assert_eq!(file.code, 0, "{args:?} on the file: {}", file.stderr);
        let command = command_of(args);
        server
            .fails(2)
            .one_error_line()
            .stderr_has(&format!(
                "error: `{command}`: works on a SQLite file, not on a PostgreSQL store ({})",
                self.shown
            ))
            .stderr_has("migrate-to sqlite:PATH");
    }

    /// Output with what genuinely differs between the two sides replaced:
    /// * the store's location (a path on one side, a URL on the other), and
    ///   the option that names it again in `demo`'s suggestions;
    /// * the times the library records itself while the test runs (a new
    ///   session's start, an end, an export's `exported_at`): they come from
    ///   the system clock, not from `HERMES_STATE_NOW`, and the two sides run
    ///   moments apart — as Unix seconds and as human dates of today.
    fn normal(&self, text: &str) -> String {
        let file = self.file.display().to_string();
        let text = text
            .replace(&format!(" --db {file}"), " <store option>")
            .replace(
                &format!(" --database-url '{}'", self.shown),
                " <store option>",
            )
            .replace(&file, STORE)
            .replace(&self.shown, STORE);
        let text = now_numbers(&text, self.started - 1.0, unix_now() + 1.0);
        now_dates(&text, &[self.started, unix_now()])
    }
}

/// What is compared of one run.
#[derive(Debug, PartialEq)]
struct Seen {
    code: i32,
    stdout: String,
    stderr: String,
}

/// How much of a pair is compared beyond the normalisations every case gets.
#[derive(Clone, Copy)]
enum Compare {
    /// All of it.
    Exact,
    /// Search hits without their snippets: the windows of text around a
    /// match differ by design (FTS5's `snippet()` against PostgreSQL's
    /// `ts_headline`; docs/POSTGRES.md), the hits do not.
    NoSnippets,
    /// [`Compare::NoSnippets`], in either order: relevance ranks differ by
    /// design too (bm25 against `ts_rank`; docs/POSTGRES.md).
    RankedHits,
    /// stderr up to its advice (the first `; `): the advice names what to
    /// do on that backend (a new file, a new schema).
    AdviceDiffers,
}

impl Compare {
    fn stdout(self, text: &str) -> String {
        match self {
            Compare::NoSnippets => without_snippets(text),
            Compare::RankedHits => {
                let mut hits: Vec<String> = match serde_json::from_str(&without_snippets(text)) {
                    Ok(serde_json::Value::Array(items)) => {
                        items.iter().map(ToString::to_string).collect()
                    }
                    _ => without_snippets(text).lines().map(str::to_owned).collect(),
                };
                hits.sort();
                hits.join("\n")
            }
            _ => text.to_owned(),
        }
    }

    fn stderr(self, text: &str) -> String {
        match self {
            Compare::AdviceDiffers => text
                .lines()
                .map(|line| line.split("; ").next().unwrap_or(line))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => text.to_owned(),
        }
    }
}

/// A search's output without snippets: the `snippet` fields of JSON, the
/// indented hit bodies of text.
fn without_snippets(text: &str) -> String {
    if let Ok(mut value) = serde_json::from_str::<serde_json::Value>(text) {
        fn strip(value: &mut serde_json::Value) {
            match value {
                serde_json::Value::Object(map) => {
                    map.remove("snippet");
                    map.values_mut().for_each(strip);
                }
                serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
                _ => {}
            }
        }
        strip(&mut value);
        return value.to_string();
    }
    text.lines()
        .filter(|line| !line.starts_with("    "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Numbers (Unix seconds) between `from` and `to` replaced by `<now>`.
fn now_numbers(text: &str, from: f64, to: f64) -> String {
    let mut out = String::with_capacity(text.len());
    let mut number = String::new();
    let flush = |number: &mut String, out: &mut String| {
        match number.parse::<f64>() {
            Ok(value) if (from..=to).contains(&value) => out.push_str("<now>"),
            _ => out.push_str(number),
        }
        number.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() || (c == '.' && !number.is_empty()) {
            number.push(c);
        } else {
            flush(&mut number, &mut out);
            out.push(c);
        }
    }
    flush(&mut number, &mut out);
    out
}

/// Dates of the days of `instants` (UTC, as the tests' `TZ`), with the
/// time of day after them (`2026-12-03 11:05`, `2026-12-03T11:05:07.1Z`),
/// replaced by `<now>`.
fn now_dates(text: &str, instants: &[f64]) -> String {
    let mut text = text.to_owned();
    for day in instants.iter().map(|t| civil_day(*t)) {
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&day) {
            out.push_str(&rest[..at]);
            out.push_str("<now>");
            let tail = &rest[at + day.len()..];
            let mut end = 0;
            let bytes = tail.as_bytes();
            while end < bytes.len() {
                let b = bytes[end];
                let time_char = b.is_ascii_digit() || b":.TZ".contains(&b);
                let space_then_digit =
                    b == b' ' && end == 0 && bytes.get(1).is_some_and(u8::is_ascii_digit);
                if !(time_char || space_then_digit) {
                    break;
                }
                end += 1;
            }
            rest = &tail[end..];
        }
        out.push_str(rest);
        text = out;
    }
    text
}

/// `YYYY-MM-DD` of a Unix time (UTC), by the civil-from-days algorithm.
fn civil_day(unix: f64) -> String {
    let days = (unix / 86_400.0).floor() as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The command `args` run (`sessions show`, `stats`), options left out.
fn command_of(args: &[&str]) -> String {
    let mut words = args.iter().filter(|a| !a.starts_with('-'));
    let first = words.next().copied().unwrap_or_default();
    match words.next() {
        Some(sub) if GROUPS.contains(&first) => format!("{first} {sub}"),
        _ => first.to_owned(),
    }
}

/// A reading command, as text and as `--json`.
#[track_caller]
fn read_both_ways(twins: &Twins, args: &[&str], compare: Compare) {
    twins.same_with(args, None, compare);
    let mut json = vec!["--json"];
    json.extend_from_slice(args);
    twins.same_with(&json, None, compare);
}

#[test]
fn every_command_prints_the_same_on_a_file_and_on_postgresql() {
    let Some(twins) = Twins::new("both-backends") else {
        return;
    };
    reading(&twins);
    writing(&twins);
    file_only(&twins);
    doctor(&twins);
    moved(&twins);
    // When a command is added, this names it until a case above runs it.
    let missing: Vec<String> = commands_of_the_binary(&twins.env)
        .difference(&twins.covered.borrow())
        .cloned()
        .collect();
    assert!(
        missing.is_empty(),
        "commands no case compares between a file and PostgreSQL: {missing:?}"
    );
}

/// The reading commands on the seeded stores.
fn reading(t: &Twins) {
    // A second `demo` is refused on both, each naming its own way to a new store.
    t.same_with(&["demo"], None, Compare::AdviceDiffers);

    // Reading, and session arguments resolved as everywhere: an id, a
    // title, `latest`, an id prefix, an ambiguous prefix, nothing.
    for args in [
        &["sessions", "list"][..],
        &["sessions", "list", "--since", "30d", "--limit", "3"],
        &["sessions", "list", "--format", "csv"],
        &["sessions", "show", "demo-paris", "--no-pager"],
        &["sessions", "show", "Weather in Paris", "--no-pager"],
        &[
            "sessions",
            "show",
            "demo-refactor",
            "--lineage",
            "--no-pager",
        ],
        &["sessions", "show", "nope", "--no-pager"],
        &["sessions", "lineage", "demo-refactor-2"],
        &["messages", "list", "demo-paris"],
        &["messages", "list", "latest", "--limit", "2"],
        &["title", "get", "demo-paris"],
        &["title", "get", "demo-refactor-s"],
        &["title", "get", "demo-ref"],
        &["title", "resolve", "Weather in Paris"],
        &["title", "resolve", "no such title"],
        &["title", "next", "Weather in Paris"],
        &["stats"],
        &["stats", "--since", "30d"],
        &["prune", "--older-than-days", "90", "--dry-run"],
    ] {
        read_both_ways(t, args, Compare::Exact);
    }
    for args in [
        &["search", "parser", "--by-conversation", "--sort", "newest"][..],
        &[
            "search",
            "parser",
            "--session",
            "demo-refactor",
            "--sort",
            "oldest",
        ],
        &["search", "东京", "--sort", "newest"],
    ] {
        read_both_ways(t, args, Compare::NoSnippets);
    }
    for args in [
        &["search", "bike"][..],
        &["search", "东京"],
        &["search", "parser", "--by-conversation"],
        &["search", "\"unclosed"],
    ] {
        read_both_ways(t, args, Compare::RankedHits);
    }
    t.same(&["export", "--format", "jsonl"]);
    t.same(&["export"]);
    t.same(&["export", "--format", "markdown", "--session", "demo-paris"]);
    // Needs a terminal; refused alike before the store is opened.
    t.same(&["search", "-i"]);
    t.same(&["--json", "search", "-i"]);
    // The program's own texts; they open no store.
    t.same(&["completions", "bash"]);
    t.same(&["man"]);
    t.same(&["where"]);
    // The backend is what `where --json` names, and whether a file exists
    // yet is a file's question (`where` opens nothing, so it does not ask
    // a server): the location is compared.
    let (file, server) = t.pair(&["--json", "where"], None);
    let (file, server) = (file.ok().json(), server.ok().json());
    assert_eq!(
        (&file["backend"], &server["backend"]),
        (&"sqlite".into(), &"postgres".into())
    );
    assert_eq!(
        t.normal(file["location"].as_str().unwrap()),
        t.normal(server["location"].as_str().unwrap())
    );
}

/// The writing commands, each as text, then as `--json`, on the same state.
fn writing(t: &Twins) {
    t.same(&["--read-only", "title", "set", "demo-paris", "x"]);
    t.same(&["sessions", "create", "--id", "t1", "--source", "cli"]);
    t.same(&["sessions", "create", "--id", "t1", "--source", "cli"]);
    t.same(&[
        "--json", "sessions", "create", "--id", "t2", "--source", "cli", "--parent", "t1",
    ]);
    t.same(&[
        "sessions", "create", "--id", "t3", "--source", "cli", "--parent", "nope",
    ]);
    t.same(&["title", "get", "t1"]);
    t.same(&["--json", "title", "get", "t1"]);
    t.same(&["title", "set", "t1", "Trip"]);
    t.same(&["--json", "title", "set", "t2", "Trip2"]);
    t.same(&["title", "set", "t2", "Trip"]);
    t.same(&["title", "set", "t2", ""]);
    t.same(&["title", "next", "Trip"]);
    t.same(&[
        "messages",
        "append",
        "t1",
        "--role",
        "user",
        "--content",
        "hello there",
    ]);
    t.same(&[
        "--json",
        "messages",
        "append",
        "t1",
        "--role",
        "assistant",
        "--content",
        "hi",
    ]);
    t.same_with(
        &["messages", "append", "t1", "--role", "user"],
        Some("from a pipe"),
        Compare::Exact,
    );
    t.same(&[
        "messages",
        "append",
        "nope",
        "--role",
        "user",
        "--content",
        "x",
    ]);
    read_both_ways(t, &["messages", "list", "t1"], Compare::Exact);
    let first = t
        .on(Side::File, &["--json", "messages", "list", "t1"], None)
        .json()[0]["id"]
        .to_string();
    t.same(&["sessions", "rewind", "t1", "--to", &first]);
    t.same(&["sessions", "restore", "t1"]);
    t.same(&["--json", "sessions", "rewind", "t1", "--to", &first]);
    t.same(&["--json", "sessions", "restore", "t1", "--since", &first]);
    t.same(&["sessions", "rewind", "t1", "--to", "999999"]);
    t.same(&["sessions", "end", "t1"]);
    t.same(&["sessions", "end", "t1"]);
    t.same(&["--json", "sessions", "end", "t2", "--reason", "compression"]);
    t.same(&["sessions", "reopen", "t1"]);
    t.same(&["--json", "sessions", "reopen", "t2"]);
    for flag in ["archive", "unarchive", "pin", "unpin"] {
        t.same(&["sessions", flag, "demo-refactor-2"]);
        t.same(&["--json", "sessions", flag, "t1"]);
    }
    t.same(&["sessions", "pin", "demo-refactor-2"]);
    t.same(&["sessions", "clear", "t2", "--yes"]);
    t.same(&["--json", "sessions", "clear", "t1", "--yes"]);
    t.same(&["sessions", "clear", "t1"]);
    t.same(&["sessions", "delete", "t2", "--yes"]);
    t.same(&["--json", "sessions", "delete", "t1", "--yes"]);
    t.same(&["sessions", "delete", "demo-paris", "nope", "--yes"]);

    // An export of the file, imported into both.
    let export = t.env.path("export.jsonl");
    t.on(
        Side::File,
        &[
            "export",
            "--format",
            "jsonl",
            "--output",
            export.to_str().unwrap(),
        ],
        None,
    )
    .ok();
    let export = export.to_str().unwrap();
    t.same(&["import", export]);
    t.same(&["--json", "import", export, "--overwrite", "--yes"]);
    let not_an_export = t.env.path("notes.txt");
    std::fs::write(&not_an_export, "hello\n").unwrap();
    t.same(&["import", not_an_export.to_str().unwrap()]);

    t.same(&["prune", "--older-than-days", "90", "--yes"]);
    t.same(&["--json", "prune", "--source", "discord", "--yes"]);
    t.same(&[
        "maintenance",
        "auto",
        "--no-vacuum",
        "--archive-idle-days",
        "30",
    ]);
    t.same(&["--json", "maintenance", "auto", "--no-vacuum"]);
    read_both_ways(t, &["stats"], Compare::Exact);
    read_both_ways(t, &["sessions", "list"], Compare::Exact);
}

/// The file's own maintenance: refused on PostgreSQL with the one message.
fn file_only(t: &Twins) {
    let backup = t.env.path("backup.db");
    for args in [
        &["backup", backup.to_str().unwrap()][..],
        &["vacuum"],
        &["fts", "rebuild"],
        &["fts", "optimize-storage"],
        &["fts", "rebuild-cjk"],
        &["migrate"],
        &["migrate", "--dry-run"],
        &["schema"],
        &["query", "SELECT count(*) FROM sessions"],
        &["--json", "schema"],
        &["--json", "query", "SELECT 1"],
    ] {
        t.file_only(args);
    }
}

/// `doctor`: each backend checks what it is made of (FTS5 tables and
/// SQLite's integrity check on a file, the schema ledger and catalogs on
/// the server), so the reports differ by design; the verdict does not.
fn doctor(t: &Twins) {
    for args in [&["doctor"][..], &["doctor", "--repair"]] {
        let (file, server) = t.pair(args, None);
        assert_eq!((file.code, server.code), (0, 0), "{args:?}");
        let json = [&["--json"][..], args].concat();
        let (file, server) = t.pair(&json, None);
        assert_eq!(file.code, server.code, "{json:?}");
        let verdict = |run: &Run| {
            let report = run.json();
            let report = report.get("after").unwrap_or(&report);
            (report["healthy"].clone(), report["problems"].clone())
        };
        assert_eq!(verdict(&file), verdict(&server), "{json:?}");
    }
}

/// `migrate-to`: each side moves to a new store of the other backend; then
/// both read with a note and refuse writes alike.
fn moved(t: &Twins) {
    t.same(&["sessions", "create", "--id", "kept", "--source", "cli"]);
    let target = PgSchema::new("cli", "both-moved-target").unwrap();
    let new_file = t.env.path("moved-here.db");
    t.covered.borrow_mut().insert("migrate-to".to_owned());
    let moved = |side: Side, to: &str, shown: &str| {
        let run = t.on(side, &["migrate-to", to], None).ok();
        run.stdout.replace(shown, "<target>")
    };
    let target_shown = t
        .env
        .raw(&["--database-url", target.url(), "where"], None)
        .ok()
        .stdout
        .trim_end()
        .to_owned();
    let new_file_shown = format!("sqlite:{}", new_file.display());
    assert_eq!(
        t.normal(&moved(Side::File, target.url(), &target_shown)),
        t.normal(&moved(Side::Server, &new_file_shown, &new_file_shown)),
        "migrate-to"
    );
    // The targets differ (a schema, a file): the notes are compared up to them.
    let up_to_target = |run: &Run| {
        run.stderr
            .split(" was moved to ")
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    // (`--json` prints no notes, on either.)
    for args in [
        &["sessions", "list"][..],
        &["title", "get", "kept"],
        &["stats"],
    ] {
        let (file, server) = t.pair(args, None);
        assert_eq!(
            (file.code, &file.stdout),
            (server.code, &server.stdout),
            "{args:?}"
        );
        let file = file.stderr_has("note: this store was moved to postgresql://");
        let server = server.stderr_has("note: this store was moved to sqlite:");
        assert_eq!(up_to_target(&file), up_to_target(&server), "{args:?}");
    }
    for args in [
        &["title", "set", "kept", "late"][..],
        &["sessions", "create", "--id", "late", "--source", "cli"],
        &[
            "messages",
            "append",
            "kept",
            "--role",
            "user",
            "--content",
            "late",
        ],
    ] {
        let (file, server) = t.pair(args, None);
        let file = file.fails(2).stderr_has("--write-moved");
        let server = server.fails(2).stderr_has("--write-moved");
        assert_eq!(up_to_target(&file), up_to_target(&server), "{args:?}");
    }
    let (file, server) = t.pair(&["--write-moved", "title", "set", "kept", "late"], None);
    let (file, server) = (file.ok(), server.ok());
    assert_eq!(file.stdout, server.stdout);
    assert_eq!(up_to_target(&file), up_to_target(&server));
    t.same(&["--json", "title", "get", "kept"]);
}

/// The commands of the binary, from its help: top-level ones, and each
/// group's own.
fn commands_of_the_binary(env: &Env) -> BTreeSet<String> {
    let listed = |args: &[&str]| -> Vec<String> {
        let help = env.raw(args, None).ok().stdout;
        help.lines()
            .skip_while(|line| !line.starts_with("Commands:"))
            .skip(1)
            .take_while(|line| line.starts_with("  "))
            .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
            .filter(|name| name != "help")
            .collect()
    };
    let mut all = BTreeSet::new();
    for name in listed(&["--help"]) {
        if GROUPS.contains(&name.as_str()) {
            for sub in listed(&[&name, "--help"]) {
                all.insert(format!("{name} {sub}"));
            }
        } else {
            all.insert(name);
        }
    }
    all
}
