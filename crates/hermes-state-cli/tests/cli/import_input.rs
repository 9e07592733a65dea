//! What `import` accepts: a regular file or stdin (`-`), read with bounded
//! memory. `import /dev/zero` used to read one endless "line" until the
//! allocation failed and the process aborted; a device, a FIFO or a
//! directory is now refused with what it is, a stream that is not JSON at
//! its first byte, and a line longer than the library's limit (64 MiB) is
//! refused naming the line. Nothing is created or written in any case.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::Env;

#[cfg(unix)]
#[test]
fn devices_fifos_and_folders_are_refused_with_what_they_are() {
    let env = Env::new();
    let db = env.path("i.db");
    let fifo = env.path("pipe");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    for (input, what) in [
        (
            "/dev/zero".to_owned(),
            "is a character device, not a regular file",
        ),
        (
            "/dev/null".to_owned(),
            "is a character device, not a regular file",
        ),
        (
            fifo.display().to_string(),
            "is a named pipe (FIFO), not a regular file",
        ),
        (
            env.dir.path().display().to_string(),
            "is a directory, not a regular file",
        ),
    ] {
        // A FIFO without a writer would block an open: the refusal comes first.
        env.run(&db, &["import", &input])
            .fails(1)
            .one_error_line()
            .stderr_has(what);
        assert!(!db.exists(), "{input}: a store was created");
    }
}

/// stdin that is not JSON at its first byte (`/dev/zero`) is refused at
/// once, not read to its end.
#[cfg(unix)]
#[test]
fn an_endless_stdin_is_refused_at_its_first_byte() {
    let env = Env::new();
    let db = env.path("i.db");
    let zero = std::fs::File::open("/dev/zero").expect("open /dev/zero");
    let output = Command::new(env!("CARGO_BIN_EXE_hermes-state"))
        .env("HERMES_HOME", env.dir.path())
        .env_remove("HERMES_STATE_DATABASE_URL")
        .arg("--db")
        .arg(&db)
        .args(["import", "-"])
        .stdin(Stdio::from(zero))
        .output()
        .expect("run hermes-state");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is not a hermes-state export: it is not JSON (it starts with byte 0x00)"),
        "{stderr}"
    );
    assert!(!db.exists());
}

/// A JSONL export whose second line is longer than 64 MiB: refused naming
/// the line, through the library's bounded reader, with the store as it was.
#[test]
fn a_line_longer_than_64_mib_is_refused_naming_it() {
    let env = Env::new();
    let db = env.demo("i.db");
    let path = env.path("long.jsonl");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        file.write_all(
            b"{\"format\":\"hermes-state-export\",\"version\":1,\"schema_version\":23,\"exported_at\":1.0}\n",
        )
        .expect("write the header");
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..65 {
            file.write_all(&chunk).expect("write the long line");
        }
        file.write_all(b"\n").expect("end the line");
    }
    let before = env.json(&db, &["stats"]);
    env.run(&db, &["import", &path.display().to_string()])
        .fails(1)
        .one_error_line()
        .stderr_has("export line 2: longer than 64 MiB");
    assert_eq!(env.json(&db, &["stats"]), before);
}
