//! What genuinely differs between a file and a PostgreSQL store holding the
//! same data, and is therefore left out of the comparison; every entry says
//! why. Everything else must be equal.

use serde_json::Value;

/// The word every store location becomes.
pub const STORE: &str = "<store>";

/// Normalisations every case gets.
pub struct Everywhere<'a> {
    /// The file, as the command line shows it.
    pub file: &'a str,
    /// The PostgreSQL store, as the command line shows it (its URL
    /// without the password).
    pub server: &'a str,
    /// When the test started.
    pub started: f64,
    /// Now (after the run compared).
    pub now: f64,
}

impl Everywhere<'_> {
    /// * The store's location: a path on one side, a URL on the other; so
    ///   too the option that names it again in `demo`'s suggestions (`--db
    ///   PATH`, `--database-url 'URL'`).
    /// * The times the library records itself while the test runs (a new
    ///   session's start, an end, an export's `exported_at`, a moved store's
    ///   `superseded_at`): they come from the system clock, not from
    ///   `HERMES_STATE_NOW`, and the two sides run moments apart — as Unix
    ///   seconds and as human dates of these days.
    pub fn apply(&self, text: &str) -> String {
        let text = text
            .replace(&format!(" --db {}", self.file), " <store option>")
            .replace(
                &format!(" --database-url '{}'", self.server),
                " <store option>",
            )
            .replace(self.file, STORE)
            .replace(self.server, STORE);
        let text = now_numbers(&text, self.started - 1.0, self.now + 1.0);
        now_dates(&text, &[self.started, self.now])
    }
}

/// How much of a pair is compared beyond [`Everywhere`].
#[derive(Clone, Copy)]
pub enum Compare {
    /// All of it.
    Exact,
    /// Search hits without their snippets: the windows of text around a
    /// match differ by design (FTS5's `snippet()` against PostgreSQL's
    /// `ts_headline`; docs/POSTGRES.md), the hits do not.
    NoSnippets,
    /// [`Compare::NoSnippets`], in either order: relevance ranks differ by
    /// design too (bm25 against `ts_rank`; docs/POSTGRES.md).
    RankedHits,
    /// stderr up to its advice (the first `; `): the advice names what to
    /// do on that backend (`demo` on a store with sessions: a new file, a
    /// new schema).
    AdviceDiffers,
}

impl Compare {
    pub fn stdout(self, text: &str) -> String {
        match self {
            Compare::NoSnippets => without_snippets(text),
            Compare::RankedHits => {
                let text = without_snippets(text);
                let mut hits: Vec<String> = match serde_json::from_str(&text) {
                    Ok(Value::Array(items)) => items.iter().map(ToString::to_string).collect(),
                    _ => text.lines().map(str::to_owned).collect(),
                };
                hits.sort();
                hits.join("\n")
            }
            Compare::Exact | Compare::AdviceDiffers => text.to_owned(),
        }
    }

    pub fn stderr(self, text: &str) -> String {
        match self {
            Compare::AdviceDiffers => text
                .lines()
                .map(|line| line.split("; ").next().unwrap_or(line))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => text.to_owned(),
        }
    }
}

/// A search's output without snippets: the `snippet` fields of JSON, the
/// indented hit bodies of text.
fn without_snippets(text: &str) -> String {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("snippet");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    if let Ok(mut value) = serde_json::from_str::<Value>(text) {
        strip(&mut value);
        return value.to_string();
    }
    text.lines()
        .filter(|line| !line.starts_with("    "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Numbers (Unix seconds) between `from` and `to` replaced by `<now>`.
fn now_numbers(text: &str, from: f64, to: f64) -> String {
    let mut out = String::with_capacity(text.len());
    let mut number = String::new();
    let flush = |number: &mut String, out: &mut String| {
        match number.parse::<f64>() {
            Ok(value) if (from..=to).contains(&value) => out.push_str("<now>"),
            _ => out.push_str(number),
        }
        number.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() || (c == '.' && !number.is_empty()) {
            number.push(c);
        } else {
            flush(&mut number, &mut out);
            out.push(c);
        }
    }
    flush(&mut number, &mut out);
    out
}

/// Dates of the days of `instants` (UTC, the tests' `TZ`), with the time
/// of day after them (`2026-12-03 11:05`, `2026-12-03T11:05:07.1Z`),
/// replaced by `<now>`.
fn now_dates(text: &str, instants: &[f64]) -> String {
    let mut text = text.to_owned();
    for day in instants.iter().map(|t| civil_day(*t)) {
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&day) {
            out.push_str(&rest[..at]);
            out.push_str("<now>");
            let tail = &rest.as_bytes()[at + day.len()..];
            let mut end = 0;
            while let Some(&b) = tail.get(end) {
                let time = b.is_ascii_digit() || b":.TZ".contains(&b);
                let space_then_time =
                    b == b' ' && end == 0 && tail.get(1).is_some_and(u8::is_ascii_digit);
                if !(time || space_then_time) {
                    break;
                }
                end += 1;
            }
            rest = &rest[at + day.len() + end..];
        }
        out.push_str(rest);
        text = out;
    }
    text
}

/// `YYYY-MM-DD` of a Unix time (UTC).
fn civil_day(unix: f64) -> String {
    let days = (unix / 86_400.0).floor() as i64;
    let (year, month, day) = hermes_state_types::civil::civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

#[test]
fn the_normalisations_replace_only_what_they_name() {
    let now = 1_796_295_976.5;
    let everywhere = Everywhere {
        file: "/tmp/x/store.db",
        server: "postgresql://u@h:1/db?schema=s",
        started: now - 10.0,
        now,
    };
    assert_eq!(
        everywhere.apply(
            "in /tmp/x/store.db at 1796295970.25 (2026-12-03 11:06 UTC), id 42, 2025-12-30 00:01"
        ),
        "in <store> at <now> (<now> UTC), id 42, 2025-12-30 00:01"
    );
    assert_eq!(civil_day(0.0), "1970-01-01");
    assert_eq!(civil_day(1_767_225_600.0), "2026-01-01");
    assert_eq!(
        Compare::RankedHits.stdout(r#"[{"id":2,"snippet":"a"},{"id":1,"snippet":"b"}]"#),
        "{\"id\":1}\n{\"id\":2}"
    );
}
