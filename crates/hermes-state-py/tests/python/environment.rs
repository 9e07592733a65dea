//! One virtual environment with this package's wheel installed, shared by
//! the tests of this binary.
//!
//! The environment lives under cargo's temporary folder for integration
//! tests (`target/tmp`), so later runs reuse it: it is made again only
//! when the pinned tools change. The wheel is built again on every run
//! (cargo's incremental build makes that quick) and reinstalled.
//!
//! The wheel is a debug build: a change of the library then costs an
//! incremental debug build, and the suites spend their time waiting on
//! locks and processes, not on the CPU (docs/PYTHON.md, "Tests"). The
//! build has its own cargo target folder: the `cargo test` that runs this
//! holds the lock of the workspace's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::process::{run, venv_bin, without_cargo_test_variables};

/// The tools the tests install, pinned.
pub const PINNED_TOOLS: [&str; 2] = ["maturin==1.16.0", "pytest==9.2.0"];

/// A ready environment.
#[derive(Debug)]
pub struct Environment {
    /// The environment's `python`.
    pub python: PathBuf,
    /// A folder for the tests' own scratch files.
    pub scratch: PathBuf,
}

/// The environment, prepared once per test binary; `Err` is the reason
/// the Python tests are skipped (no `python3`, or no `venv` module).
pub fn prepared() -> Result<&'static Environment, &'static str> {
    static ENVIRONMENT: OnceLock<Result<Environment, String>> = OnceLock::new();
    ENVIRONMENT
        .get_or_init(prepare)
        .as_ref()
        .map_err(String::as_str)
}

/// The crate's folder (its `Cargo.toml`, `tests/`).
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

impl Environment {
    /// `python -m pytest` of the environment, run in `workdir` (never the
    /// crate's folder, so `import hermes_state_rs` is the installed wheel),
    /// quiet, without a cache folder or the user's options, and without a
    /// `HERMES_CJK_FTS` of the caller's.
    pub fn pytest(&self, workdir: &Path) -> Command {
        let mut command = Command::new(&self.python);
        command
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",
            ])
            .current_dir(workdir)
            .env_remove("HERMES_CJK_FTS");
        command
    }
}

fn prepare() -> Result<Environment, String> {
    let python3 = std::env::var("HERMES_STATE_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    match Command::new(&python3).arg("--version").output() {
        Ok(output) if output.status.success() => {}
        _ => return Err(format!("{python3} was not found")),
    }
    let probe = Command::new(&python3)
        .args(["-c", "import venv, ensurepip"])
        .output()
        .map_err(|error| format!("{python3} could not run: {error}"))?;
    if !probe.status.success() {
        return Err(format!(
            "{python3} has no venv module (on Debian: apt-get install python3-venv)"
        ));
    }
    run(
        Command::new(&python3).args([
            "-c",
            "import sys; assert sys.version_info >= (3, 11), 'the wheel needs Python 3.11 or newer'",
        ]),
        "checking the Python version",
    );

    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hermes-state-py");
    let venv = root.join("venv");
    let marker = venv.join("hermes-state-pins.txt");
    let pins = PINNED_TOOLS.join(" ");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(pins.as_str()) {
        let _ = std::fs::remove_dir_all(&venv);
        run(
            Command::new(&python3).arg("-m").arg("venv").arg(&venv),
            "creating the virtual environment",
        );
        run(
            Command::new(venv_bin(&venv, "python"))
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .args(PINNED_TOOLS),
            "installing the pinned tools from PyPI",
        );
        std::fs::write(&marker, &pins).expect("the pins marker is written");
    }

    let wheels = root.join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    let manifest = crate_dir().join("Cargo.toml");
    run(
        without_cargo_test_variables(&mut Command::new(venv_bin(&venv, "maturin")))
            .arg("build")
            .arg("--locked")
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--interpreter")
            .arg(venv_bin(&venv, "python"))
            .arg("--out")
            .arg(&wheels)
            .env("CARGO_TARGET_DIR", root.join("target")),
        "building the wheel (maturin build)",
    );
    let wheel = std::fs::read_dir(&wheels)
        .expect("maturin made its output folder")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .expect("maturin built a wheel");
    run(
        Command::new(venv_bin(&venv, "python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(["--force-reinstall", "--no-deps"])
            .arg(&wheel),
        "installing the wheel",
    );

    let scratch = root.join("scratch");
    std::fs::create_dir_all(&scratch).expect("the scratch folder is made");
    Ok(Environment {
        python: venv_bin(&venv, "python"),
        scratch,
    })
}
