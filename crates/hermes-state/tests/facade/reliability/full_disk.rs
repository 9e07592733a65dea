//! A real full disk: ENOSPC from a small tmpfs mounted by the test.
//!
//! Needs Linux and the right to mount (root, or CAP_SYS_ADMIN); elsewhere the
//! test prints `skipped: <reason>` to stderr and passes. The file-size-limit
//! test in the parent module covers every machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use hermes_state::rusqlite::{self, ErrorCode};
use hermes_state::{Content, ErrorKind, NewMessage, NewSession, SessionDb};

use super::assert_store_consistent;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

/// The size of the file system; small, so filling it takes a fraction of a second.
const FS_SIZE: &str = "4m";
/// Space taken before the store is created, given back to show writes resume.
/// Generous: until the WAL is next checkpointed and restarted, every append
/// adds its ~25 changed pages (message, counters, three FTS indexes) to it,
/// about 100 KB, more when an FTS segment merge runs.
const FILLER_BYTES: usize = 1536 * 1024;
/// Appends that must succeed once the filler is gone.
const RESUMED_APPENDS: usize = 3;

/// A tmpfs mounted over a folder; unmounted on drop, also when the test fails.
struct TmpfsMount(PathBuf);

impl TmpfsMount {
    fn mount(at: &Path, size: &str) -> Result<TmpfsMount, String> {
        if !cfg!(target_os = "linux") {
            return Err("not Linux".to_owned());
        }
        let status = std::fs::read_to_string("/proc/self/status")
            .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
        let euid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            .ok_or("no Uid line in /proc/self/status")?;
        if euid != "0" {
            return Err(format!("not running as root (euid {euid})"));
        }
        let output = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(at)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "mount -t tmpfs failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(TmpfsMount(at.to_owned()))
    }
}

impl Drop for TmpfsMount {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Still busy (a handle leaked by a failed assertion): detach it.
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Text that varies, so the FTS indexes grow along with the messages.
fn message_text(i: usize) -> String {
    let words: Vec<String> = (0..60)
        .map(|w| format!("w{:x}", (i * 7919 + w * 104_729) % 1_000_003))
        .collect();
    format!("fill {i} {}", words.join(" "))
}

fn stored(db: &SessionDb) -> Vec<(i64, String)> {
    db.get_messages("full")
        .expect("read the messages back")
        .into_iter()
        .map(|m| {
            let text = match m.content {
                Some(Content::Text(text)) => text,
                other => panic!("message {} has text content, not {other:?}", m.id),
            };
            (m.id, text)
        })
        .collect()
}

#[test]
fn a_full_disk_gives_a_typed_error_and_writes_resume_after_space_is_freed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mount = match TmpfsMount::mount(dir.path(), FS_SIZE) {
        Ok(mount) => mount,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return;
        }
    };
    let filler = mount.0.join("filler");
    std::fs::write(&filler, vec![0x5a_u8; FILLER_BYTES]).expect("write the filler file");
    let path = mount.0.join("state.db");
    let db = SessionDb::open(&path).expect("create the store on the tmpfs");
    db.create_session(&NewSession::new("full", "cli"))
        .expect("create");

    // Append until the file system is full.
    let mut acknowledged = Vec::new();
    let error = loop {
        let text = message_text(acknowledged.len());
        match db.append_message(&NewMessage::new("full", "user").content(text.clone())) {
            Ok(id) => acknowledged.push((id, text)),
            Err(error) => break error,
        }
        assert!(
            acknowledged.len() < 10_000,
            "a {FS_SIZE} file system never filled up"
        );
    };
    let code = std::error::Error::source(&error)
        .and_then(|s| s.downcast_ref::<rusqlite::Error>())
        .and_then(rusqlite::Error::sqlite_error_code);
    eprintln!(
        "full disk: {} appends acknowledged, then {:?} ({code:?}): {error}",
        acknowledged.len(),
        error.kind()
    );
    assert_eq!(
        error.kind(),
        ErrorKind::Io,
        "the kind of a full disk: {error}"
    );
    assert_eq!(
        code,
        Some(ErrorCode::DiskFull),
        "SQLite said SQLITE_FULL: {error}"
    );
    assert!(
        acknowledged.len() >= 10,
        "some appends fit before the disk filled: {}",
        acknowledged.len()
    );

    // Still full: the store reads back exactly what was acknowledged, and is sound.
    assert_eq!(
        stored(&db),
        acknowledged,
        "every acknowledged message, intact, and nothing of the failed one"
    );
    let again = db
        .append_message(&NewMessage::new("full", "user").content(message_text(1_000_000)))
        .expect_err("the disk is still full");
    assert_eq!(again.kind(), ErrorKind::Io, "{again}");
    assert_eq!(stored(&db), acknowledged, "a second failure wrote nothing");
    let integrity: String = db
        .read(|conn| {
            Ok(conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .expect("integrity_check runs on a full disk"))
        })
        .expect("read");
    assert_eq!(integrity, "ok", "integrity while the disk is full");

    // Free the space the test took; the same handle writes again.
    std::fs::remove_file(&filler).expect("remove the filler file");
    for i in 0..RESUMED_APPENDS {
        let text = format!("after the disk was freed {i}");
        let id = db
            .append_message(&NewMessage::new("full", "user").content(text.clone()))
            .expect("appends succeed once space is free");
        acknowledged.push((id, text));
    }
    assert_eq!(stored(&db), acknowledged);
    drop(db);
    assert_store_consistent(&path);
    let reopened = SessionDb::open(&path).expect("reopen");
    assert_eq!(stored(&reopened), acknowledged, "after a reopen");
    let row = reopened
        .get_session("full")
        .expect("read")
        .expect("session");
    assert_eq!(row.message_count, Some(acknowledged.len() as i64));
    drop(reopened);
    drop(mount);
}
