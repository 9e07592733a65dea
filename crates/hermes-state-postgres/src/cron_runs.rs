//! The runs of a cron job (`api.md` §10.4) on PostgreSQL, with the SQLite
//! backend's selection: `source = 'cron'` exactly, and an id starting with
//! `cron_<job_id>_` as SQLite's `LIKE` matches it — the job id's `%`, `_`
//! and `\` literal, ASCII case folded (`translate` on both sides).

use hermes_state_query::lookups::{SessionActivity, escape_like};

use crate::PgStore;
use crate::error::{Context, Result};
use crate::prune::{Conditions, fold_ascii};
use crate::rich_listing::{LAST_ACTIVE, activity_from_row};
use crate::rows::{SESSION_COLUMNS, select_list};

impl PgStore {
    /// `api.md` §10.4: the sessions of cron job `job_id`, newest start
    /// first (ties by id, descending), with `last_active`; `limit` rows
    /// after skipping `offset`.
    pub fn list_cron_job_runs(
        &self,
        job_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>> {
        let mut conditions = Conditions::default();
        conditions.push("s.source = 'cron'", vec![]);
        conditions.push(
            &format!(
                "{} LIKE {} ESCAPE '\\'",
                fold_ascii("s.id"),
                fold_ascii("{}")
            ),
            vec![Box::new(format!("cron\\_{}\\_%", escape_like(job_id)))],
        );
        let (limit, offset) = (i64::from(limit), i64::from(offset));
        let n = conditions.params().len();
        let sql = format!(
            "SELECT {columns}, {LAST_ACTIVE} AS last_active FROM sessions s{where_clause}
             ORDER BY s.started_at DESC, s.id DESC LIMIT ${limit_n} OFFSET ${offset_n}",
            columns = select_list("s", &SESSION_COLUMNS),
            where_clause = conditions.where_clause(),
            limit_n = n + 1,
            offset_n = n + 2,
        );
        self.read(|tx| {
            let mut params = conditions.params();
            params.push(&limit);
            params.push(&offset);
            Ok(tx
                .query(&sql, &params)
                .context("listing cron job runs")?
                .iter()
                .map(activity_from_row)
                .collect())
        })
    }
}
