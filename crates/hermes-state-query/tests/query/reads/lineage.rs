//! `api.md` §9: ancestors / descendants (the seed's recursive queries, made
//! cycle-safe), the lineage root, and §9.2's root-to-tip walk.

use std::collections::BTreeSet;

use hermes_state_query::lineage::{LineageEntry, ancestors, descendants, lineage_root};
use hermes_state_query::lineage_root_to_tip;
use hermes_state_schema::rusqlite::{Connection, params};

use crate::common::Db;

fn entry(id: &str, title: Option<&str>, started_at: f64, parent: Option<&str>) -> LineageEntry {
    LineageEntry {
        id: id.to_owned(),
        title: title.map(str::to_owned),
        started_at,
        parent_session_id: parent.map(str::to_owned),
    }
}

fn ids(entries: &[LineageEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.id.as_str()).collect()
}

/// The §9.1-like data: `r1` "Root one" (100.0) ← `r1c` (160.0); and a tree
/// `r2` → {`sub` → `subsub`, `br` → `brc`}.
fn example() -> Db {
    let db = Db::new();
    db.titled("r1", "Root one", 100.0);
    db.end("r1", "compression", 150.0);
    db.child("r1c", "r1", None, 160.0);
    db.titled("r2", "Root two", 200.0);
    db.child("sub", "r2", Some("Sub"), 210.0);
    db.child("br", "r2", None, 220.0);
    db.end("r2", "branched", 205.0);
    db.child("subsub", "sub", None, 230.0);
    db.child("brc", "br", Some("Branch child"), 240.0);
    db
}

/// The seed's ancestor CTE, verbatim (`UNION ALL`: acyclic data only).
fn seed_ancestors(conn: &Connection, id: &str) -> Vec<LineageEntry> {
    let mut stmt = conn
        .prepare(
            "WITH RECURSIVE lineage AS (SELECT * FROM sessions WHERE id = ?
  UNION ALL SELECT s.* FROM sessions s JOIN lineage l ON s.id = l.parent_session_id)
SELECT id, title, started_at, parent_session_id FROM lineage",
        )
        .expect("prepare");
    stmt.query_map([id], |r| {
        Ok(LineageEntry {
            id: r.get(0)?,
            title: r.get(1)?,
            started_at: r.get(2)?,
            parent_session_id: r.get(3)?,
        })
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

/// The seed's descendant CTE, verbatim: `(id, title, started_at)`.
fn seed_descendants(conn: &Connection, id: &str) -> Vec<(String, Option<String>, f64)> {
    let mut stmt = conn
        .prepare(
            "WITH RECURSIVE descendants AS (SELECT * FROM sessions WHERE id = ?
  UNION ALL SELECT s.* FROM sessions s JOIN descendants d ON s.parent_session_id = d.id)
SELECT id, title, started_at FROM descendants",
        )
        .expect("prepare");
    stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn ancestors_walk_up_from_the_session() {
    let db = example();
    assert_eq!(
        ancestors(&db.conn, "r1c").expect("ancestors"),
        vec![
            entry("r1c", None, 160.0, Some("r1")),
            entry("r1", Some("Root one"), 100.0, None),
        ]
    );
    assert_eq!(
        ancestors(&db.conn, "brc").expect("ancestors"),
        vec![
            entry("brc", Some("Branch child"), 240.0, Some("br")),
            entry("br", None, 220.0, Some("r2")),
            entry("r2", Some("Root two"), 200.0, None),
        ]
    );
    assert_eq!(
        ancestors(&db.conn, "r1").expect("ancestors"),
        vec![entry("r1", Some("Root one"), 100.0, None)]
    );
    assert!(
        ancestors(&db.conn, "missing")
            .expect("ancestors")
            .is_empty()
    );
    for id in ["r1", "r1c", "r2", "sub", "br", "subsub", "brc"] {
        assert_eq!(
            ancestors(&db.conn, id).expect("ancestors"),
            seed_ancestors(&db.conn, id),
            "same rows and order as the seed query for {id}"
        );
    }
}

#[test]
fn descendants_level_by_level() {
    let db = example();
    assert_eq!(
        descendants(&db.conn, "r2").expect("descendants"),
        vec![
            entry("r2", Some("Root two"), 200.0, None),
            entry("sub", Some("Sub"), 210.0, Some("r2")),
            entry("br", None, 220.0, Some("r2")),
            entry("subsub", None, 230.0, Some("sub")),
            entry("brc", Some("Branch child"), 240.0, Some("br")),
        ]
    );
    assert_eq!(
        ids(&descendants(&db.conn, "r1").expect("descendants")),
        ["r1", "r1c"]
    );
    assert_eq!(
        ids(&descendants(&db.conn, "brc").expect("descendants")),
        ["brc"]
    );
    assert!(
        descendants(&db.conn, "missing")
            .expect("descendants")
            .is_empty()
    );
    for id in ["r1", "r1c", "r2", "sub", "br", "subsub", "brc"] {
        let ours: Vec<(String, Option<String>, f64)> = descendants(&db.conn, id)
            .expect("descendants")
            .into_iter()
            .map(|e| (e.id, e.title, e.started_at))
            .collect();
        assert_eq!(
            ours,
            seed_descendants(&db.conn, id),
            "same rows and order as the seed query for {id}"
        );
    }
}

#[test]
fn lineage_root_of_well_formed_chains() {
    let db = example();
    for (id, root) in [
        ("r1", "r1"),
        ("r1c", "r1"),
        ("r2", "r2"),
        ("subsub", "r2"),
        ("brc", "r2"),
    ] {
        assert_eq!(
            lineage_root(&db.conn, id).expect("lineage_root"),
            root,
            "{id}"
        );
    }
}

/// §9.2 example: `root` (ended `compression`) → `child` → `gchild`.
#[test]
fn root_to_tip_example_of_9_2() {
    let db = Db::new();
    db.session("root", 1.0);
    db.end("root", "compression", 2.0);
    db.child("child", "root", None, 3.0);
    db.child("gchild", "child", None, 4.0);
    assert_eq!(
        lineage_root_to_tip(&db.conn, "gchild").expect("root to tip"),
        ["root", "child", "gchild"]
    );
    assert_eq!(
        lineage_root_to_tip(&db.conn, "child").expect("root to tip"),
        ["root", "child"]
    );
    assert_eq!(
        lineage_root_to_tip(&db.conn, "root").expect("root to tip"),
        ["root"]
    );
    assert_eq!(lineage_root(&db.conn, "gchild").expect("root"), "root");
}

/// A damaged file: `c1` ⇄ `c2`, `d1` → `d2` → `d3` → `d1` (parent links),
/// `e` whose parent `d1` is in a cycle, and `selfie` its own parent.
fn cyclic() -> Db {
    let db = Db::new();
    for (i, id) in ["c1", "c2", "d1", "d2", "d3", "selfie"].iter().enumerate() {
        db.session(id, 10.0 + i as f64);
    }
    db.child("e", "d1", Some("E"), 20.0);
    for (id, parent) in [
        ("c1", "c2"),
        ("c2", "c1"),
        ("d1", "d2"),
        ("d2", "d3"),
        ("d3", "d1"),
        ("selfie", "selfie"),
    ] {
        db.exec(
            "UPDATE sessions SET parent_session_id = ?2 WHERE id = ?1",
            params![id, parent],
        );
    }
    db
}

/// Each session at most once, the session itself first, and exactly `expected`.
fn assert_once(entries: &[LineageEntry], first: &str, expected: &[&str]) {
    let got = ids(entries);
    assert_eq!(got.first().copied(), Some(first), "{got:?}");
    let unique: BTreeSet<&str> = got.iter().copied().collect();
    assert_eq!(unique.len(), got.len(), "a session repeated: {got:?}");
    let want: BTreeSet<&str> = expected.iter().copied().collect();
    assert_eq!(unique, want, "{got:?}");
}

#[test]
fn cycles_terminate_and_return_each_session_once() {
    let db = cyclic();
    let conn = &db.conn;

    assert_once(
        &ancestors(conn, "c1").expect("ancestors"),
        "c1",
        &["c1", "c2"],
    );
    assert_once(
        &ancestors(conn, "c2").expect("ancestors"),
        "c2",
        &["c1", "c2"],
    );
    assert_once(
        &descendants(conn, "c1").expect("descendants"),
        "c1",
        &["c1", "c2"],
    );
    assert_once(
        &ancestors(conn, "d1").expect("ancestors"),
        "d1",
        &["d1", "d2", "d3"],
    );
    assert_once(
        &descendants(conn, "d2").expect("descendants"),
        "d2",
        &["d1", "d2", "d3", "e"],
    );
    assert_once(
        &ancestors(conn, "e").expect("ancestors"),
        "e",
        &["e", "d1", "d2", "d3"],
    );
    assert_once(&descendants(conn, "e").expect("descendants"), "e", &["e"]);
    assert_once(
        &ancestors(conn, "selfie").expect("ancestors"),
        "selfie",
        &["selfie"],
    );
    assert_once(
        &descendants(conn, "selfie").expect("descendants"),
        "selfie",
        &["selfie"],
    );
    // Walking up is a path, so its order is fixed even on a cycle.
    assert_eq!(
        ids(&ancestors(conn, "d1").expect("ancestors")),
        ["d1", "d2", "d3"]
    );
    assert_eq!(
        ids(&ancestors(conn, "e").expect("ancestors")),
        ["e", "d1", "d2", "d3"]
    );

    // §9.2: walk up, stop on a repeat, reverse; the root is the first element.
    assert_eq!(lineage_root_to_tip(conn, "c1").expect("walk"), ["c2", "c1"]);
    assert_eq!(
        lineage_root_to_tip(conn, "d1").expect("walk"),
        ["d3", "d2", "d1"]
    );
    assert_eq!(
        lineage_root_to_tip(conn, "e").expect("walk"),
        ["d3", "d2", "d1", "e"]
    );
    assert_eq!(
        lineage_root_to_tip(conn, "selfie").expect("walk"),
        ["selfie"]
    );
    assert_eq!(lineage_root(conn, "c1").expect("root"), "c2");
    assert_eq!(lineage_root(conn, "c2").expect("root"), "c1");
    assert_eq!(lineage_root(conn, "d1").expect("root"), "d3");
    assert_eq!(lineage_root(conn, "e").expect("root"), "d3");
    assert_eq!(lineage_root(conn, "selfie").expect("root"), "selfie");
}

#[test]
fn dangling_parent_stops_the_walk() {
    let db = Db::new();
    db.session("orphan", 1.0);
    db.exec("PRAGMA foreign_keys = OFF", []);
    db.exec(
        "UPDATE sessions SET parent_session_id = 'gone' WHERE id = 'orphan'",
        [],
    );
    db.exec("PRAGMA foreign_keys = ON", []);
    assert_eq!(
        lineage_root_to_tip(&db.conn, "orphan").expect("walk"),
        ["orphan"]
    );
    assert_eq!(lineage_root(&db.conn, "orphan").expect("root"), "orphan");
    assert_eq!(
        ids(&ancestors(&db.conn, "orphan").expect("ancestors")),
        ["orphan"]
    );
}
