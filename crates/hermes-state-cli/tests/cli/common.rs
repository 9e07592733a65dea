//! The harness: the real binary run against a scratch `HERMES_HOME`, and
//! its output checked.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }

    /// Fails with `code` and exactly one line on stderr (clap's usage errors aside).
    #[track_caller]
    pub fn fails(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.starts_with("error: "),
            "stderr: {}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn one_error_line(self) -> Run {
        assert_eq!(
            self.stderr.lines().count(),
            1,
            "expected one line on stderr, got: {}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.stdout))
    }

    #[track_caller]
    pub fn stdout_has(self, needle: &str) -> Run {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}: {}",
            self.stdout
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(self, needle: &str) -> Run {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}: {}",
            self.stderr
        );
        self
    }
}

/// A scratch folder used as `HERMES_HOME`, so the real `~/.hermes` is never touched.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A store filled by `demo`.
    pub fn demo(&self, name: &str) -> PathBuf {
        let db = self.path(name);
        self.run(&db, &["demo"]).ok();
        db
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes-state"));
        // Human times in UTC, tables 100 columns wide, the real clock: the
        // same output on every machine (tests of these set them).
        cmd.env("HERMES_HOME", self.dir.path())
            .env("TZ", "UTC")
            .env_remove("COLUMNS")
            .env_remove("HERMES_STATE_NOW")
            // A store URL in the caller's environment would redirect every test.
            .env_remove("HERMES_STATE_DATABASE_URL")
            .env_remove("NO_COLOR")
            .env_remove("RUST_BACKTRACE")
            .current_dir(self.dir.path());
        cmd
    }

    pub fn raw(&self, args: &[&str], stdin: Option<&str>) -> Run {
        self.raw_env(args, &[], stdin)
    }

    /// `raw` with extra environment variables.
    pub fn raw_env(&self, args: &[&str], vars: &[(&str, &str)], stdin: Option<&str>) -> Run {
        let mut cmd = self.command();
        cmd.args(args);
        for (name, value) in vars {
            cmd.env(name, value);
        }
        if let Some(input) = stdin {
            cmd.write_stdin(input.to_owned());
        }
        let output = cmd.output().expect("run hermes-state");
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
            assert!(
                !run.stderr.contains(bad),
                "stderr of {args:?} shows a panic: {}",
                run.stderr
            );
        }
        // Piped output never carries ANSI styles or progress bars.
        assert!(
            !run.stdout.contains('\x1b') && !run.stderr.contains('\x1b'),
            "escape codes in piped output of {args:?}"
        );
        run
    }

    /// `run` with extra environment variables.
    pub fn run_env(&self, db: &Path, vars: &[(&str, &str)], args: &[&str]) -> Run {
        let mut cmd = self.command();
        cmd.arg("--db").arg(db).args(args);
        for (name, value) in vars {
            cmd.env(name, value);
        }
        let output = cmd.output().expect("run hermes-state");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn run(&self, db: &Path, args: &[&str]) -> Run {
        self.run_stdin(db, args, None)
    }

    pub fn run_stdin(&self, db: &Path, args: &[&str], stdin: Option<&str>) -> Run {
        let db = db.to_str().expect("utf-8 path");
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        self.raw(&all, stdin)
    }

    pub fn json(&self, db: &Path, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(db, &all).ok().json()
    }
}

pub fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|item| item["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub fn keys(object: &Value) -> Vec<&str> {
    object
        .as_object()
        .expect("a JSON object")
        .keys()
        .map(String::as_str)
        .collect()
}
