//! `doctor` on a PostgreSQL store: the backend's health check, printed in
//! the file doctor's shape; `--repair` recounts session counters, the one
//! repair PostgreSQL gets (docs/DECISIONS.md, "doctor --repair on
//! PostgreSQL").

use hermes_state::PostgresUrl;
use hermes_state::postgres::PgStore;
use hermes_state::postgres::health::{PgDoctorReport, TrigramIndex};
use serde_json::{Map, Value, json};

use crate::cli::DoctorArgs;
use crate::commands::to_json;
use crate::error::{CliError, CliResult};
use crate::progress::Progress;
use crate::render::pg_doctor;
use crate::store::{Access, Context};

/// `doctor [--repair]` on the store `url` names: exit 0 when healthy, 1
/// when problems are found (or remain after `--repair`).
pub fn doctor(ctx: &Context, url: &PostgresUrl, args: &DoctorArgs) -> CliResult {
    let out = &ctx.out;
    let path = ctx.path.display().to_string();
    let fail = |e: hermes_state::postgres::PgError| ctx.fail(&hermes_state::Error::from(e));
    let url = url.store_url();
    if args.repair {
        ctx.refuse_read_only(Access::Write)?;
    }
    // Read-only first: a missing store is an error, never created here.
    let reader = PgStore::open_read_only(url).map_err(fail)?;
    if !args.repair {
        let spinner = Progress::spinner(out, "checking the store");
        let report = reader.doctor().map_err(fail)?;
        spinner.finish();
        if out.json {
            out.json(&report_json(Some(&path), &report)?)?;
        } else {
            out.text(format!(
                "{}\n{}",
                out.bold(&path),
                indented(&pg_doctor::doctor_text(&report))
            ))?;
        }
        return if report.is_healthy() {
            Ok(())
        } else {
            Err(unhealthy(&path, &report, false))
        };
    }
    // The repair writes: not to a store that moved elsewhere, as on a file.
    ctx.refuse_moved(&reader)?;
    let store = PgStore::open(url).map_err(fail)?;
    let spinner = Progress::spinner(out, "recounting session counters");
    let fixed = store.repair_counters().map_err(fail)?;
    let after = store.doctor().map_err(fail)?;
    spinner.finish();
    if out.json {
        out.json(&json!({
            "path": path,
            "counters_fixed": to_json!(&fixed),
            "after": report_json(None, &after)?,
        }))?;
    } else {
        out.text(format!(
            "{}\n{}",
            out.bold(&format!("{path}: repaired")),
            indented(&pg_doctor::repair_text(&fixed, &after))
        ))?;
    }
    if after.is_healthy() {
        Ok(())
    } else {
        Err(unhealthy(&path, &after, true))
    }
}

fn unhealthy(path: &str, report: &PgDoctorReport, after_repair: bool) -> CliError {
    let n = report.problem_count();
    if after_repair {
        CliError::failed(format!("doctor --repair: {n} problem(s) remain in {path}"))
            .hint("on PostgreSQL --repair recounts session counters only; docs/POSTGRES.md (\"doctor\") says how to fix the rest by hand (take a `pg_dump --schema` first)")
    } else {
        CliError::failed(format!("doctor: {n} problem(s) found in {path}"))
            .hint("`hermes-state doctor --repair` recounts session counters; docs/POSTGRES.md (\"doctor\") covers the rest")
    }
}

/// The report as JSON: the file doctor's field names where they apply
/// (`path`, `healthy`, `problems`, `counters`, `dangling_parents`,
/// `orphaned_messages`, `cycles`, `duplicate_titles`), then the server's
/// own (`schema`, `steps`, `missing`, `wrong`, `trigram`, `rows_skipped`,
/// `superseded`).
fn report_json(path: Option<&str>, report: &PgDoctorReport) -> CliResult<Value> {
    let mut map = Map::new();
    if let Some(path) = path {
        map.insert("path".to_owned(), path.into());
    }
    map.insert("healthy".to_owned(), report.is_healthy().into());
    map.insert("problems".to_owned(), report.problem_count().into());
    if let Value::Object(fields) = to_json!(report) {
        map.extend(fields);
    }
    if let Some(moved) = &report.superseded {
        // The marker as parsed and redacted, as the text report shows it.
        map.insert(
            "superseded".to_owned(),
            json!({
                "by": hermes_state::StoreLocation::redact_text(&moved.by),
                "at": moved.at,
            }),
        );
    }
    let mut steps = to_json!(&report.steps);
    if let Value::Object(steps) = &mut steps {
        steps.insert("too_new".to_owned(), report.steps.too_new().into());
    }
    map.insert("steps".to_owned(), steps);
    let trigram = match &report.trigram {
        TrigramIndex::Present => json!({"present": true, "reason": null}),
        TrigramIndex::Absent(why) => json!({"present": false, "reason": why}),
    };
    map.insert("trigram".to_owned(), trigram);
    Ok(Value::Object(map))
}

fn indented(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}
