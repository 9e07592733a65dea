//! The JSONL codec (`docs/EXPORT-FORMAT.md`) on its own, without a store:
//! rows written as lines read back as the same values, the line limit, and
//! the refusal of bad lines, each naming its line.

use std::io::Read;

use hermes_state_core::Result;
use hermes_state_core::export::{
    BatchLimits, Cell, ExportSummary, IMPORT_LINE_LIMIT, ImportOptions, ImportOutcome, ImportRow,
    ImportSink, LineColumns, LineWriter, TargetColumns, header_line, import_jsonl,
};
use hermes_state_types::ErrorKind;
use hermes_state_types::stored::{CONTENT_JSON_PREFIX, StoredValue, StoredValueRef};
use proptest::prelude::*;

/// A store that keeps what it is given: every batch with its boundary flag.
#[derive(Default)]
pub(crate) struct Recorder {
    columns: TargetColumns,
    limits: Option<BatchLimits>,
    batches: Vec<(Vec<ImportRow>, bool)>,
    abandoned: bool,
}

impl Recorder {
    pub(crate) fn with_columns(sessions: &[&str], messages: &[&str]) -> Self {
        let names = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        Recorder {
            columns: TargetColumns {
                sessions: names(sessions),
                messages: names(messages),
            },
            ..Recorder::default()
        }
    }

    pub(crate) fn rows(&self) -> Vec<ImportRow> {
        self.batches
            .iter()
            .flat_map(|(rows, _)| rows.clone())
            .collect()
    }
}

impl ImportSink for Recorder {
    fn begin(&mut self) -> Result<TargetColumns> {
        Ok(self.columns.clone())
    }
    fn batch_limits(&self) -> Option<BatchLimits> {
        self.limits
    }
    fn write(
        &mut self,
        rows: &[ImportRow],
        _options: &ImportOptions,
        at_boundary: bool,
    ) -> Result<ImportOutcome> {
        self.batches.push((rows.to_vec(), at_boundary));
        let messages = rows
            .iter()
            .filter(|row| matches!(row, ImportRow::Message { .. }))
            .count();
        Ok(ImportOutcome {
            imported: (rows.len() - messages) as u64,
            messages: messages as u64,
            ..ImportOutcome::default()
        })
    }
    fn abandon(&mut self) {
        self.abandoned = true;
    }
}

/// A file of one session row and its message rows, written with the
/// codec's own writer, as either backend's export writes it.
fn file(
    session: (&[String], &[StoredValueRef<'_>]),
    messages: (&[String], &[Vec<StoredValueRef<'_>>]),
) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut out = LineWriter::new(&mut bytes);
    out.line(&header_line(23, 1_764_000_000.5)).unwrap();
    let columns = LineColumns::new(session.0.iter().map(String::as_str), None);
    out.line(&columns.line("session", session.1.iter().copied()))
        .unwrap();
    let columns = LineColumns::new(messages.0.iter().map(String::as_str), Some("content"));
    for message in messages.1 {
        out.line(&columns.line("message", message.iter().copied()))
            .unwrap();
    }
    let summary = ExportSummary {
        sessions: 1,
        messages: messages.1.len() as u64,
        bytes: 0,
    };
    out.finish(summary, &mut |_| {}).unwrap();
    bytes
}

fn import(sink: &mut Recorder, bytes: &[u8]) -> Result<()> {
    import_jsonl(sink, bytes, &ImportOptions::default(), &mut |_| {}).map(|_| ())
}

/// Any value SQLite stores: NULL, integers, reals but NaN (SQLite stores no
/// NaN), text as any bytes (a damaged file's too), blobs.
fn any_value() -> impl Strategy<Value = (u8, i64, f64, Vec<u8>)> {
    (
        0u8..6,
        any::<i64>(),
        any::<f64>().prop_filter("SQLite stores no NaN", |f| !f.is_nan()),
        prop::collection::vec(any::<u8>(), 0..12),
    )
}

fn value_ref(choice: &(u8, i64, f64, Vec<u8>)) -> StoredValueRef<'_> {
    let (kind, int, real, bytes) = choice;
    match kind {
        0 => StoredValueRef::Null,
        1 => StoredValueRef::Integer(*int),
        2 => StoredValueRef::Real(*real),
        3 => StoredValueRef::Blob(bytes),
        // Text as any bytes, invalid UTF-8 included (twice as likely).
        _ => StoredValueRef::Text(bytes),
    }
}

/// Column names as they come: `type`, `$`-names and plain ones, unique.
fn column_names(extra: usize) -> Vec<String> {
    let mut names: Vec<String> = ["type", "$odd", "title", "$$twice"]
        .iter()
        .map(|n| (*n).to_owned())
        .collect();
    names.extend((0..extra).map(|i| format!("c{i}")));
    names
}

/// Content as stored: any value, or text with the structured-content marker
/// (JSON that re-encodes alike, and JSON that does not).
fn any_content() -> impl Strategy<Value = StoredValue> {
    prop_oneof![
        Just(StoredValue::Null),
        any::<i64>().prop_map(StoredValue::Integer),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(StoredValue::Blob),
        "[a-z\\[\\]{}\u{0}é ]{0,8}".prop_map(StoredValue::Text),
        "[a-z\\u{0}é😀 ]{0,8}".prop_map(|text| StoredValue::Text(format!(
            "{CONTENT_JSON_PREFIX}[{{\"type\": \"text\", \"text\": {}}}]",
            serde_json::Value::String(text)
        ))),
        "[a-z]{0,6}".prop_map(|text| StoredValue::Text(format!(
            "{CONTENT_JSON_PREFIX}{{\"compact\":\"{text}\"}}"
        ))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any row of values → line → values is lossless, every storage class,
    /// invalid UTF-8, infinities, column names the format escapes and
    /// decoded content included.
    #[test]
    fn any_row_reads_back_as_the_values_written(
        session_values in prop::collection::vec(any_value(), 6),
        message_values in prop::collection::vec((prop::collection::vec(any_value(), 6), any_content()), 0..4),
    ) {
        let mut session_names = column_names(1);
        session_names.insert(0, "id".to_owned());
        let mut session_row = vec![StoredValueRef::Text(b"s1")];
        session_row.extend(session_values.iter().take(session_names.len() - 1).map(value_ref));

        let mut message_names = column_names(0);
        message_names.extend(["id", "session_id", "content"].map(str::to_owned));
        let rows: Vec<Vec<StoredValueRef<'_>>> = message_values
            .iter()
            .enumerate()
            .map(|(at, (values, content))| {
                let mut row: Vec<_> = values.iter().take(4).map(value_ref).collect();
                row.push(StoredValueRef::Integer(at as i64 + 1));
                row.push(StoredValueRef::Text(b"s1"));
                row.push(content.as_ref());
                row
            })
            .collect();
        let bytes = file((&session_names, &session_row), (&message_names, &rows));

        let mut sink = Recorder::with_columns(
            &session_names.iter().map(String::as_str).collect::<Vec<_>>(),
            &message_names.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        import(&mut sink, &bytes).unwrap();
        let read = sink.rows();
        prop_assert_eq!(read.len(), 1 + rows.len());
        let ImportRow::Session { id, values, line } = &read[0] else { panic!("not a session") };
        prop_assert_eq!(id, "s1");
        prop_assert_eq!(*line, 2);
        let expected: Vec<(String, Cell)> = session_names
            .iter()
            .cloned()
            .zip(session_row.iter().map(|v| Cell::from(*v)))
            .collect();
        prop_assert_eq!(values, &expected);
        for (row, written) in read[1..].iter().zip(&rows) {
            let ImportRow::Message { id, values, .. } = row else { panic!("not a message") };
            prop_assert_eq!(*id, Some(match written[4] { StoredValueRef::Integer(i) => i, _ => 0 }));
            let expected: Vec<(String, Cell)> = message_names
                .iter()
                .cloned()
                .zip(written.iter().map(|v| Cell::from(*v)))
                .filter(|(name, _)| name != "id")
                .collect();
            prop_assert_eq!(values, &expected);
        }
    }
}

#[test]
fn columns_the_target_lacks_are_left_out_and_reported() {
    let names = ["id".to_owned(), "gone".to_owned()];
    let row = [StoredValueRef::Text(b"s1"), StoredValueRef::Integer(3)];
    let bytes = file((&names, &row), (&[], &[]));
    let mut sink = Recorder::with_columns(&["id"], &[]);
    let report = import_jsonl(
        &mut sink,
        &bytes[..],
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(report.dropped_columns, ["sessions.gone"]);
    assert_eq!(report.imported, 1);
}

/// The rows of a file and the error its import gives.
fn refusal(text: &str) -> (hermes_state_core::Error, Recorder) {
    let mut sink = Recorder::with_columns(&["id", "title"], &["id", "session_id", "content"]);
    let error = import(&mut sink, text.as_bytes()).unwrap_err();
    (error, sink)
}

const HEADER: &str =
    r#"{"format":"hermes-state-export","version":1,"schema_version":23,"exported_at":1.5}"#;
const SESSION: &str = r#"{"type":"session","id":"s1"}"#;
const END_1_0: &str = r#"{"type":"end","sessions":1,"messages":0}"#;

#[test]
fn bad_lines_are_refused_as_invalid_input_naming_the_line() {
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "empty export file"),
        (
            r#"{"format":"other","version":1}"#.to_owned(),
            "export line 1: not a hermes-state export header",
        ),
        (
            r#"{"format":"hermes-state-export","version":2}"#.to_owned(),
            "export line 1: unsupported export version 2",
        ),
        (
            format!("{HEADER}\nnot json"),
            "export line 2: not a JSON object",
        ),
        (
            format!("{HEADER}\n\n{{\"id\":\"s1\"}}"),
            "export line 3: no \"type\"",
        ),
        (
            format!("{HEADER}\n{{\"type\":\"memo\"}}"),
            "export line 2: unknown line type \"memo\"",
        ),
        (
            format!("{HEADER}\n{{\"type\":\"session\",\"id\":7}}"),
            "export line 2: a session line needs a text \"id\"",
        ),
        (
            format!("{HEADER}\n{{\"type\":\"message\",\"session_id\":\"s1\"}}"),
            "export line 2: a message line must follow its session's line",
        ),
        (
            format!(
                "{HEADER}\n{SESSION}\n{{\"type\":\"message\",\"session_id\":\"s1\",\"id\":\"x\"}}"
            ),
            "export line 3: a message \"id\" must be an integer",
        ),
        (
            format!(
                "{HEADER}\n{{\"type\":\"session\",\"id\":\"s1\",\"title\":{{\"blob\":\"0g\"}}}}"
            ),
            "export line 2: column \"title\": bad hex",
        ),
        (
            format!(
                "{HEADER}\n{{\"type\":\"session\",\"id\":\"s1\",\"title\":{{\"real\":\"NaN\"}}}}"
            ),
            "export line 2: column \"title\": unknown real \"NaN\"",
        ),
        (
            format!(
                "{HEADER}\n{SESSION}\n{{\"type\":\"message\",\"session_id\":\"s1\",\"content\":3}}"
            ),
            "export line 3: column \"content\": decoded content must be",
        ),
        (
            format!("{HEADER}\n{SESSION}"),
            "truncated export: the end line is missing",
        ),
        (
            format!("{HEADER}\n{SESSION}\n{{\"type\":\"end\",\"sessions\":2,\"messages\":0}}"),
            "export line 3: the end line counts do not match the file (1 sessions, 0 messages)",
        ),
        (
            format!("{HEADER}\n{SESSION}\n{END_1_0}\n{SESSION}"),
            "export line 4: data after the end line",
        ),
        (
            format!("{HEADER}\n\u{ff}"),
            "export line 2: not a JSON object",
        ),
    ];
    for (text, expected) in cases {
        let (error, sink) = refusal(&text);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{text:?}: {error}");
        assert!(
            error.to_string().contains(expected),
            "{text:?}: {error} does not say {expected:?}"
        );
        assert!(sink.batches.is_empty(), "{text:?}: something was written");
    }
}

#[test]
fn a_line_longer_than_the_limit_is_refused_without_reading_it_whole() {
    let endless = std::io::Cursor::new(format!("{HEADER}\n"))
        .chain(std::io::repeat(b' ').take(IMPORT_LINE_LIMIT as u64 + 10))
        .chain(&b"\n"[..]);
    let mut sink = Recorder::default();
    let error = import_jsonl(
        &mut sink,
        std::io::BufReader::new(endless),
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        error
            .to_string()
            .contains("export line 2: longer than 64 MiB"),
        "{error}"
    );
}

#[test]
fn a_line_at_the_limit_is_read() {
    // A blank line of exactly the limit: read, then skipped.
    let text = [
        format!("{HEADER}\n").into_bytes(),
        vec![b' '; IMPORT_LINE_LIMIT],
        format!("\n{SESSION}\n{END_1_0}\n").into_bytes(),
    ]
    .concat();
    let mut sink = Recorder::with_columns(&["id"], &[]);
    import(&mut sink, &text).unwrap();
    assert_eq!(sink.rows().len(), 1);
}

/// Batches are cut between sessions once full, and inside one session
/// only at twice the limit; a failure after a cut lets the sink undo.
#[test]
fn batches_follow_the_sinks_limits() {
    let message = |n: u32| format!(r#"{{"type":"message","session_id":"s{n}","content":"x"}}"#);
    let mut text = vec![HEADER.to_owned()];
    for n in 1..=3 {
        text.push(format!(r#"{{"type":"session","id":"s{n}"}}"#));
        text.extend((0..3).map(|_| message(n)));
    }
    text.push(r#"{"type":"end","sessions":3,"messages":9}"#.to_owned());
    let mut sink = Recorder::with_columns(&["id"], &["session_id", "content"]);
    sink.limits = Some(BatchLimits {
        sessions: 2,
        messages: 1,
        bytes: usize::MAX,
    });
    let mut progress = Vec::new();
    let report = import_jsonl(
        &mut sink,
        text.join("\n").as_bytes(),
        &ImportOptions::default(),
        &mut |n| progress.push(n),
    )
    .unwrap();
    assert_eq!((report.imported, report.messages), (3, 9));
    let shape: Vec<(usize, bool)> = sink
        .batches
        .iter()
        .map(|(rows, boundary)| (rows.len(), *boundary))
        .collect();
    // Each session's second message reaches twice the message limit.
    assert_eq!(
        shape,
        [
            (3, false),
            (1, true),
            (3, false),
            (1, true),
            (3, false),
            (1, true)
        ]
    );
    assert_eq!(progress, [2, 3, 5, 6, 8, 9]);

    // Without limits, one batch; a failure after written batches lets the sink undo.
    let mut whole = Recorder::with_columns(&["id"], &["session_id", "content"]);
    import(&mut whole, text.join("\n").as_bytes()).unwrap();
    assert_eq!(whole.batches.len(), 1);
    let truncated = text[..text.len() - 1].join("\n");
    let (error, _) = refusal(&truncated);
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    let mut cut = Recorder::with_columns(&["id"], &["session_id", "content"]);
    cut.limits = sink.limits;
    assert!(import(&mut cut, truncated.as_bytes()).is_err());
    assert!(cut.abandoned && !cut.batches.is_empty());
}

/// A header line may gain keys; readers ignore the ones they don't know.
#[test]
fn unknown_header_keys_are_ignored() {
    let text = format!(
        "{}\n{SESSION}\n{END_1_0}\n",
        HEADER.replace("}", ",\"written_by\":\"elsewhere\"}")
    );
    let mut sink = Recorder::with_columns(&["id"], &[]);
    import(&mut sink, text.as_bytes()).unwrap();
    assert_eq!(sink.rows().len(), 1);
}
