//! `plan_parent_links`: which parent links of an import are made, over
//! sessions kept in memory.

use std::collections::HashMap;

use hermes_state_core::import_links::{StoredLinks, plan_parent_links};

/// Sessions in memory: id → parent.
struct Stored(HashMap<&'static str, Option<&'static str>>);

impl StoredLinks for Stored {
    type Error = ();
    fn session_exists(&mut self, id: &str) -> Result<bool, ()> {
        Ok(self.0.contains_key(id))
    }
    fn parent_of(&mut self, id: &str) -> Result<Option<String>, ()> {
        Ok(self.0.get(id).copied().flatten().map(str::to_owned))
    }
}

fn links(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(c, p)| ((*c).to_owned(), (*p).to_owned()))
        .collect()
}

#[test]
fn the_first_link_of_a_two_cycle_is_the_one_refused() {
    // The original walks x → y → (y's pending link) x: a cycle, so x is
    // detached; y → x is then free of it.
    let mut store = Stored(HashMap::from([("x", None), ("y", None)]));
    let plan = plan_parent_links(&mut store, &links(&[("x", "y"), ("y", "x")]));
    assert_eq!(plan, Ok(vec![false, true]));
}

#[test]
fn a_cycle_elsewhere_in_the_store_refuses_the_link() {
    let mut store = Stored(HashMap::from([
        ("a", Some("b")),
        ("b", Some("a")),
        ("new", None),
    ]));
    let plan = plan_parent_links(&mut store, &links(&[("new", "a")]));
    assert_eq!(plan, Ok(vec![false]));
}

#[test]
fn missing_parents_and_self_links_are_refused_chains_are_made() {
    let mut store = Stored(HashMap::from([
        ("a", None),
        ("b", None),
        ("c", None),
        ("s", None),
        ("o", None),
        ("old", Some("")),
    ]));
    let plan = plan_parent_links(
        &mut store,
        &links(&[
            ("a", "b"),
            ("b", "c"),
            ("s", "s"),
            ("c", "gone"),
            ("o", "old"),
        ]),
    );
    assert_eq!(plan, Ok(vec![true, true, false, false, true]));
}
