//! `search -i` used the way a person uses it: the real binary in a real
//! terminal (a detached tmux session, 120×40), keys sent one at a time, the
//! screen read back with `capture-pane` until what is expected shows (polled
//! with a deadline, never a fixed wait). After the program leaves, the shell
//! around it prints its exit status and whether the terminal's settings are
//! the ones it had before (`stty -g`), then stays, so the last screen can be
//! read. A machine without tmux skips these tests, saying so on stderr; CI
//! installs tmux (`.ci/run`), so there they always run.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::Env;

/// How long a screen may take to show what is expected (a slow CI machine
/// builds nothing here, but may be busy).
const DEADLINE: Duration = Duration::from_secs(20);

/// The line the shell prints after a clean exit with the terminal restored.
const CLEAN_EXIT: &str = "exit 0, terminal restored";

/// The line the shell prints after Ctrl-C (exit 130) with the terminal restored.
const INTERRUPTED_EXIT: &str = "exit 130, terminal restored";

/// Why tmux cannot be used, or `None` when it can.
fn tmux_missing() -> Option<String> {
    match Command::new("tmux").arg("-V").output() {
        Ok(output) if output.status.success() => None,
        Ok(output) => Some(format!("`tmux -V` exited with {}", output.status)),
        Err(_) => Some("tmux not installed".to_owned()),
    }
}

/// A tmux server of its own (a unique socket), killed when dropped, with
/// one session running `hermes-state search -i`.
struct Tmux {
    socket: String,
    /// The socket's file, removed with the server (tmux leaves it behind).
    socket_path: Option<std::path::PathBuf>,
}

impl Tmux {
    /// Starts `hermes-state --db DB search -i ARGS…` in a 120×40 pane.
    fn start(env: &Env, db: &Path, args: &[&str]) -> Tmux {
        Tmux::start_on(env, &["--db", db.to_str().expect("utf-8 path")], args)
    }

    /// Starts `hermes-state STORE… search -i ARGS…` (STORE: `--db PATH` or
    /// `--database-url URL`) in a 120×40 pane.
    fn start_on(env: &Env, store: &[&str], args: &[&str]) -> Tmux {
        Tmux::start_with(env, store, args, false)
    }

    /// [`Tmux::start`] inside `$(…)`: stdout captured by the shell, which
    /// prints what it got as `CHOICE[…]` once the search ends.
    fn start_captured(env: &Env, db: &Path, args: &[&str]) -> Tmux {
        let store = ["--db", db.to_str().expect("utf-8 path")];
        Tmux::start_with(env, &store, args, true)
    }

    fn start_with(env: &Env, store: &[&str], args: &[&str], captured: bool) -> Tmux {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "hermes-state-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut tmux = Tmux {
            socket,
            socket_path: None,
        };
        let quoted = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
        let mut program = vec![quoted(env!("CARGO_BIN_EXE_hermes-state"))];
        program.extend(store.iter().map(|a| quoted(a)));
        program.extend(["search".to_owned(), "-i".to_owned()]);
        program.extend(args.iter().map(|a| quoted(a)));
        let home = quoted(env.dir.path().to_str().expect("utf-8 path"));
        let program = program.join(" ");
        let run = if captured {
            format!("out=$(HERMES_HOME={home} {program}); status=$?; echo \"CHOICE[$out]\"")
        } else {
            format!("HERMES_HOME={home} {program}; status=$?")
        };
        let script = format!(
            "saved=$(stty -g); {run}; \
             if [ \"$(stty -g)\" = \"$saved\" ]; then tty=restored; else tty=changed; fi; \
             echo \"exit $status, terminal $tty\"; exec cat"
        );
        tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "sh",
            "-c",
            &script,
        ]);
        let path = tmux.run(&["display-message", "-p", "#{socket_path}"]);
        tmux.socket_path = Some(path.trim().into());
        // tmux takes OSC 52 from the program into a paste buffer.
        tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
        tmux
    }

    /// Runs a tmux command on this server; its stdout.
    #[track_caller]
    fn run(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux");
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Types `text` one key at a time, as a person does.
    fn type_text(&self, text: &str) {
        for c in text.chars() {
            self.run(&["send-keys", "-l", &c.to_string()]);
        }
    }

    /// Types a query into the list and waits until the screen shows it
    /// with its final answer: the prompt shows the query at once, the
    /// status line says `searching…` until an answer to that query comes,
    /// and marks a partial answer, so from then on the screen shows the
    /// final query's exact answer, not an earlier one's nor a partial one.
    #[track_caller]
    fn type_query(&self, text: &str) -> String {
        self.type_text(text);
        let prompt = format!("search › {text}\n");
        self.wait_for(&format!("{prompt:?} answered"), |screen| {
            screen.starts_with(&prompt) && Tmux::is_final(screen)
        })
    }

    /// Whether the status line gives a final answer: not `searching…`, not
    /// a partial answer.
    fn is_final(screen: &str) -> bool {
        !screen
            .lines()
            .any(|l| l.starts_with("searching… · ") || l.contains("(partial — still searching) · "))
    }

    /// Presses named keys (`Down`, `Enter`, `Escape`, `Tab`, `C-y`).
    fn press(&self, key: &str) {
        self.run(&["send-keys", key]);
    }

    /// The pane's text now.
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    /// Polls the screen until `shown` holds; the screen then. Fails with the
    /// last screen after [`DEADLINE`].
    #[track_caller]
    fn wait_for(&self, what: &str, shown: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if shown(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "waited {DEADLINE:?} for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Polls the screen until it contains `text`.
    #[track_caller]
    fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |screen| screen.contains(text))
    }

    /// The pane's last line that starts with `prefix`.
    fn line<'a>(screen: &'a str, prefix: &str) -> Option<&'a str> {
        screen.lines().rev().find(|l| l.starts_with(prefix))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Skips (saying why) where tmux is missing.
macro_rules! require_tmux {
    () => {
        if let Some(reason) = tmux_missing() {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("skipped: {reason}");
            }
            return;
        }
    };
}

#[test]
fn a_person_types_a_query_reads_the_conversation_and_resumes_it_in_tmux() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    let tmux = Tmux::start(&env, &db, &[]);
    tmux.wait_for_text("type a query · source: any · role: any · since: any");

    // Live results: each key searches again.
    let screen = tmux.type_query("bike");
    assert!(screen.contains("\n2 results · source: any"), "{screen}");
    let first = Tmux::line(&screen, "▶ ").expect("a selected row");
    assert!(
        first.starts_with("▶ demo-paris") && first.contains(" user "),
        "{screen}"
    );

    // Down selects the second hit, the assistant's answer (#4).
    tmux.press("Down");
    let screen = tmux.wait_for("the second hit selected", |s| {
        Tmux::line(s, "▶ ").is_some_and(|l| l.contains(" assistant "))
    });
    assert!(
        Tmux::line(&screen, "  demo-paris").is_some_and(|l| l.contains(" user ")),
        "{screen}"
    );

    // Enter reads the conversation around it: the hit marked, and the
    // messages before (the weather tool's result) and after it.
    tmux.press("Enter");
    let neighbours = [
        "  ── tool weather  #3",
        "\"conditions\": \"clear sky\"",
        "  ── user  #5",
        "  Great, thanks!",
    ];
    // Waits for the whole view: a capture may land while it is being drawn.
    let screen = tmux.wait_for("the conversation around the hit", |s| {
        s.contains("▌ ── assistant  #4")
            && neighbours.iter().all(|n| s.contains(n))
            && s.contains("▌ It's 18°C in Paris")
            && s.contains("session demo-paris · rows ")
    });
    for neighbour in neighbours {
        assert!(screen.contains(neighbour), "no {neighbour:?}:\n{screen}");
    }
    assert!(screen.contains("▌ It's 18°C in Paris"), "{screen}");
    assert!(screen.contains("session demo-paris · rows "), "{screen}");

    // Esc goes back to the list as it was.
    tmux.press("Escape");
    let screen = tmux.wait_for("the list as it was", |s| {
        s.contains("2 results · source: any")
            && Tmux::line(s, "▶ ").is_some_and(|l| l.contains(" assistant "))
    });
    assert!(
        Tmux::line(&screen, "▶ ").is_some_and(|l| l.contains(" assistant ")),
        "{screen}"
    );

    // Tab leaves and prints the command that resumes the session, on the
    // normal screen, with the terminal as it was.
    tmux.press("Tab");
    let screen = tmux.wait_for_text(CLEAN_EXIT);
    assert!(
        screen.starts_with(&format!("hermes --resume demo-paris\n{CLEAN_EXIT}\n")),
        "{screen}"
    );
    assert_eq!(
        tmux.run(&["display-message", "-p", "#{alternate_on}"])
            .trim(),
        "0"
    );
    assert_eq!(
        tmux.run(&["display-message", "-p", "#{cursor_flag}"])
            .trim(),
        "1"
    );
}

/// Inside `$(…)`, as with fzf and atuin: the search is drawn on the
/// terminal although stdout is captured, and the choice reaches the shell
/// on stdout; the terminal is given back as it was.
#[test]
fn search_i_inside_command_substitution_draws_on_the_terminal_and_prints_the_choice() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    let tmux = Tmux::start_captured(&env, &db, &[]);
    tmux.wait_for_text("type a query · source: any · role: any · since: any");
    let screen = tmux.type_query("bike");
    assert!(screen.contains("\n2 results · source: any"), "{screen}");
    tmux.press("Tab");
    let screen = tmux.wait_for_text(CLEAN_EXIT);
    assert!(
        screen.starts_with(&format!(
            "CHOICE[hermes --resume demo-paris]\n{CLEAN_EXIT}\n"
        )),
        "{screen}"
    );
}

/// The same screen on a PostgreSQL store (`--database-url`): live results,
/// the conversation around a hit, and the resume line.
#[test]
fn search_i_works_on_a_postgresql_store_in_tmux() {
    require_tmux!();
    let Some(schema) = hermes_state_testkit::PgSchema::new("cli", "search -i on PostgreSQL") else {
        return;
    };
    let env = Env::new();
    let db = env.demo("demo.db");
    env.run(&db, &["migrate-to", schema.url()]).ok();
    let tmux = Tmux::start_on(&env, &["--database-url", schema.url()], &[]);
    tmux.wait_for_text("type a query · source: any · role: any · since: any");
    let screen = tmux.type_query("bike");
    assert!(screen.contains("\n2 results · source: any"), "{screen}");
    tmux.press("Enter");
    let screen = tmux.wait_for("the conversation around the hit", |s| {
        s.contains("▌ ── user  #1") && s.contains("session demo-paris · rows ")
    });
    assert!(screen.contains("  ── tool weather  #3"), "{screen}");
    tmux.press("Escape");
    tmux.wait_for_text("2 results · source: any");
    tmux.press("Tab");
    let screen = tmux.wait_for_text(CLEAN_EXIT);
    assert!(
        screen.starts_with(&format!("hermes --resume demo-paris\n{CLEAN_EXIT}\n")),
        "{screen}"
    );
}

#[test]
fn filters_cycle_by_key_and_show_in_the_status_line_in_tmux() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    // Started on a query and a role from the flags.
    let tmux = Tmux::start(&env, &db, &["bike", "--role", "assistant"]);
    tmux.wait_for_text("1 result · source: any · role: assistant · since: any");

    tmux.press("C-r"); // role: tool
    tmux.wait_for_text("No message matches.");
    tmux.press("C-r"); // role: system
    tmux.press("C-r"); // role: any
    tmux.wait_for_text("2 results · source: any · role: any · since: any");

    // Sources of the store, in order: cli comes first.
    tmux.press("C-s");
    tmux.wait_for_text("2 results · source: cli · role: any");
    tmux.press("C-s"); // cron: no bike there
    tmux.wait_for_text("0 results · source: cron · role: any");

    tmux.press("C-s");
    tmux.press("C-s");
    tmux.press("C-s"); // discord, telegram, back to any
    tmux.wait_for_text("2 results · source: any · role: any · since: any");
    tmux.press("C-t"); // the demo's messages are from the last few days
    tmux.wait_for_text("0 results · source: any · role: any · since: 1h");
    tmux.press("C-t");
    tmux.press("C-t");
    tmux.wait_for_text("2 results · source: any · role: any · since: 7d");

    // Ctrl-C quits from anywhere, printing nothing, with the status of an
    // interrupted program (130), so `search -i && …` stops there.
    tmux.press("C-c");
    let screen = tmux.wait_for_text(INTERRUPTED_EXIT);
    assert!(
        screen.starts_with(&format!("{INTERRUPTED_EXIT}\n")),
        "{screen}"
    );
}

/// Every letter, small and capital, is text: `u` and `w` once cleared the
/// query and deleted a word, so `unwound` searched `nd`.
#[test]
fn every_letter_typed_is_part_of_the_query_in_tmux() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    let pangram = "Sphinx of black QUARTZ judge my vow with unwound queues";
    let letters: std::collections::BTreeSet<char> = pangram
        .chars()
        .filter(char::is_ascii_alphabetic)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    assert_eq!(letters.len(), 26, "the query uses every letter");
    env.run(
        &db,
        &[
            "messages",
            "append",
            "demo-dinner",
            "--role",
            "user",
            "--content",
            pangram,
        ],
    )
    .ok();
    let tmux = Tmux::start(&env, &db, &[]);
    tmux.wait_for_text("type a query");

    let screen = tmux.type_query(pangram);
    assert!(screen.contains("\n1 result · source: any"), "{screen}");
    assert!(
        Tmux::line(&screen, "▶ ").is_some_and(|l| l.starts_with("▶ demo-dinner")),
        "{screen}"
    );
    // The editing keys are Ctrl-W and Ctrl-U, nothing else.
    // (The pane's capture drops the space left at the end of the prompt.)
    tmux.press("C-w");
    let screen = tmux.wait_for("the last word deleted", |s| {
        s.starts_with("search › Sphinx of black QUARTZ judge my vow with unwound\n")
            && s.contains("\n1 result · source: any")
    });
    assert!(screen.contains("\n1 result · source: any"), "{screen}");
    tmux.press("C-u");
    tmux.type_query("uwu");
    tmux.wait_for_text("0 results · source: any");

    tmux.press("Escape");
    let screen = tmux.wait_for_text(CLEAN_EXIT);
    assert!(screen.starts_with(&format!("{CLEAN_EXIT}\n")), "{screen}");
}

#[test]
fn an_unparsable_query_shows_its_problem_and_ctrl_y_copies_the_id_in_tmux() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    let tmux = Tmux::start(&env, &db, &[]);
    tmux.wait_for_text("type a query");

    let screen = tmux.type_query("50%");
    assert!(
        screen.contains("query cannot be parsed: fts5: syntax error near \"%\""),
        "{screen}"
    );
    assert!(!screen.contains("No message matches."), "{screen}");
    let status = Tmux::line(&screen, "query cannot be parsed").expect("a status line");
    assert!(status.contains("· source: any · role: any"), "{screen}");

    // Ctrl-U clears the query; the copy key puts the selected session's id
    // on the clipboard through OSC 52, which tmux keeps as a paste buffer.
    tmux.press("C-u");
    let screen = tmux.type_query("chickpeas");
    assert!(screen.contains("\n2 results · source: any"), "{screen}");
    tmux.press("C-y");
    tmux.wait_for_text("copied demo-dinner (OSC 52)");
    assert_eq!(tmux.run(&["show-buffer"]), "demo-dinner");

    tmux.press("Escape");
    let screen = tmux.wait_for_text(CLEAN_EXIT);
    assert!(screen.starts_with(&format!("{CLEAN_EXIT}\n")), "{screen}");
}

#[test]
fn a_hit_in_a_compressed_session_resumes_its_continuation_in_tmux() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    let tmux = Tmux::start(&env, &db, &[]);
    tmux.wait_for_text("type a query");
    // The first segment of the demo's compressed conversation.
    let screen = tmux.type_query("900-line");
    assert!(
        Tmux::line(&screen, "▶ ").is_some_and(|l| l.starts_with("▶ demo-refactor  ")),
        "{screen}"
    );
    // Its conversation view is the segment the hit is in ...
    tmux.press("Enter");
    let screen = tmux.wait_for("the segment's conversation", |s| {
        s.contains("▌ ── user  #7")
            && s.contains("Session demo-refactor  “Refactor the config parser”")
    });
    assert!(
        screen.contains("Session demo-refactor  “Refactor the config parser”"),
        "{screen}"
    );
    // ... but resuming it means resuming where it went on: the continuation
    // compression made (not the branch, not the delegate).
    tmux.press("Tab");
    let screen = tmux.wait_for_text(CLEAN_EXIT);
    assert!(
        screen.starts_with(&format!("hermes --resume demo-refactor-2\n{CLEAN_EXIT}\n")),
        "{screen}"
    );
}

/// A lone CJK character takes the LIKE route (a scan of every message),
/// whose answer comes after a partial one on a big store: whatever came
/// first, the final screen lists the hits `search QUERY --json` gives, in
/// its order.
#[test]
fn the_final_screen_lists_the_hits_of_search_json_in_tmux() {
    require_tmux!();
    let env = Env::new();
    let db = env.demo("demo.db");
    for i in 0..25 {
        env.run(
            &db,
            &[
                "messages",
                "append",
                if i % 2 == 0 {
                    "demo-dinner"
                } else {
                    "demo-paris"
                },
                "--role",
                "user",
                "--content",
                &format!("记录 数 item{i:02}"),
            ],
        )
        .ok();
    }
    let expected: Vec<String> = env
        .json(&db, &["search", "数"])
        .as_array()
        .expect("hits")
        .iter()
        .map(|hit| {
            let snippet = hit["snippet"].as_str().expect("snippet");
            let at = snippet.find("item").expect("an item number");
            snippet[at..at + 6].to_owned()
        })
        .collect();
    assert_eq!(expected.len(), 20, "{expected:?}");
    let tmux = Tmux::start(&env, &db, &[]);
    tmux.wait_for_text("type a query");
    let screen = tmux.type_query("数");
    assert!(screen.contains("\n20 results · source: any"), "{screen}");
    let shown: Vec<String> = screen
        .lines()
        .filter_map(|line| line.find("item").map(|at| line[at..at + 6].to_owned()))
        .collect();
    assert_eq!(shown, expected, "{screen}");
    tmux.press("Escape");
    tmux.wait_for_text(CLEAN_EXIT);
}

#[test]
fn search_i_refuses_to_run_without_a_terminal() {
    let env = Env::new();
    let db = env.demo("demo.db");
    env.run(&db, &["search", "-i", "bike"])
        .fails(2)
        .one_error_line()
        .stderr_has("search -i is interactive, but stdin is not a terminal")
        .stderr_has("drop -i");
    env.run(&db, &["--json", "search", "-i"])
        .fails(2)
        .one_error_line()
        .stderr_has("search -i draws a screen; --json does not apply");
    // Without -i the query is still required.
    let run = env.run(&db, &["search"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("<QUERY>"), "{}", run.stderr);
}
