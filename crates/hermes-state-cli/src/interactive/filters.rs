//! The filters of the interactive search (source, role, since): each is a
//! ring of choices a key steps through, starting where the command line's
//! flags put it, so `search -i --role user` opens on "role: user" and one
//! press moves on from there.

use crate::cli::SearchArgs;
use crate::output::when;

/// One choice of a filter: what the status line calls it, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice<T> {
    /// The words the status line shows (`any`, `telegram`, `7d`).
    pub label: String,
    /// What the search is given.
    pub value: T,
}

impl<T> Choice<T> {
    fn new(label: impl Into<String>, value: T) -> Self {
        Choice {
            label: label.into(),
            value,
        }
    }
}

/// A ring of choices, one of them current.
#[derive(Debug, Clone)]
pub struct Cycle<T> {
    choices: Vec<Choice<T>>,
    at: usize,
}

impl<T: PartialEq> Cycle<T> {
    /// The ring `choices` (never empty: the first is "any"), on the one whose
    /// value is `start`; a `start` none has is put in front as `start_label`.
    fn starting_at(mut choices: Vec<Choice<T>>, start: T, start_label: String) -> Self {
        let at = match choices.iter().position(|c| c.value == start) {
            Some(at) => at,
            None => {
                choices.insert(0, Choice::new(start_label, start));
                0
            }
        };
        Cycle { choices, at }
    }

    /// Moves to the next choice, back to the first after the last.
    pub fn advance(&mut self) {
        self.at = (self.at + 1) % self.choices.len();
    }

    /// The current choice.
    pub fn current(&self) -> &Choice<T> {
        &self.choices[self.at]
    }

    /// Every choice, in ring order.
    #[cfg(test)]
    pub fn labels(&self) -> Vec<&str> {
        self.choices.iter().map(|c| c.label.as_str()).collect()
    }
}

/// The lower time bound of the hits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Since {
    /// No bound.
    Any,
    /// This many seconds before the search runs.
    Age(f64),
    /// A fixed time (Unix seconds), from `--since`.
    At(f64),
}

impl Since {
    /// The bound for a search run at `now`.
    pub fn bound(self, now: f64) -> Option<f64> {
        match self {
            Since::Any => None,
            Since::Age(seconds) => Some(now - seconds),
            Since::At(at) => Some(at),
        }
    }
}

/// The ages the since filter steps through after "any".
const AGES: [(&str, f64); 4] = [
    ("1h", 3_600.0),
    ("1d", 86_400.0),
    ("7d", 604_800.0),
    ("30d", 2_592_000.0),
];

/// The roles the role filter steps through after "any" (the original's).
const ROLES: [&str; 4] = ["user", "assistant", "tool", "system"];

/// The filters the keys cycle, and the fixed ones the flags set.
#[derive(Debug, Clone)]
pub struct Filters {
    /// Sessions of these sources (empty: any).
    pub source: Cycle<Vec<String>>,
    /// Messages of these roles (empty: any).
    pub role: Cycle<Vec<String>>,
    /// Messages from this time on.
    pub since: Cycle<Since>,
    /// `--until`: messages before this time (not cycled).
    pub until: Option<f64>,
}

impl Filters {
    /// The filters the flags ask for; `sources` are the store's sources the
    /// source filter steps through (the flags' own come first when the
    /// store's list lacks them).
    pub fn new(args: &SearchArgs, sources: &[String]) -> Self {
        let mut source_choices = vec![Choice::new("any", Vec::new())];
        source_choices.extend(
            sources
                .iter()
                .map(|s| Choice::new(s.clone(), vec![s.clone()])),
        );
        let mut role_choices = vec![Choice::new("any", Vec::new())];
        role_choices.extend(ROLES.iter().map(|r| Choice::new(*r, vec![(*r).to_owned()])));
        let mut since_choices = vec![Choice::new("any", Since::Any)];
        since_choices.extend(
            AGES.iter()
                .map(|(label, seconds)| Choice::new(*label, Since::Age(*seconds))),
        );
        let roles = args.roles();
        let since = args.window.since.map_or(Since::Any, Since::At);
        Filters {
            source: Cycle::starting_at(source_choices, args.source.clone(), args.source.join(",")),
            role: Cycle::starting_at(role_choices, roles.clone(), roles.join(",")),
            since: Cycle::starting_at(
                since_choices,
                since,
                args.window.since.map(when).unwrap_or_default(),
            ),
            until: args.window.until,
        }
    }

    /// The status line's account of the filters:
    /// `source: any · role: user · since: 7d`.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "source: {} · role: {} · since: {}",
            self.source.current().label,
            self.role.current().label,
            self.since.current().label
        );
        if let Some(until) = self.until {
            text.push_str(&format!(" · until: {}", when(until)));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn args(flags: &[&str]) -> SearchArgs {
        let mut argv = vec!["hermes-state", "search", "-i"];
        argv.extend_from_slice(flags);
        match Cli::try_parse_from(argv).expect("valid flags").command {
            Command::Search(args) => args,
            other => panic!("not a search: {other:?}"),
        }
    }

    #[test]
    fn without_flags_every_filter_is_any_and_cycles_back() {
        let sources = vec!["cli".to_owned(), "telegram".to_owned()];
        let mut filters = Filters::new(&args(&[]), &sources);
        assert_eq!(filters.describe(), "source: any · role: any · since: any");
        assert_eq!(filters.source.labels(), ["any", "cli", "telegram"]);
        filters.source.advance();
        assert_eq!(filters.source.current().value, vec!["cli".to_owned()]);
        filters.source.advance();
        filters.source.advance();
        assert_eq!(filters.source.current().label, "any");
        assert_eq!(
            filters.role.labels(),
            ["any", "user", "assistant", "tool", "system"]
        );
        assert_eq!(filters.since.labels(), ["any", "1h", "1d", "7d", "30d"]);
    }

    #[test]
    fn flags_choose_where_each_ring_starts() {
        let sources = vec!["cli".to_owned(), "telegram".to_owned()];
        let mut filters = Filters::new(
            &args(&["--source", "telegram", "--role", "tool", "--since", "0"]),
            &sources,
        );
        assert_eq!(
            filters.describe(),
            "source: telegram · role: tool · since: 1970-01-01 00:00 UTC"
        );
        // A fixed --since is its own first choice; the next press is "any".
        filters.since.advance();
        assert_eq!(filters.since.current().value, Since::Any);
        filters.role.advance();
        assert_eq!(filters.role.current().label, "system");
    }

    #[test]
    fn flags_the_store_list_lacks_are_put_in_front() {
        let filters = Filters::new(
            &args(&["--source", "a", "--source", "b", "--role-any", "wizard"]),
            &["cli".to_owned()],
        );
        assert_eq!(filters.source.labels(), ["a,b", "any", "cli"]);
        assert_eq!(
            filters.source.current().value,
            vec!["a".to_owned(), "b".to_owned()]
        );
        assert_eq!(filters.role.current().label, "wizard");
    }

    #[test]
    fn an_age_is_counted_back_from_the_search_time() {
        assert_eq!(Since::Age(60.0).bound(1_000.0), Some(940.0));
        assert_eq!(Since::At(5.0).bound(1_000.0), Some(5.0));
        assert_eq!(Since::Any.bound(1_000.0), None);
    }
}
