//! The runs of a cron job (`api.md` §10.4) on PostgreSQL, with the SQLite
//! backend's selection: `source = 'cron'` exactly, and an id in the
//! original's range `[cron_<job_id>_, cron_<job_id>`)` (`sessions.id` has
//! the `C` collation, so this is byte order: the ids starting with
//! `cron_<job_id>_`, case-sensitively).
