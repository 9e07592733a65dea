//! The command line, as clap derive types. The spellings of commands and
//! options here are a contract: scripts call them.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use crate::row_format::RowFormat;
use crate::time_window::TimeWindow;

/// A store's location as typed (`--database-url`, `migrate-to URL`): it
/// may hold a password, so `Debug` never shows it; it is read only by
/// `StoreLocation::parse`, whose redacted form is what is ever printed.
#[derive(Clone)]
pub struct LocationText(String);

impl LocationText {
    /// The text, to parse.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for LocationText {
    type Err = std::convert::Infallible;
    fn from_str(text: &str) -> Result<LocationText, Self::Err> {
        Ok(LocationText(text.to_owned()))
    }
}

impl From<&str> for LocationText {
    fn from(text: &str) -> LocationText {
        LocationText(text.to_owned())
    }
}

impl std::fmt::Debug for LocationText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocationText(not shown)")
    }
}

/// Look inside a Hermes Agent session store (state.db): find a conversation,
/// read it, export it, trim old sessions, check the file is healthy.
#[derive(Debug, Parser)]
#[command(
    name = "hermes-state",
    version,
    propagate_version = true,
    after_help = "The store is $HERMES_HOME/state.db, else ~/.hermes/state.db, unless --db is given.\n\
                  New here? `hermes-state --db demo.db demo` creates a sample store to try every command on."
)]
pub struct Cli {
    /// The store to use [default: $HERMES_HOME/state.db, else ~/.hermes/state.db]
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// The store as a database URL: postgres://USER@HOST/DB?schema=NAME, or sqlite:PATH
    #[arg(
        long,
        global = true,
        value_name = "URL",
        env = "HERMES_STATE_DATABASE_URL",
        conflicts_with = "db",
        hide_env_values = true
    )]
    pub database_url: Option<LocationText>,

    /// Machine output: one JSON document (JSON Lines for streams), the library's field names
    #[arg(long, global = true)]
    pub json: bool,

    /// Open the store read-only: nothing is created, migrated or written
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Print only the results: no confirmations, notes or progress bars
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say more on stderr (which file was opened, what the open did)
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,

    /// Human times (and dates given to --since/--until) in UTC instead of the local time zone
    #[arg(long, global = true)]
    pub utc: bool,

    /// Write to a store that was moved elsewhere (`migrate-to`) all the same;
    /// without it, writing commands refuse such a store, so two copies do not drift apart
    #[arg(long, global = true)]
    pub write_moved: bool,

    /// Which source the session argument `latest` means the newest session of
    #[arg(long, global = true, value_name = "SOURCE")]
    pub latest_source: Option<String>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List, read, create, end, delete sessions
    #[command(subcommand, visible_alias = "session")]
    Sessions(SessionsCommand),
    /// Append messages to a session, list its raw message rows
    #[command(subcommand, visible_alias = "message")]
    Messages(MessagesCommand),
    /// Set, read and resolve session titles
    #[command(subcommand)]
    Title(TitleCommand),
    /// Full-text search over every message (FTS5 syntax, CJK and substrings)
    Search(SearchArgs),
    /// Token and cost totals per model, and the biggest sessions
    Stats(StatsArgs),
    /// Export sessions with their messages (stdout unless --output)
    Export(ExportArgs),
    /// Import sessions from an export (JSON array or JSON Lines)
    Import(ImportArgs),
    /// Delete ended sessions older than N days or matching filters (children are kept, orphaned)
    Prune(Box<PruneArgs>),
    /// The agent's periodic upkeep: auto prune + vacuum, auto archive
    #[command(subcommand)]
    Maintenance(MaintenanceCommand),
    /// Check the file is healthy; --repair fixes what can be fixed
    Doctor(DoctorArgs),
    /// Write a consistent copy of the store to PATH (safe while agents run)
    Backup(BackupArgs),
    /// Optimise the FTS indexes and compact the file (VACUUM)
    Vacuum,
    /// Full-text index upkeep: rebuild it, or convert an old layout
    #[command(subcommand)]
    Fts(FtsCommand),
    /// Bring the store to the current schema version (or show what would change)
    Migrate(MigrateArgs),
    /// Copy the whole store to PostgreSQL (postgres://…) or back to a new SQLite file (sqlite:PATH), verified
    MigrateTo(MigrateToArgs),
    /// The schema: version, tables with row counts, FTS layout, journal mode
    Schema,
    /// Fill a fresh store with a short realistic sample to try every command on
    Demo(DemoArgs),
    /// Run one read-only SQL statement on the file (SELECT …) and print its rows
    Query(QueryArgs),
    /// Print where the store is: its file's absolute path, or its URL without the password
    #[command(visible_alias = "path")]
    Where,
    /// Print a shell completion script: `hermes-state completions bash > …`
    Completions(CompletionsArgs),
    /// Print the man page (roff): `hermes-state man | man -l -`
    Man,
}

/// `completions`
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The roles the agent writes; `--role` takes only these, so a typo
/// (`asistant`) is a usage error instead of an empty answer or a stray row.
pub const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

/// Asks before deleting unless `--yes` (see `confirm.rs`).
#[derive(Debug, Clone, Copy, Args)]
pub struct YesArg {
    /// Do not ask for confirmation (required when stdin is not a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `sessions …`
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Recent sessions, newest first, with a preview and the last activity
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// A session's metadata and its conversation (roles, tool calls, reasoning folded)
    Show(ShowArgs),
    /// Create a session and print its id
    Create(CreateArgs),
    /// End a live session with a reason (the first end wins)
    End(EndArgs),
    /// Make an ended session live again
    Reopen(IdArg),
    /// Delete sessions and their messages (delegate children too; other children are orphaned)
    #[command(visible_alias = "rm")]
    Delete(DeleteArgs),
    /// Delete every message of a session, keeping the session
    Clear(ClearArgs),
    /// The session's ancestors and descendants, as a tree
    Lineage(LineageArgs),
    /// Hide a session's whole compression lineage from the session picker
    Archive(IdArg),
    /// Show an archived compression lineage in the session picker again
    Unarchive(IdArg),
    /// Pin a session's whole compression lineage (auto archive leaves it alone)
    Pin(IdArg),
    /// Unpin a session's whole compression lineage
    Unpin(IdArg),
    /// Rewind a session to one of its user messages (it and every later message are hidden)
    Rewind(RewindArgs),
    /// Make rewound messages live again
    Restore(RestoreArgs),
}

/// `sessions delete`
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The session ids
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// The agent's transcript folder: `<id>.json`, `<id>.jsonl` and request dumps of deleted sessions go too
    #[arg(long, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
    /// Confirmation.
    #[command(flatten)]
    pub consent: YesArg,
}

/// `sessions clear`
#[derive(Debug, Args)]
pub struct ClearArgs {
    /// The session id
    pub id: String,
    /// Confirmation.
    #[command(flatten)]
    pub consent: YesArg,
}

/// `sessions rewind`
#[derive(Debug, Args)]
pub struct RewindArgs {
    /// The session id
    pub id: String,
    /// The user message to rewind to (it and every later live message are rewound)
    #[arg(long, value_name = "MESSAGE_ID")]
    pub to: i64,
}

/// `sessions restore`
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The session id
    pub id: String,
    /// Only rewound messages with this id or a later one [default: every rewound message]
    #[arg(long, value_name = "MESSAGE_ID")]
    pub since: Option<i64>,
}

/// `sessions lineage`
#[derive(Debug, Args)]
pub struct LineageArgs {
    /// The session id
    pub id: String,
    /// Output: table (the tree, default), json (= --json), jsonl or csv (one session per row, root first, with its relation)
    #[arg(long, value_enum)]
    pub format: Option<RowFormat>,
}

/// A session id.
#[derive(Debug, Args)]
pub struct IdArg {
    /// The session id
    pub id: String,
}

/// `sessions list`
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only sessions of this source (cli, telegram, discord, …)
    #[arg(long)]
    pub source: Option<String>,
    /// At most this many sessions (0: all)
    #[arg(long, default_value_t = 20, value_parser = parse_limit)]
    pub limit: u32,
    /// Skip this many sessions
    #[arg(long, default_value_t = 0)]
    pub offset: u32,
    /// Picker view: only sessions whose working directory is this folder or lies below it
    #[arg(long, value_name = "PREFIX")]
    pub cwd: Option<String>,
    /// Picker view: only archived sessions
    #[arg(long, conflicts_with = "include_archived")]
    pub archived: bool,
    /// Picker view: archived sessions too
    #[arg(long)]
    pub include_archived: bool,
    /// Picker view: only pinned sessions
    #[arg(long)]
    pub pinned: bool,
    /// Picker view: only sessions with at least N messages
    #[arg(long, value_name = "N")]
    pub min_messages: Option<i64>,
    /// Picker view: only sessions whose model contains this text (ASCII case-insensitive)
    #[arg(long, value_name = "SUBSTRING")]
    pub model: Option<String>,
    /// Picker view: compression continuations and delegate children too, each as itself
    #[arg(long)]
    pub children: bool,
    /// Output: table (default), json (= --json), jsonl (one session per line), csv (with a header)
    #[arg(long, value_enum)]
    pub format: Option<RowFormat>,
    /// Sessions started in this window
    #[command(flatten)]
    pub window: TimeWindow,
}

impl AppendArgs {
    /// `--role`, else `--role-any` (clap requires one of them).
    pub fn role(&self) -> &str {
        self.role
            .as_deref()
            .or(self.role_any.as_deref())
            .unwrap_or_default()
    }
}

impl SearchArgs {
    /// `--role` and `--role-any` together.
    pub fn roles(&self) -> Vec<String> {
        self.role.iter().chain(&self.role_any).cloned().collect()
    }
}

impl ListArgs {
    /// Whether a filter of the session picker (`list_sessions_rich`) was given.
    pub fn picker(&self) -> bool {
        self.cwd.is_some()
            || self.archived
            || self.include_archived
            || self.pinned
            || self.min_messages.is_some()
            || self.model.is_some()
            || self.children
    }
}

/// `sessions show`
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The session id (a title also works when no session has that id)
    pub id: String,
    /// Unfold the reasoning of assistant messages
    #[arg(long)]
    pub reasoning: bool,
    /// Do not shorten long tool results and arguments
    #[arg(long)]
    pub full: bool,
    /// Include rewound and compacted (inactive) messages
    #[arg(long)]
    pub all: bool,
    /// The whole compression chain (root to tip) as one conversation
    #[arg(long)]
    pub lineage: bool,
    /// Print straight to the terminal, not through $PAGER (less -FRX)
    #[arg(long)]
    pub no_pager: bool,
}

/// `sessions create`
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Where the session comes from (cli, telegram, discord, …)
    #[arg(long)]
    pub source: String,
    /// The id [default: a new one, YYYYMMDD_HHMMSS_xxxxxx]
    #[arg(long)]
    pub id: Option<String>,
    /// The model
    #[arg(long)]
    pub model: Option<String>,
    /// The platform user id
    #[arg(long)]
    pub user_id: Option<String>,
    /// The session this one continues (it must exist)
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
    /// The working directory
    #[arg(long)]
    pub cwd: Option<String>,
    /// A system prompt snapshot
    #[arg(long)]
    pub system_prompt: Option<String>,
}

/// `sessions end`
#[derive(Debug, Args)]
pub struct EndArgs {
    /// The session id
    pub id: String,
    /// Why it ended (user_exit, compression, timeout, …)
    #[arg(long)]
    pub reason: String,
}

/// `messages …`
#[derive(Debug, Subcommand)]
pub enum MessagesCommand {
    /// Append a message to a session and print its id
    Append(Box<AppendArgs>),
    /// The raw message rows of a session, in order
    #[command(visible_alias = "ls")]
    List(MessagesListArgs),
}

/// `messages append`
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// The session id
    pub id: String,
    /// system, user, assistant or tool (--role-any for another)
    #[arg(
        long,
        value_parser = PossibleValuesParser::new(ROLES),
        required_unless_present = "role_any",
        conflicts_with = "role_any"
    )]
    pub role: Option<String>,
    /// A role outside the four the agent writes, stored as given
    #[arg(long, value_name = "ROLE")]
    pub role_any: Option<String>,
    /// The content (else --content-file, else stdin when it is not a terminal)
    #[arg(long, conflicts_with = "content_file")]
    pub content: Option<String>,
    /// Read the content from this file (`-` for stdin)
    #[arg(long, value_name = "FILE")]
    pub content_file: Option<PathBuf>,
    /// The assistant's tool calls, as JSON (an array of {id, type, function})
    #[arg(long, value_name = "JSON", value_parser = parse_json)]
    pub tool_calls: Option<Value>,
    /// The tool's name, on a tool result
    #[arg(long)]
    pub tool_name: Option<String>,
    /// The call a tool result answers
    #[arg(long)]
    pub tool_call_id: Option<String>,
    /// Tokens of the message
    #[arg(long)]
    pub token_count: Option<i64>,
    /// Why generation stopped (stop, tool_calls, length, …)
    #[arg(long)]
    pub finish_reason: Option<String>,
    /// The reasoning text
    #[arg(long)]
    pub reasoning: Option<String>,
}

/// `messages list`
#[derive(Debug, Args)]
pub struct MessagesListArgs {
    /// The session id
    pub id: String,
    /// Include rewound and compacted (inactive) messages
    #[arg(long)]
    pub all: bool,
    /// At most this many messages (0: all, as without --limit)
    #[arg(long, value_parser = parse_limit)]
    pub limit: Option<u32>,
    /// Skip this many messages
    #[arg(long, default_value_t = 0)]
    pub offset: u32,
}

/// `title …`
#[derive(Debug, Subcommand)]
pub enum TitleCommand {
    /// Set a session's title (unique; an empty TITLE clears it)
    Set(TitleSetArgs),
    /// Print a session's title
    Get(IdArg),
    /// The session a title names (its newest numbered continuation, else its holder)
    Resolve(TitleArg),
    /// The next title of a lineage: X → X #2 → X #3
    Next(TitleArg),
}

/// `title set`
#[derive(Debug, Args)]
pub struct TitleSetArgs {
    /// The session id
    pub id: String,
    /// The title
    pub title: String,
}

/// A title.
#[derive(Debug, Args)]
pub struct TitleArg {
    /// The title
    pub title: String,
}

/// How search results are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortOrder {
    /// Best match first
    Relevance,
    /// Newest first
    Newest,
    /// Oldest first
    Oldest,
}

/// `search`
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// FTS5 syntax: words (all must match), "a phrase", OR, NOT, prefix*; CJK and substrings work too
    #[arg(
        default_value = "",
        hide_default_value = true,
        required_unless_present = "interactive"
    )]
    pub query: String,
    /// Search as you type in a terminal UI; the query, if given, is where it starts
    #[arg(short = 'i', long, conflicts_with_all = ["by_conversation", "format", "offset", "context"])]
    pub interactive: bool,
    /// Only sessions of this source (repeatable)
    #[arg(long)]
    pub source: Vec<String>,
    /// Not sessions of this source (repeatable)
    #[arg(long)]
    pub exclude_source: Vec<String>,
    /// Only messages of this role: system, user, assistant, tool (repeatable)
    #[arg(long, value_parser = PossibleValuesParser::new(ROLES))]
    pub role: Vec<String>,
    /// Only messages of this role, any name (repeatable; adds to --role)
    #[arg(long, value_name = "ROLE")]
    pub role_any: Vec<String>,
    /// At most this many results (0: all)
    #[arg(long, default_value_t = 20, value_parser = parse_limit)]
    pub limit: u32,
    /// Skip this many results
    #[arg(long, default_value_t = 0)]
    pub offset: u32,
    /// The order of the results
    #[arg(long, value_enum, default_value_t = SortOrder::Relevance)]
    pub sort: SortOrder,
    /// Also find rewound messages
    #[arg(long)]
    pub include_inactive: bool,
    /// Show the message before and after each hit
    #[arg(long)]
    pub context: bool,
    /// Only this session's compression lineage (id, prefix, title or `latest`)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// With --session: only that session, not the rest of its lineage
    #[arg(long, requires = "session")]
    pub segment_only: bool,
    /// Messages sent in this window
    #[command(flatten)]
    pub window: TimeWindow,
    /// One result per conversation (a session and its compression continuations): best hit, title, hits, time span; --limit/--offset count conversations
    #[arg(long)]
    pub by_conversation: bool,
    /// Output: table (default), json (= --json), jsonl (one hit per line), csv (with a header)
    #[arg(long, value_enum)]
    pub format: Option<RowFormat>,
}

/// `stats`
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// How many of the biggest sessions to show
    #[arg(long, default_value_t = 10)]
    pub top: u32,
    /// Sessions started in this window
    #[command(flatten)]
    pub window: TimeWindow,
    /// Output: table (default), json (= --json: the whole report), jsonl or csv (the rows of --rows)
    #[arg(long, value_enum)]
    pub format: Option<RowFormat>,
    /// Which rows: per model [default for jsonl/csv], per model and task, or the top sessions; in a table, only that section
    #[arg(long, value_enum)]
    pub rows: Option<crate::commands::stats::StatsRows>,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One JSON array
    Json,
    /// One session per line (JSON Lines)
    Jsonl,
    /// One conversation as Markdown (needs --session)
    Markdown,
}

/// `export`
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Only this session
    #[arg(long, value_name = "ID", conflicts_with = "source")]
    pub session: Option<String>,
    /// Only sessions of this source
    #[arg(long)]
    pub source: Option<String>,
    /// json (one array), jsonl (one session per line) or markdown (one conversation, with --session)
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// With --session: its whole compression chain, root to tip (markdown: one document per segment)
    #[arg(long, requires = "session")]
    pub lineage: bool,
    /// Write to this file instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Sessions started in this window
    #[command(flatten)]
    pub window: TimeWindow,
}

/// `import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// An export: JSON Lines (lossless), or a JSON array of sessions or one session object
    /// (read by the original's import_sessions rules) (`-` for stdin)
    pub file: PathBuf,
    /// Replace sessions the store already has (by default they are skipped)
    #[arg(long)]
    pub overwrite: bool,
    /// Confirmation of --overwrite.
    #[command(flatten)]
    pub consent: YesArg,
}

/// `prune`
#[derive(Debug, Clone, Args)]
pub struct PruneArgs {
    /// Ended sessions that started more than this many days ago
    #[arg(
        long,
        value_name = "N",
        required_unless_present_any = ["any_age", "started_before", "since", "until"],
        conflicts_with_all = ["any_age", "until"]
    )]
    pub older_than_days: Option<u32>,
    /// No age bound: every ended session the other filters match
    #[arg(long)]
    pub any_age: bool,
    /// Only sessions of this source
    #[arg(long)]
    pub source: Option<String>,
    /// Only show what would be deleted
    #[arg(long)]
    pub dry_run: bool,
    /// The agent's transcript folder: `<id>.json`, `<id>.jsonl` and request dumps of pruned sessions go too
    #[arg(long, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
    /// Confirmation (not needed with --dry-run).
    #[command(flatten)]
    pub consent: YesArg,
    /// Started before this time: Unix seconds or YYYY-MM-DD (local time; UTC with --utc); replaces --older-than-days
    #[arg(long, value_name = "WHEN", value_parser = crate::time_window::parse_when, conflicts_with = "older_than_days")]
    pub started_before: Option<f64>,
    /// Started after this time: Unix seconds or YYYY-MM-DD (local time; UTC with --utc)
    #[arg(long, value_name = "WHEN", value_parser = crate::time_window::parse_when)]
    pub started_after: Option<f64>,
    /// The title contains this text (ASCII case-insensitive)
    #[arg(long, value_name = "TEXT")]
    pub title_like: Option<String>,
    /// The end reason is this (compression, user_exit, …)
    #[arg(long, value_name = "REASON")]
    pub end_reason: Option<String>,
    /// The working directory is this folder or lies below it
    #[arg(long, value_name = "PREFIX")]
    pub cwd: Option<String>,
    /// At least N messages
    #[arg(long, value_name = "N")]
    pub min_messages: Option<i64>,
    /// At most N messages
    #[arg(long, value_name = "N")]
    pub max_messages: Option<i64>,
    /// Only archived sessions
    #[arg(long, conflicts_with = "not_archived")]
    pub archived: bool,
    /// Only sessions that are not archived
    #[arg(long)]
    pub not_archived: bool,
    /// The model contains this text (ASCII case-insensitive)
    #[arg(long, value_name = "TEXT")]
    pub model_like: Option<String>,
    /// The billing provider is this
    #[arg(long)]
    pub provider: Option<String>,
    /// The platform user id is this
    #[arg(long)]
    pub user_id: Option<String>,
    /// The chat id is this
    #[arg(long)]
    pub chat_id: Option<String>,
    /// The chat type is this (dm, group, …)
    #[arg(long)]
    pub chat_type: Option<String>,
    /// The git branch contains this text (ASCII case-insensitive)
    #[arg(long, value_name = "TEXT")]
    pub branch_like: Option<String>,
    /// At least N input + output tokens
    #[arg(long, value_name = "N")]
    pub min_tokens: Option<i64>,
    /// At most N input + output tokens
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<i64>,
    /// Cost (actual, else estimated) at least this many dollars
    #[arg(long, value_name = "USD", value_parser = parse_finite)]
    pub min_cost: Option<f64>,
    /// Cost (actual, else estimated) at most this many dollars
    #[arg(long, value_name = "USD", value_parser = parse_finite)]
    pub max_cost: Option<f64>,
    /// At least N tool calls
    #[arg(long, value_name = "N")]
    pub min_tool_calls: Option<i64>,
    /// At most N tool calls
    #[arg(long, value_name = "N")]
    pub max_tool_calls: Option<i64>,
    /// Sessions started in this window (`--until` replaces --older-than-days)
    #[command(flatten)]
    pub window: TimeWindow,
}

/// `maintenance …`
#[derive(Debug, Subcommand)]
pub enum MaintenanceCommand {
    /// Run the agent's periodic upkeep now, unless it ran recently: prune (+ vacuum), then archive idle sessions
    Auto(AutoArgs),
}

/// `maintenance auto` (defaults: the library's `AutoPruneOptions` / `AutoArchiveOptions`)
#[derive(Debug, Args)]
pub struct AutoArgs {
    /// Prune ended sessions started more than this many days ago
    #[arg(long, value_name = "DAYS", default_value_t = 90.0, value_parser = parse_finite)]
    pub retention_days: f64,
    /// Skip the prune if it last ran less than this many hours ago
    #[arg(long, value_name = "HOURS", default_value_t = 24.0, value_parser = parse_finite)]
    pub prune_interval_hours: f64,
    /// Do not VACUUM after a prune that removed something
    #[arg(long)]
    pub no_vacuum: bool,
    /// Archive sessions idle for more than this many days
    #[arg(long, value_name = "DAYS", default_value_t = 3.0, value_parser = parse_finite)]
    pub archive_idle_days: f64,
    /// Skip the archive if it last ran less than this many hours ago
    #[arg(long, value_name = "HOURS", default_value_t = 24.0, value_parser = parse_finite)]
    pub archive_interval_hours: f64,
    /// Archive idle pinned sessions too
    #[arg(long)]
    pub archive_pinned: bool,
    /// Do not prune
    #[arg(long)]
    pub no_prune: bool,
    /// Do not archive
    #[arg(long, conflicts_with = "no_prune")]
    pub no_archive: bool,
    /// The agent's transcript folder: transcripts of pruned sessions go too
    #[arg(long, value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
}

/// `doctor`
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Fix what can be fixed (FTS indexes, counters, …)
    #[arg(long)]
    pub repair: bool,
}

/// `query`
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The statement: one, and one that only reads (SELECT, WITH …, read-only PRAGMAs)
    pub sql: String,
    /// At most this many rows (0 = all)
    #[arg(long, default_value_t = 1000)]
    pub limit: usize,
}

/// `backup`
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// Where to write the copy (must not exist)
    pub path: PathBuf,
}

/// `fts …`
#[derive(Debug, Subcommand)]
pub enum FtsCommand {
    /// Re-index every message, in short transactions (agents may keep writing meanwhile)
    Rebuild,
    /// Convert a legacy (v11–v22) FTS layout to the v23 one and finish pending backfills
    /// (also creates or rebuilds the CJK index: every other writer then needs its tokenizer)
    OptimizeStorage(OptimizeStorageArgs),
    /// Create or rebuild the optional CJK index (every other writer of the file then needs
    /// the cjk_unicode61 tokenizer; a Hermes without it disables the index again)
    RebuildCjk,
}

/// `fts optimize-storage`
#[derive(Debug, Args)]
pub struct OptimizeStorageArgs {
    /// VACUUM afterwards to give the freed space back
    #[arg(long)]
    pub vacuum: bool,
}

/// `migrate`
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// Only report what would change; the file is opened read-only
    #[arg(long)]
    pub dry_run: bool,
}

/// `migrate-to`
#[derive(Debug, Args)]
pub struct MigrateToArgs {
    /// Where to: postgres://USER@HOST/DB?schema=NAME (from a SQLite store), or sqlite:PATH (from PostgreSQL)
    #[arg(value_name = "URL")]
    pub target: LocationText,
}

/// `demo`
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Add the sample even if the store already has sessions (the sample's own sessions are replaced)
    #[arg(long)]
    pub force: bool,
}

/// `--limit N`: `0` means no limit (every row), as in sqlite-utils and
/// `llm logs`; it becomes `u32::MAX`, which every backend reads as a limit
/// no store reaches.
fn parse_limit(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Ok(u32::MAX),
        Ok(limit) => Ok(limit),
        Err(e) => Err(format!("expected a whole number, 0 for all ({e})")),
    }
}

fn parse_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))
}

/// A finite number (`inf` and `NaN` are refused here, not by the library).
fn parse_finite(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err("expected a finite number".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_limit_of_zero_means_all() {
        assert_eq!(parse_limit("0"), Ok(u32::MAX));
        assert_eq!(parse_limit("7"), Ok(7));
        assert!(parse_limit("-1").is_err());
        let parsed =
            Cli::try_parse_from(["hermes-state", "search", "x", "--limit", "0"]).expect("valid");
        let Command::Search(args) = parsed.command else {
            panic!("not a search");
        };
        assert_eq!(args.limit, u32::MAX);
    }

    #[test]
    fn prune_times_take_the_time_window_shapes() {
        let parse_time = crate::time_window::parse_when;
        assert_eq!(parse_time("1700000000.5"), Ok(1_700_000_000.5));
        assert_eq!(parse_time("1970-01-01"), Ok(0.0));
        assert_eq!(parse_time("2000-03-01"), Ok(951_868_800.0));
        assert_eq!(parse_time("2026-07-24"), Ok(1_784_851_200.0));
        assert!(parse_time("2025-02-29").is_err());
        assert!(parse_time("the day before").is_err());
        assert!(parse_time("inf").is_err());
    }
}
