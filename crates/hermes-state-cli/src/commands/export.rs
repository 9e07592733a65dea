//! `export` and `import`.
//!
//! Two formats:
//! * `json`: the original's `export_all` / `export_session` shape (session
//!   columns, `last_active`, `messages` with the active messages), one JSON
//!   array, written message by message (the library's `OriginalJsonWriter`);
//! * `jsonl`: the library's versioned, lossless, streaming format (every
//!   column, inactive messages included), written from one read snapshot.
//!
//! `import` reads both: JSONL natively, and a `json` export by the library's
//! `import_sessions` rules, converted to JSONL (`original_json_to_jsonl`).

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::rc::Rc;

use hermes_state::time_window::sessions_started_in;
use hermes_state::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportFilter, ExportPart, IMPORT_LINE_LIMIT,
    ImportOptions, ImportReport, OriginalJsonWriter, SessionStore, original_json_to_jsonl,
};
use serde_json::{Map, Value, json};

use crate::cli::{ExportArgs, ExportFormat, ImportArgs};
use crate::confirm::Consent;
use crate::error::{CliError, CliResult};
use crate::files;
use crate::output::count;
use crate::progress::Progress;
use crate::store::{Access, Context};

/// A writer that remembers whether the reader of a pipe went away.
struct PipeWatch<W> {
    inner: W,
    broken: Rc<Cell<bool>>,
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| self.note(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().inspect_err(|e| self.note(e))
    }
}

impl<W> PipeWatch<W> {
    fn note(&self, error: &io::Error) {
        if error.kind() == io::ErrorKind::BrokenPipe {
            self.broken.set(true);
        }
    }
}

/// Where an export goes: a file (replaced atomically on success, see
/// [`files::OutputFile`]) or stdout.
enum Destination {
    File(files::OutputFile),
    Stdout,
}

fn open_destination(
    ctx: &Context,
    output: Option<&Path>,
) -> CliResult<(Destination, Box<dyn Write>)> {
    match output {
        Some(path) if path != Path::new("-") => {
            let (file, handle) = files::OutputFile::create(ctx, path)?;
            Ok((Destination::File(file), Box::new(BufWriter::new(handle))))
        }
        _ => Ok((
            Destination::Stdout,
            Box::new(BufWriter::new(io::stdout().lock())),
        )),
    }
}

/// `export`
///
/// Writes the same bytes for the same store on either backend (the
/// library's exports are equal on both).
pub fn export(ctx: &Context, args: &ExportArgs) -> CliResult {
    check_export_args(args)?;
    export_from(ctx, &*ctx.open(Access::Read)?, args)
}

/// What `export` refuses before any store is opened.
fn check_export_args(args: &ExportArgs) -> CliResult {
    if args.lineage && args.format == ExportFormat::Json {
        return Err(CliError::usage(
            "--lineage exports with --format markdown (one document per segment) or jsonl (one session per line)",
        ));
    }
    if args.format == ExportFormat::Markdown && args.session.is_none() {
        return Err(CliError::usage(
            "export: --format markdown writes one conversation; name it with --session ID",
        ));
    }
    Ok(())
}

/// `export` from the open store.
fn export_from(ctx: &Context, store: &dyn SessionStore, args: &ExportArgs) -> CliResult {
    if let Some(id) = &args.session
        && store.get_session(id).map_err(|e| ctx.fail(&e))?.is_none()
    {
        return Err(ctx.unknown_session(id));
    }
    let (destination, writer) = open_destination(ctx, args.output.as_deref())?;
    let broken = Rc::new(Cell::new(false));
    let mut writer = PipeWatch {
        inner: writer,
        broken: Rc::clone(&broken),
    };
    let result = match args.format {
        ExportFormat::Jsonl => export_jsonl(ctx, store, args, &mut writer),
        ExportFormat::Json => export_json(ctx, store, args, &mut writer),
        ExportFormat::Markdown => super::export_markdown::export(ctx, store, args, &mut writer),
    };
    let result = result.and_then(|summary| {
        writer.flush().map_err(|e| CliError::output(&e))?;
        Ok(summary)
    });
    drop(writer);
    // On failure, dropping the destination removes the temporary file: the
    // output the user named keeps its old bytes (or stays absent).
    let (sessions, messages) = match result {
        Ok(summary) => summary,
        Err(_) if broken.get() => return Err(CliError::broken_pipe()),
        Err(error) => return Err(error),
    };
    let format = match args.format {
        ExportFormat::Json => "json",
        ExportFormat::Jsonl => "jsonl",
        ExportFormat::Markdown => "markdown",
    };
    match destination {
        Destination::File(file) => {
            let path = file.path().to_owned();
            file.commit()?;
            if ctx.out.json {
                let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                return ctx.out.json(&json!({
                    "path": path.display().to_string(),
                    "format": format,
                    "sessions": sessions,
                    "messages": messages,
                    "bytes": bytes,
                }));
            }
            ctx.out.note(format!(
                "exported {} session(s), {} message(s) to {}",
                count(sessions as i64),
                count(messages as i64),
                path.display()
            ));
        }
        Destination::Stdout => ctx.out.note(format!(
            "exported {} session(s), {} message(s)",
            count(sessions as i64),
            count(messages as i64)
        )),
    }
    Ok(())
}

fn export_jsonl(
    ctx: &Context,
    store: &dyn SessionStore,
    args: &ExportArgs,
    writer: &mut dyn Write,
) -> CliResult<(u64, u64)> {
    let total = match (&args.session, &args.source) {
        (Some(id), _) => store.message_count(Some(id)),
        (None, Some(source)) => store.message_count_of_source(source),
        (None, None) => store.message_count(None),
    }
    .map_err(|e| ctx.fail(&e))?;
    let bar = Progress::bar(&ctx.out, total.max(0) as u64, "exporting", "messages");
    let filter = ExportFilter {
        source: args.source.clone(),
        session_ids: window_ids(ctx, store, args)?,
    };
    let summary = store
        .export_jsonl(writer, &filter, &mut |done| bar.set_position(done))
        .map_err(|e| ctx.fail(&e))?;
    bar.finish();
    Ok((summary.sessions, summary.messages))
}

/// The sessions to export as JSON Lines: `--session`, narrowed to the
/// `--since` / `--until` window when one is given (`None`: every session).
fn window_ids(
    ctx: &Context,
    store: &dyn SessionStore,
    args: &ExportArgs,
) -> CliResult<Option<Vec<String>>> {
    if args.lineage
        && let Some(id) = &args.session
    {
        let chain = store
            .get_compression_lineage(id)
            .map_err(|e| ctx.fail(&e))?;
        return Ok(Some(chain));
    }
    if !args.window.is_set() {
        return Ok(args.session.clone().map(|id| vec![id]));
    }
    let in_window = sessions_started_in(store, args.source.as_deref(), args.window.bounds())
        .map_err(|e| ctx.fail(&e))?;
    Ok(Some(
        in_window
            .into_iter()
            .map(|s| s.id)
            .filter(|id| args.session.as_ref().is_none_or(|only| only == id))
            .collect(),
    ))
}

fn export_json(
    ctx: &Context,
    store: &dyn SessionStore,
    args: &ExportArgs,
    writer: &mut dyn Write,
) -> CliResult<(u64, u64)> {
    let pretty = ctx.out.stdout_tty && args.output.is_none();
    let spinner = Progress::spinner(&ctx.out, "exporting");
    let mut document = OriginalJsonWriter::new(writer, pretty)?;
    let mut output_error = None;
    // Sessions outside the window are walked past, not written.
    let mut writing = false;
    let mut take = |part: ExportPart| {
        if let ExportPart::Session(export) = &part {
            writing = args.window.contains(export.session.started_at);
        }
        if !writing {
            return ControlFlow::Continue(());
        }
        match document.part(part) {
            Ok(()) => ControlFlow::Continue(()),
            Err(error) => {
                output_error = Some(error);
                ControlFlow::Break(())
            }
        }
    };
    // One session: the original's `export_session` shape (no `last_active`).
    let walked = match &args.session {
        Some(id) => store.export_session_parts(id, &mut take).map(|_| ()),
        None => store
            .export_all_parts(args.source.as_deref(), &mut take)
            .map(|_| ()),
    };
    spinner.finish();
    if let Some(error) = output_error {
        return Err(error.into());
    }
    walked.map_err(|e| ctx.fail(&e))?;
    let summary = document.finish()?;
    Ok((summary.sessions, summary.messages))
}

/// A reader that moves a progress bar by the bytes read.
struct Counted<R> {
    inner: R,
    bar: Rc<Progress>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc_by(n as u64);
        Ok(n)
    }
}

/// `import`: the store is opened (and made when missing) only once the
/// file was found to be an export.
pub fn import(ctx: &Context, args: &ImportArgs) -> CliResult {
    let from_stdin = args.file == Path::new("-");
    if args.overwrite {
        let consent = Consent::new(args.consent.yes);
        if from_stdin && consent.must_ask() {
            return Err(CliError::usage(
                "import - --overwrite reads the export from stdin, so it cannot ask to confirm; pass --yes to go ahead",
            ));
        }
        consent.require(ctx)?;
        consent.ask(
            ctx,
            &format!(
                "replace every session of {} that {} also holds?",
                ctx.path.display(),
                args.file.display()
            ),
        )?;
    }
    let (reader, size): (Box<dyn Read>, Option<u64>) = if from_stdin {
        (Box::new(io::stdin().lock()), None)
    } else {
        let file = files::open_input(ctx, &args.file)?;
        let meta = file
            .metadata()
            .map_err(|e| CliError::io("cannot read", &args.file, &e))?;
        (Box::new(file), Some(meta.len()))
    };
    let shown = if from_stdin {
        "stdin".to_owned()
    } else {
        args.file.display().to_string()
    };
    let not_an_export = |why: String| {
        CliError::failed(format!(
            "import: {shown} is not a hermes-state export: {why}"
        ))
        .hint("import reads what `hermes-state export` writes (--format json or jsonl)")
    };
    let bar = Rc::new(match size {
        Some(size) => Progress::bytes(&ctx.out, size, "importing"),
        None => Progress::spinner(&ctx.out, "importing"),
    });
    let reader = BufReader::new(Counted {
        inner: reader,
        bar: Rc::clone(&bar),
    });
    // The format is settled before the store is opened, so a wrong file creates nothing.
    let mut jsonl = detect_format(reader, &args.file).map_err(|e| match e {
        Detect::Io(error) => error,
        Detect::Invalid(why) => not_an_export(why),
    })?;
    let store = ctx.open(Access::Create)?;
    let options = ImportOptions {
        overwrite_existing: args.overwrite,
    };
    let imported = store.import_jsonl(&mut jsonl, &options, &mut |_| {});
    bar.finish();
    // Not `start_writing` before the import: the library validates each
    // batch before its first write, so a refused export leaves an older
    // file as it was; what an upgrade did is told afterwards.
    ctx.tell_upgrade(store.as_ref());
    let report = imported.map_err(|e| {
        if e.kind() == hermes_state::ErrorKind::InvalidInput {
            not_an_export(e.to_string())
        } else {
            ctx.fail(&e)
        }
    })?;
    print_import_report(ctx, &shown, &report)
}

enum Detect {
    Io(CliError),
    Invalid(String),
}

/// What an import reads, as JSONL: the stream itself when its first line is
/// the header, or a `json` export (an array, or one session object) converted.
fn detect_format(
    mut reader: BufReader<impl Read + 'static>,
    path: &Path,
) -> Result<Box<dyn BufRead>, Detect> {
    let first = loop {
        let buffer = reader
            .fill_buf()
            .map_err(|e| Detect::Io(CliError::io("cannot read", path, &e)))?;
        if buffer.is_empty() {
            return Err(Detect::Invalid("the file is empty".to_owned()));
        }
        let skip = buffer
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        if skip == 0 {
            break buffer[0];
        }
        reader.consume(skip);
    };
    if first == b'[' {
        return read_json(&mut reader, Vec::new(), path);
    }
    if first != b'{' {
        return Err(Detect::Invalid(format!(
            "it is not JSON (it starts with {}); an export starts with `{{` (JSONL, or one session) or `[`",
            describe_byte(first)
        )));
    }
    // The first line: the JSONL header, or the start of one JSON object.
    // Read no further than an import reads a line (a stream without line
    // ends must not fill the memory): a header is short, and a longer first
    // line can only be a JSON document (one session's export, compact).
    let mut line = Vec::new();
    let limit = u64::try_from(IMPORT_LINE_LIMIT).unwrap_or(u64::MAX);
    (&mut reader)
        .take(limit + 1)
        .read_until(b'\n', &mut line)
        .map_err(|e| Detect::Io(CliError::io("cannot read", path, &e)))?;
    let header: Option<Map<String, Value>> = std::str::from_utf8(&line)
        .ok()
        .filter(|text| text.trim_end().len() <= IMPORT_LINE_LIMIT)
        .and_then(|text| serde_json::from_str(text.trim()).ok());
    if header
        .as_ref()
        .and_then(|h| h.get("format"))
        .is_some_and(|f| f == EXPORT_FORMAT)
    {
        let version = header.as_ref().and_then(|h| h.get("version")).cloned();
        if version.as_ref().and_then(Value::as_i64) != Some(EXPORT_FORMAT_VERSION) {
            return Err(Detect::Invalid(format!(
                "unsupported export version {} (this tool reads version {EXPORT_FORMAT_VERSION})",
                version.unwrap_or(Value::Null)
            )));
        }
        let stream = io::Cursor::new(line).chain(reader);
        return Ok(Box::new(stream));
    }
    read_json(&mut reader, line, path)
}

/// A byte as a person reads it: `'h'`, or `byte 0x00`.
fn describe_byte(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("{:?}", char::from(byte))
    } else {
        format!("byte 0x{byte:02x}")
    }
}

/// The largest `json` export read (1 GiB): that format is one document,
/// held whole to be converted; a larger one, or an endless stream on stdin,
/// is refused before it fills the memory (the JSONL format is read line by
/// line, each line bounded by `IMPORT_LINE_LIMIT`).
const JSON_DOCUMENT_LIMIT: u64 = 1 << 30;

/// The rest of a `json` export after `start`, read by the library's
/// `import_sessions` rules as JSONL.
fn read_json(
    reader: &mut impl Read,
    start: Vec<u8>,
    path: &Path,
) -> Result<Box<dyn BufRead>, Detect> {
    let mut bytes = start;
    let room = JSON_DOCUMENT_LIMIT.saturating_sub(bytes.len() as u64);
    reader
        .take(room + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Detect::Io(CliError::io("cannot read", path, &e)))?;
    if bytes.len() as u64 > JSON_DOCUMENT_LIMIT {
        return Err(Detect::Invalid(format!(
            "a `json` export larger than {} GiB is not read (it is held whole); export with --format jsonl, which is read line by line",
            JSON_DOCUMENT_LIMIT >> 30
        )));
    }
    let document = serde_json::from_slice(&bytes).map_err(|e| Detect::Invalid(e.to_string()))?;
    original_json_to_jsonl(document, crate::clock::now())
        .map(|lines| Box::new(io::Cursor::new(lines)) as Box<dyn BufRead>)
        .map_err(|e| Detect::Invalid(e.to_string()))
}

fn print_import_report(ctx: &Context, source: &str, report: &ImportReport) -> CliResult {
    let out = &ctx.out;
    if out.json {
        let conflicts: Vec<Value> = report
            .title_conflicts
            .iter()
            .map(|(id, title)| json!({"session_id": id, "title": title}))
            .collect();
        return out.json(&json!({
            "imported": report.imported,
            "replaced": report.replaced,
            "skipped_existing": report.skipped_existing,
            "messages": report.messages,
            "renumbered_messages": report.renumbered_messages,
            "orphaned": report.orphaned,
            "title_conflicts": conflicts,
            "dropped_columns": report.dropped_columns,
        }));
    }
    let mut lines = vec![format!(
        "imported {} session(s), {} message(s) from {source} into {}",
        count(report.imported as i64),
        count(report.messages as i64),
        ctx.path.display()
    )];
    if !report.skipped_existing.is_empty() {
        lines.push(format!(
            "  skipped {} session(s) the store already has (--overwrite replaces them): {}",
            report.skipped_existing.len(),
            list(&report.skipped_existing)
        ));
    }
    if !report.replaced.is_empty() {
        lines.push(format!(
            "  replaced {} existing session(s): {}",
            report.replaced.len(),
            list(&report.replaced)
        ));
    }
    if report.renumbered_messages > 0 {
        lines.push(format!(
            "  {} message(s) got new ids (theirs were taken)",
            report.renumbered_messages
        ));
    }
    if !report.orphaned.is_empty() {
        lines.push(format!(
            "  {} session(s) imported without their missing parent: {}",
            report.orphaned.len(),
            list(&report.orphaned)
        ));
    }
    for (id, title) in &report.title_conflicts {
        lines.push(format!(
            "  session {id} imported untitled: the title {title:?} is taken"
        ));
    }
    if !report.dropped_columns.is_empty() {
        lines.push(format!(
            "  columns this store does not have were dropped: {}",
            report.dropped_columns.join(", ")
        ));
    }
    if out.quiet {
        return Ok(());
    }
    out.line(lines.join("\n"))
}

fn list(ids: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(", … ({} more)", ids.len() - SHOWN));
    }
    text
}
