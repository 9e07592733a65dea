//! Pruning old sessions (`api.md` §11.3) through the seam: the same
//! selection, the same deletions, the same transcripts removed.

use hermes_state_core::prune::PruneFilters;
use hermes_state_core::prune::PruneOptions;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use hermes_state_types::TokenUpdate;

use super::Backend;

fn options(filters: PruneFilters) -> PruneOptions {
    PruneOptions {
        older_than_days: None,
        filters,
        dry_run: true,
        ..PruneOptions::default()
    }
}

pub fn prune_selects_deletes_and_orphans_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let mut a = NewSession::new("old-a", "cli");
    a.cwd = Some("/work/proj/sub".into());
    s.create_session(&a).unwrap();
    s.set_session_title("old-a", Some("Docker Fix")).unwrap();
    s.update_token_counts(
        "old-a",
        &TokenUpdate {
            input_tokens: 10,
            model: Some("GPT-4o".into()),
            api_call_count: 1,
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    s.append_message(&NewMessage::new("old-a", "user").content("hello"))
        .unwrap();
    s.create_session(&NewSession::new("old-b", "telegram"))
        .unwrap();
    s.set_session_title("old-b", Some("École notes")).unwrap();
    let mut kid = NewSession::new("kid", "cli");
    kid.parent_session_id = Some("old-a".into());
    s.create_session(&kid).unwrap();
    s.create_session(&NewSession::new("live", "cli")).unwrap();
    s.end_session("old-a", "user_exit").unwrap();
    s.end_session("old-b", "user_exit").unwrap();

    let selected =
        |filters: PruneFilters| -> Vec<String> { s.prune_sessions(&options(filters)).unwrap().ids };
    assert_eq!(
        selected(PruneFilters::default()),
        ["old-a", "old-b"],
        "{n}: ended only, oldest first"
    );
    let like = |f: fn(&mut PruneFilters, String), v: &str| {
        let mut filters = PruneFilters::default();
        f(&mut filters, v.to_owned());
        selected(filters)
    };
    assert_eq!(
        like(|f, v| f.title_like = Some(v), "docker"),
        ["old-a"],
        "{n}: ASCII case folded"
    );
    assert_eq!(
        like(|f, v| f.title_like = Some(v), "DOCKER%X"),
        ["old-a"],
        "{n}: % is a wildcard, as in the original's LIKE"
    );

    assert!(
        like(|f, v| f.title_like = Some(v), "école").is_empty(),
        "{n}: no folding beyond ASCII"
    );
    assert_eq!(
        like(|f, v| f.title_like = Some(v), "cole"),
        ["old-b"],
        "{n}"
    );
    assert_eq!(like(|f, v| f.model_like = Some(v), "gpt"), ["old-a"], "{n}");
    assert_eq!(
        like(|f, v| f.cwd_prefix = Some(v), "/WORK/proj/"),
        ["old-a"],
        "{n}: a folder prefix, ASCII case folded"
    );
    assert!(
        like(|f, v| f.cwd_prefix = Some(v), "/work/pro").is_empty(),
        "{n}: not a folder prefix"
    );
    assert_eq!(
        s.prune_sessions(&PruneOptions {
            source: Some("telegram".into()),
            ..options(PruneFilters::default())
        })
        .unwrap()
        .ids,
        ["old-b"],
        "{n}"
    );
    assert_eq!(
        selected(PruneFilters {
            min_tokens: Some(5),
            ..PruneFilters::default()
        }),
        ["old-a"],
        "{n}"
    );
    assert_eq!(
        selected(PruneFilters {
            archived: Some(false),
            max_cost: Some(0.0),
            ..PruneFilters::default()
        }),
        ["old-a", "old-b"],
        "{n}"
    );
    assert!(
        selected(PruneFilters {
            started_after: Some(1e12),
            ..PruneFilters::default()
        })
        .is_empty(),
        "{n}"
    );
    // The default age bound (90 days) keeps today's sessions.
    assert!(
        s.prune_sessions(&PruneOptions {
            dry_run: true,
            ..PruneOptions::default()
        })
        .unwrap()
        .ids
        .is_empty(),
        "{n}"
    );
    let error = s
        .prune_sessions(&PruneOptions {
            older_than_days: Some(f64::NAN),
            ..PruneOptions::default()
        })
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}");
    assert!(
        s.get_session("old-a").unwrap().is_some(),
        "{n}: dry runs write nothing"
    );

    let dir = tempfile::tempdir().unwrap();
    for file in [
        "old-a.json",
        "old-a.jsonl",
        "request_dump_old-a_1.json",
        "request_dump_old-a_2.json",
        "request_dump_old-ab_1.json",
        "old-a.txt",
        "old-b.json",
        "live.json",
        "keep.json",
    ] {
        std::fs::write(dir.path().join(file), "{}").unwrap();
    }
    let left = || {
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        left
    };
    // A dry run leaves the transcripts.
    let dry = PruneOptions {
        sessions_dir: Some(dir.path().to_owned()),
        ..options(PruneFilters::default())
    };
    assert_eq!(s.prune_sessions(&dry).unwrap().count, 2, "{n}");
    assert_eq!(left().len(), 9, "{n}");
    let report = s
        .prune_sessions(&PruneOptions {
            dry_run: false,
            sessions_dir: Some(dir.path().to_owned()),
            ..options(PruneFilters {
                title_like: Some("docker".into()),
                ..PruneFilters::default()
            })
        })
        .unwrap();
    assert_eq!(
        (report.count, report.ids.as_slice()),
        (1, ["old-a".to_owned()].as_slice()),
        "{n}"
    );
    assert!(s.get_session("old-a").unwrap().is_none(), "{n}");
    assert_eq!(s.message_count(Some("old-a")).unwrap(), 0, "{n}");
    assert_eq!(
        s.get_session("kid").unwrap().unwrap().parent_session_id,
        None,
        "{n}: children are orphaned, not deleted"
    );
    assert!(
        s.usage_by_model_and_task().unwrap().is_empty(),
        "{n}: usage rows go with their session"
    );
    assert_eq!(
        left(),
        [
            "keep.json",
            "live.json",
            "old-a.txt",
            "old-b.json",
            "request_dump_old-ab_1.json"
        ],
        "{n}"
    );
    assert!(s.get_session("old-b").unwrap().is_some(), "{n}");
}
