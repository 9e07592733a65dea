//! Every command on a file and on PostgreSQL, over the same seeded data, in
//! the same order: the same exit code, the same stdout and the same stderr
//! (text and `--json`), once what genuinely differs is normalised (`normal`
//! lists each normalisation and why). The commands that need the SQLite
//! file itself are compared as "refused on PostgreSQL with the one
//! message"; `doctor`, whose report is each backend's own, by its verdict.
//! The test ends by checking that its cases ran every command the binary's
//! help lists. Needs the server `HERMES_STATE_TEST_PG_URL` names (else
//! prints `skipped:`).

mod normal;

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state_testkit::PgSchema;

use self::normal::{Compare, Everywhere};
use crate::common::{Env, Run};

/// One clock for the command line on both sides (ages, `--since 30d`, the
/// times `demo` writes), well before the times the library records itself.
const NOW: &str = "1767225600";

/// The groups whose subcommands are commands of their own.
const GROUPS: [&str; 5] = ["sessions", "messages", "title", "fts", "maintenance"];

/// The same seeded store as a file and as a PostgreSQL schema.
struct Twins {
    env: Env,
    file: PathBuf,
    schema: PgSchema,
    /// How the PostgreSQL store is shown (its URL without the password).
    shown: String,
    /// When the test started: what the library records from then on is "now".
    started: f64,
    /// The commands run so far (`sessions show`, `stats`, …).
    covered: RefCell<BTreeSet<String>>,
}

#[derive(Clone, Copy)]
enum Side {
    File,
    Server,
}

/// What is compared of one run.
#[derive(Debug, PartialEq)]
struct Seen {
    code: i32,
    stdout: String,
    stderr: String,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A command line as words: split at spaces, but for 'quoted text'.
fn words(line: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let (word, after) = match rest.strip_prefix('\'') {
            Some(quoted) => quoted.split_once('\'').expect("a closing quote"),
            None => rest.split_once(' ').unwrap_or((rest, "")),
        };
        words.push(word);
        rest = after.trim_start();
    }
    words
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

impl Twins {
    fn new(case: &str) -> Option<Twins> {
        let schema = PgSchema::new("cli", case)?;
        let env = Env::new();
        // Not `state.db`, the default store, which `demo` would not name.
        let file = env.path("store.db");
        let mut twins = Twins {
            env,
            file,
            schema,
            shown: String::new(),
            started: unix_now(),
            covered: RefCell::default(),
        };
        twins.shown = twins.on(Side::Server, &["where"], None).ok().stdout;
        twins.shown.truncate(twins.shown.trim_end().len());
        twins.same("demo");
        Some(twins)
    }

    fn on(&self, side: Side, args: &[&str], stdin: Option<&str>) -> Run {
        let location = match side {
            Side::File => ["--db", self.file.to_str().unwrap()],
            Side::Server => ["--database-url", self.schema.url()],
        };
        let all = [&location[..], args].concat();
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

    fn normal(&self, text: &str) -> String {
        Everywhere {
            file: &self.file.display().to_string(),
            server: &self.shown,
            started: self.started,
            now: unix_now(),
        }
        .apply(text)
    }

    fn seen(&self, run: &Run, compare: Compare) -> Seen {
        Seen {
            code: run.code,
            stdout: compare.stdout(&self.normal(&run.stdout)),
            stderr: compare.stderr(&self.normal(&run.stderr)),
        }
    }

    /// The same exit code, stdout and stderr on both.
    #[track_caller]
    fn same(&self, line: &str) -> Run {
        self.same_with(&words(line), None, Compare::Exact)
    }

    /// [`Twins::same`] as text, then as `--json`.
    #[track_caller]
    fn both_ways(&self, line: &str, compare: Compare) {
        self.same_with(&words(line), None, compare);
        self.same_with(&[&["--json"], &words(line)[..]].concat(), None, compare);
    }

    #[track_caller]
    fn same_with(&self, args: &[&str], stdin: Option<&str>, compare: Compare) -> Run {
        let (file, server) = self.pair(args, stdin);
        assert_eq!(
            self.seen(&file, compare),
            self.seen(&server, compare),
            "{args:?} differs between the file (left) and PostgreSQL (right)"
        );
        file
    }

    /// A command that needs the SQLite file: it works on the file, and on
    /// PostgreSQL it is refused, before anything is opened, by the one check.
    #[track_caller]
    fn file_only(&self, line: &str) {
        let args = words(line);
        let (file, server) = self.pair(&args, None);
        assert_eq!(file.code, 0, "{args:?} on the file: {}", file.stderr);
        server
            .fails(2)
            .one_error_line()
            .stderr_has(&format!(
                "error: `{}`: works on a SQLite file, not on a PostgreSQL store ({})",
                command_of(&args),
                self.shown
            ))
            .stderr_has("migrate-to sqlite:PATH");
    }
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
    missing_stores(&twins);
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
    let (_, server) = t.pair(&["demo"], None);
    server.fails(1).stderr_has("(`?schema=demo`)");
    // Session arguments resolve alike: an id, a title, `latest`, an id
    // prefix, an ambiguous prefix, nothing.
    for line in [
        "sessions list",
        "sessions list --since 30d --limit 3",
        "sessions list --format csv",
        "sessions list --pinned --children",
        "sessions list --model gpt --min-messages 2",
        "sessions show demo-paris --no-pager",
        "sessions show 'Weather in Paris' --no-pager",
        "sessions show demo-refactor --lineage --no-pager",
        "sessions show nope --no-pager",
        "sessions lineage demo-refactor-2",
        "messages list demo-paris",
        "messages list latest --limit 2",
        "title get demo-paris",
        "title get demo-refactor-s",
        "title get demo-ref",
        "title resolve 'Weather in Paris'",
        "title resolve 'no such title'",
        "title next 'Weather in Paris'",
        "stats",
        "stats --since 30d",
        "prune --older-than-days 90 --dry-run",
        "prune --any-age --dry-run",
    ] {
        t.both_ways(line, Compare::Exact);
    }
    for line in [
        "search parser --by-conversation --sort newest",
        "search parser --session demo-refactor --sort oldest",
        "search 东京 --sort newest",
        "search parser --since 30d --sort newest",
    ] {
        t.both_ways(line, Compare::NoSnippets);
    }
    for line in [
        "search bike",
        "search 东京",
        "search parser --by-conversation",
        "search \"unclosed",
    ] {
        t.both_ways(line, Compare::RankedHits);
    }
    t.same("export --format jsonl");
    t.same("export --format jsonl --since 30d --until 1d");
    for line in [
        "export",
        "export --source telegram",
        "export --session demo-paris",
        "export --format jsonl --session demo-paris",
        "export --format jsonl --source cli",
        "export --since 2d",
        "export --session nope",
        "export --format jsonl --output out.jsonl",
    ] {
        t.same(line);
    }
    t.same("export --format markdown --session demo-paris");
    // Needs a terminal; refused alike before the store is opened.
    t.both_ways("search -i", Compare::Exact);
    // The program's own texts; they open no store.
    t.same("completions bash");
    t.same("man");
    t.same("where");
    // The environment variable names the store as `--database-url` does.
    let vars = [
        ("HERMES_STATE_DATABASE_URL", t.schema.url()),
        ("HERMES_STATE_NOW", NOW),
    ];
    let by_variable = t.env.raw_env(&["sessions", "list"], &vars, None).ok();
    let by_option = t.on(Side::Server, &["sessions", "list"], None).ok();
    assert_eq!(by_variable.stdout, by_option.stdout);
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

/// The writing commands, as text and as `--json`, on the same state.
fn writing(t: &Twins) {
    let tool_call = r#"[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]"#;
    for line in [
        "--read-only title set demo-paris x",
        "sessions pin latest",
        "sessions create --id t1 --source cli",
        "sessions create --id t1 --source cli",
        "--json sessions create --id t2 --source cli --parent t1",
        "sessions create --id t3 --source cli --parent nope",
        "title get t1",
        "--json title get t1",
        "title set t1 Trip",
        "--json title set t2 Trip2",
        "title set t2 Trip",
        "title set t2 ''",
        "title next Trip",
        "messages append t1 --role user --content 'hello there'",
        "--json messages append t1 --role assistant --content hi",
        &format!("messages append t1 --role assistant --tool-calls {tool_call}"),
        "messages append nope --role user --content x",
    ] {
        t.same(line);
    }
    t.same_with(
        &words("messages append t1 --role user"),
        Some("from a pipe"),
        Compare::Exact,
    );
    t.both_ways("messages list t1", Compare::Exact);
    let first = t.same("--json messages list t1").json()[0]["id"].to_string();
    for line in [
        format!("sessions rewind t1 --to {first}"),
        "sessions restore t1".to_owned(),
        format!("--json sessions rewind t1 --to {first}"),
        format!("--json sessions restore t1 --since {first}"),
        "sessions rewind t1 --to 999999".to_owned(),
    ] {
        t.same(&line);
    }
    for line in [
        "sessions end t1 --reason user_exit",
        "sessions end t1 --reason again",
        "--json sessions end t2 --reason compression",
        "sessions reopen t1",
        "--json sessions reopen t2",
        "sessions archive demo-refactor-2",
        "--json sessions archive t1",
        "sessions unarchive demo-refactor-2",
        "--json sessions unarchive t1",
        "sessions pin demo-refactor-2",
        "--json sessions pin t1",
        "sessions unpin demo-refactor-2",
        "--json sessions unpin t1",
        "sessions clear t2 --yes",
        "--json sessions clear t1 --yes",
        "sessions clear t1",
        "sessions delete t2 --yes",
        "--json sessions delete t1 --yes",
        "sessions delete demo-paris nope --yes",
        "sessions create --id x1 --source cli",
        // Several at once, a delegate child going with its parent.
        "sessions delete x1 demo-refactor-2 --yes",
    ] {
        t.same(line);
    }
    transcripts_go_with_their_session(t);

    // An export of the file in each format, imported into both.
    for line in [
        "export --format jsonl --output export.jsonl",
        "export --output export.json",
    ] {
        t.on(Side::File, &words(line), None).ok();
    }
    std::fs::write(t.env.path("notes.txt"), "hello\n").unwrap();
    for line in [
        "import export.json",
        "--json import export.json --overwrite --yes",
        "import export.jsonl",
        "--json import export.jsonl --overwrite --yes",
        "import notes.txt",
        "prune --older-than-days 90 --yes",
        "--json prune --any-age --title-like Dinner --yes",
        "--json prune --any-age --source discord --yes",
        "maintenance auto --no-vacuum --archive-idle-days 30",
        // Skipped now on both: each store keeps its last runs.
        "maintenance auto",
        "--json maintenance auto --no-vacuum",
    ] {
        t.same(line);
    }
    t.both_ways("stats", Compare::Exact);
    t.both_ways("sessions list", Compare::Exact);
}

/// `sessions delete --sessions-dir DIR` removes the session's transcript
/// and nothing else, on both.
fn transcripts_go_with_their_session(t: &Twins) {
    let dir = t.env.path("transcripts");
    let args = words("sessions delete demo-refactor --sessions-dir transcripts --yes");
    let run = |side: Side| {
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["demo-refactor.json", "keep.json"] {
            std::fs::write(dir.join(name), "{}").unwrap();
        }
        let run = t.on(side, &args, None).ok();
        assert!(!dir.join("demo-refactor.json").exists());
        assert!(dir.join("keep.json").exists());
        t.seen(&run, Compare::Exact)
    };
    assert_eq!(run(Side::File), run(Side::Server));
}

/// The file's own maintenance: refused on PostgreSQL with the one message.
fn file_only(t: &Twins) {
    for line in [
        "backup backup.db",
        "vacuum",
        "fts rebuild",
        "fts optimize-storage",
        "fts rebuild-cjk",
        "migrate",
        "migrate --dry-run",
        "schema",
        "query 'SELECT count(*) FROM sessions'",
        "--json schema",
        "--json query 'SELECT 1'",
    ] {
        t.file_only(line);
    }
}

/// `doctor`: each backend checks what it is made of (FTS5 tables and
/// SQLite's integrity check on a file, the schema ledger and catalogs on
/// the server), so the reports differ by design; the verdict does not.
fn doctor(t: &Twins) {
    t.same("--read-only doctor --repair");
    for line in ["doctor", "doctor --repair"] {
        let (file, server) = t.pair(&words(line), None);
        assert_eq!((file.code, server.code), (0, 0), "{line}");
        let json_line = format!("--json {line}");
        let json = words(&json_line);
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

/// A store that is not there is an error on both (exit 1), never made by a
/// command that needs one; each names what is missing in its own terms
/// (a file, a schema without a store).
fn missing_stores(t: &Twins) {
    let args = words("sessions end a --reason x");
    let absent = t.env.path("absent.db");
    t.env.run(&absent, &args).fails(1).stderr_has("no store at");
    assert!(!absent.exists());
    let other = format!("{}x", t.schema.url());
    let on_other = |args: &[&str]| {
        t.env
            .raw(&[&["--database-url", &other], args].concat(), None)
    };
    for args in [&args[..], &["sessions", "list"]] {
        on_other(args)
            .fails(1)
            .stderr_has("holds no hermes-state store");
    }
}

/// `migrate-to`: each side moves to a new store of the other backend; then
/// both read with a note and refuse writes alike.
fn moved(t: &Twins) {
    t.same("sessions create --id kept --source cli");
    let target = PgSchema::new("cli", "both-moved-target").unwrap();
    let target_shown = t
        .env
        .raw(&["--database-url", target.url(), "where"], None)
        .ok()
        .stdout;
    let new_file = format!("sqlite:{}", t.env.path("moved-here.db").display());
    t.covered.borrow_mut().insert("migrate-to".to_owned());
    let moved = |side: Side, to: &str, shown: &str| {
        let run = t.on(side, &["migrate-to", to], None).ok();
        t.normal(&run.stdout.replace(shown, "<target>"))
    };
    assert_eq!(
        moved(Side::File, target.url(), target_shown.trim_end()),
        moved(Side::Server, &new_file, &new_file),
        "migrate-to"
    );
    // Each copy holds what its store held: the same export, but for its time.
    let export = |location: &[&str]| {
        let args = [location, &["export", "--format", "jsonl"]].concat();
        let text = t.env.raw(&args, None).ok().stdout;
        let lines = text.lines().filter(|l| !l.contains("\"exported_at\""));
        lines.collect::<Vec<_>>().join("\n")
    };
    let file = export(&["--db", t.file.to_str().unwrap()]);
    assert_eq!(file, export(&["--database-url", target.url()]));
    let server = export(&["--database-url", t.schema.url()]);
    let back = new_file.strip_prefix("sqlite:").unwrap();
    assert_eq!(server, export(&["--db", back]));
    assert_eq!(t.normal(&file), t.normal(&server));
    // The notes name the store moved to (a schema, a file) and what holds
    // the old copy (this file, this PostgreSQL store): compared up to them.
    // (`--json` prints no notes, on either.)
    let up_to_target = |run: &Run| {
        run.stderr
            .split(" was moved to ")
            .next()
            .unwrap()
            .to_owned()
    };
    for line in ["sessions list", "title get kept", "stats"] {
        let (file, server) = t.pair(&words(line), None);
        assert_eq!(
            (file.code, &file.stdout),
            (server.code, &server.stdout),
            "{line}"
        );
        let file = file.stderr_has("note: this store was moved to postgresql://");
        let server = server.stderr_has("note: this store was moved to sqlite:");
        assert_eq!(up_to_target(&file), up_to_target(&server), "{line}");
    }
    let before = std::fs::read(&t.file).unwrap(); // tidy: not the live database (a test's own copy)
    for line in [
        "title set kept late",
        "sessions create --id late --source cli",
        "messages append kept --role user --content late",
        "doctor --repair",
    ] {
        let (file, server) = t.pair(&words(line), None);
        let file = file.fails(2).stderr_has("--write-moved");
        let server = server.fails(2).stderr_has("--write-moved");
        assert_eq!(up_to_target(&file), up_to_target(&server), "{line}");
    }
    let after = std::fs::read(&t.file).unwrap(); // tidy: not the live database
    assert!(before == after, "a refused write changed the moved file");
    let (file, server) = t.pair(&words("--write-moved title set kept late"), None);
    let (file, server) = (file.ok(), server.ok());
    assert_eq!(file.stdout, server.stdout);
    assert_eq!(up_to_target(&file), up_to_target(&server));
    t.same("--json title get kept");
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
