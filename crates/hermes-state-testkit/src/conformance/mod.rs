//! One conformance suite for every backend: the contract's cases, each a
//! plain function over a [`Backend`] that opens fresh stores, and
//! [`run_all`], which each backend crate's own tests call (the SQLite
//! store's in the facade's test binary, the PostgreSQL store's in the
//! PostgreSQL crate's), so no test binary links both backends (issue 25).
//!
//! Every case goes through `dyn SessionStore` only. Where the backends may
//! differ (ranking, snippet windows, what only a file has), the case says
//! so and asserts what both guarantee. Where a case compared the two
//! backends' answers with each other, it now compares each backend's
//! answers with the recorded reference ([`agreed`]): both equal the
//! reference, so they equal each other, without one binary holding both.
//!
//! To rerun one failing case alone, name it (module and function, as the
//! failure report prints it) in `HERMES_STATE_CONFORMANCE`; several
//! names are separated by commas.

// A case's name and the skip lines are printed on purpose: `cargo test`
// shows them with the failure.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hermes_state_core::SessionStore;
use hermes_state_core::clock::FixedClock;
use hermes_state_types::NewSession;
use serde_json::Value;

pub mod agreed;
mod raw;

// The cases: a module per subject, each case a function whose name is the
// sentence it checks (a doc comment where the name is not enough), reached
// through `CASES`, `run_all` and `run`.
mod accounting;
mod conversation_search;
mod conversation_views;
mod coordination;
mod cron_and_repo_roots;
mod delegations;
mod deletes;
mod handoff;
mod id_fragments_and_folders;
mod lineage;
mod lookups;
mod message_edits;
mod message_reads;
mod message_stamps;
mod message_writes;
mod original_errors;
mod originals_methods;
mod picker_rows;
mod prune;
mod prune_selection;
mod read_only;
mod rich_listing;
mod search;
mod search_scope;
mod session_count;
mod session_ref;
mod session_updates;
mod session_writes;
mod sessions;
mod stats;
mod sweeps;
mod telegram_topics;
mod time_window;
mod titles;
mod turns;

/// A backend as the suite sees it: a way to open fresh stores of it.
/// Each backend crate's tests implement it over their own store type.
pub trait Backend: Sync {
    /// The name its stores give (`SessionStore::backend_name`), for the
    /// report.
    fn name(&self) -> &'static str;

    /// A fresh, empty store, removed when the [`TestStore`] drops.
    fn open(&self) -> TestStore;

    /// [`Backend::open`] with a clock that `clock` gives for every time
    /// the store takes, so that those times can be asserted exactly and
    /// the case can move it between calls.
    fn open_clocked(&self, clock: Arc<FixedClock>) -> TestStore;

    /// [`Backend::open_clocked`] with a clock standing at `now`.
    fn open_at(&self, now: f64) -> TestStore {
        self.open_clocked(FixedClock::new(now))
    }
}

/// What a case may do to a store besides calling the contract: the raw
/// statements a case needs where the contract has no call (setting a
/// start time, reading a table's columns), a second, read-only handle, and
/// a second writer at another time.
/// Implemented by each backend crate's tests; it also owns what removes the
/// store (a temporary folder, a PostgreSQL schema).
pub trait Raw: Sync {
    /// Runs statements without parameters, written in SQL both servers
    /// accept (values inlined).
    fn exec(&self, sql: &str);

    /// The rows of one query, each column as JSON: NULL, an integer, a
    /// float or a text.
    fn query(&self, sql: &str) -> Vec<Vec<Value>>;

    /// A second handle on the same store, opened read-only.
    fn read_only(&self) -> Box<dyn SessionStore>;

    /// A second writable handle on the same store whose clock reads
    /// `now`, for cases whose writes happen at different times.
    fn writer_at(&self, now: f64) -> Box<dyn SessionStore>;
}

/// One fresh store of one backend, and raw access to it.
pub struct TestStore {
    /// The store, through the contract only.
    pub store: Box<dyn SessionStore>,
    // Dropped after `store`: it removes what the store lives in.
    raw: Box<dyn Raw>,
}

impl TestStore {
    /// A store and its raw access (which removes it when dropped).
    pub fn new(store: Box<dyn SessionStore>, raw: Box<dyn Raw>) -> TestStore {
        TestStore { store, raw }
    }

    /// `sqlite` or `postgres`: the store's own answer.
    pub fn name(&self) -> &'static str {
        self.store.backend_name()
    }

    /// See [`Raw::exec`].
    pub fn exec(&self, sql: &str) {
        self.raw.exec(sql);
    }

    /// See [`Raw::query`].
    pub fn query(&self, sql: &str) -> Vec<Vec<Value>> {
        self.raw.query(sql)
    }

    /// See [`Raw::read_only`].
    pub fn read_only(&self) -> Box<dyn SessionStore> {
        self.raw.read_only()
    }

    /// See [`Raw::writer_at`].
    pub fn writer_at(&self, now: f64) -> Box<dyn SessionStore> {
        self.raw.writer_at(now)
    }

    /// Sets a session's `started_at` raw (the contract has no call for
    /// it), so that orders do not hang on the clock.
    pub fn set_started(&self, id: &str, at: f64) {
        self.exec(&format!(
            "UPDATE sessions SET started_at = {} WHERE id = {}",
            real(at),
            text(id)
        ));
    }

    /// Creates a session and sets its `started_at`.
    ///
    /// # Panics
    /// When the store refuses it.
    pub fn add(&self, session: NewSession, started_at: f64) {
        let id = session.id.clone();
        self.store
            .create_session(&session)
            .expect("create a session");
        self.set_started(&id, started_at);
    }

    /// Columns of session `id`, read raw, each of its own JSON type (so an
    /// integer stored where a float belongs shows), after checking that
    /// `get_session` reads the same values.
    ///
    /// # Panics
    /// When the session does not exist or `get_session` reads otherwise.
    pub fn columns(&self, id: &str, columns: &[&str]) -> Vec<Value> {
        let sql = format!(
            "SELECT {} FROM sessions WHERE id = {}",
            columns.join(", "),
            text(id)
        );
        let raw = self.query(&sql).pop().expect("the session's row");
        let read = serde_json::to_value(self.store.get_session(id).unwrap().unwrap()).unwrap();
        for (column, value) in columns.iter().zip(&raw) {
            assert_eq!(&read[column], value, "{}: {column} of {id}", self.name());
        }
        raw
    }

    /// Marks one message inactive (as a rewind does), raw.
    pub fn deactivate(&self, message_id: i64) {
        self.exec(&format!(
            "UPDATE messages SET active = 0 WHERE id = {message_id}"
        ));
    }
}

impl std::ops::Deref for TestStore {
    type Target = dyn SessionStore;

    fn deref(&self) -> &Self::Target {
        self.store.as_ref()
    }
}

/// A float as an SQL literal both servers read as the same double
/// (Rust's shortest round-trip form, always with a `.` or an exponent).
fn real(value: f64) -> String {
    format!("{value:?}")
}

/// A text as an SQL string literal.
fn text(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// One case of the suite: its name (`module::function`) and its body.
#[derive(Clone, Copy)]
pub struct Case {
    /// `module::function`, as reports print it and
    /// `HERMES_STATE_CONFORMANCE` takes it.
    pub name: &'static str,
    /// The case; it panics on a failed assertion.
    pub run: fn(&dyn Backend),
}

macro_rules! cases {
    ($($module:ident::$case:ident),* $(,)?) => {
        &[$(Case {
            name: concat!(stringify!($module), "::", stringify!($case)),
            run: $module::$case,
        }),*]
    };
}

/// Every case of the suite, in the order reports list them.
pub const CASES: &[Case] = cases![
    accounting::token_counts_follow_the_measured_sequence_alike,
    accounting::auxiliary_usage_never_touches_the_session_counters_alike,
    conversation_search::a_compression_chain_collapses_to_one_conversation_titled_by_its_tip_alike,
    conversation_search::branches_delegates_tool_sessions_and_other_children_are_conversations_of_their_own_alike,
    conversation_search::limit_and_offset_count_conversations_and_hits_past_one_search_page_count_alike,
    conversation_search::queries_without_hits_or_that_cannot_be_parsed_find_no_conversation_alike,
    conversation_search::a_scope_keeps_only_its_sessions_and_time_window_in_every_count_alike,
    conversation_search::a_window_read_in_time_order_past_one_search_page_finds_every_hit_inside_alike,
    conversation_search::conversations_come_in_the_order_of_their_best_hits_alike,
    conversation_views::the_anchored_view_filters_its_window_and_adds_bookends_outside_it_alike,
    conversation_views::the_resume_repairs_the_model_history_as_the_original_alike,
    conversation_views::the_ancestor_prefix_is_the_display_history_of_the_ancestors_alike,
    conversation_views::tool_calls_that_are_no_list_fail_the_repair_as_pythons_type_error_alike,
    coordination::state_meta_is_written_and_replaced_alike,
    coordination::gateway_routing_entries_are_saved_loaded_and_deleted_per_scope_alike,
    coordination::compression_locks_are_held_refreshed_released_and_reclaimed_on_expiry_alike,
    cron_and_repo_roots::cron_runs_match_the_job_prefix_literally_and_case_sensitively_newest_first_alike,
    cron_and_repo_roots::messages_are_counted_per_exact_source_alike,
    cron_and_repo_roots::repo_roots_are_backfilled_only_where_missing_for_non_empty_pairs_alike,
    delegations::a_delegation_is_recorded_moved_and_finished_keeping_absent_json_alike,
    delegations::delegation_ids_are_required_and_unique_with_the_same_error_kinds_alike,
    delegations::delegations_are_listed_by_every_filter_in_dispatch_order_ties_by_byte_order_alike,
    delegations::delegations_outlive_their_sessions_through_delete_and_prune_alike,
    deletes::a_delete_takes_delegates_and_transcripts_and_orphans_other_children_alike,
    deletes::a_batch_delete_counts_the_sessions_that_existed_alike,
    deletes::only_an_untitled_childless_session_without_messages_is_deleted_if_empty_alike,
    deletes::empty_sessions_are_ended_unarchived_and_uncounted_and_go_with_stray_rows_alike,
    deletes::deletes_refuse_a_read_only_handle_alike,
    handoff::handoffs_move_through_the_same_states_alike,
    handoff::handoff_platforms_errors_and_order_and_a_reader_refusing_them_alike,
    lineage::ancestors_descendants_and_roots_walk_alike,
    lineage::next_titles_in_a_lineage_are_numbered_alike,
    lineage::a_compression_chain_exports_as_one_session_alike,
    lineage::a_lineage_exports_as_its_tip_with_every_segments_messages_alike,
    lookups::titles_and_id_prefixes_resolve_alike,
    lookups::compression_tips_roots_and_resumes_walk_alike,
    lookups::the_measured_lineage_example_walks_alike,
    lookups::message_windows_recent_user_turns_and_platform_ids_alike,
    message_edits::replace_and_compact_alike,
    message_edits::rewind_and_restore_alike,
    message_edits::rewind_targets_keep_tool_calls_as_text_and_string_content_previews_alike,
    message_reads::message_pages_skip_inactive_rows_and_page_alike,
    message_reads::negative_limits_offsets_and_windows_mean_what_they_mean_in_the_original_alike,
    message_reads::conversations_are_built_alike_with_and_without_ancestors,
    message_reads::conversations_are_the_originals_dicts_alike,
    message_reads::clearing_messages_zeroes_counters_and_keeps_the_rest_alike,
    message_writes::counters_ids_and_tool_calls_follow_the_measured_sequence_alike,
    message_writes::tool_calls_and_json_columns_are_stored_as_pythons_json_text_alike,
    message_writes::every_column_of_a_message_is_stored_and_read_back_alike,
    message_writes::an_append_to_an_ended_session_changes_only_its_counters_alike,
    message_writes::content_of_every_kind_reads_back_alike,
    coordination::replacing_a_routing_scope_drops_empty_pairs_keeps_the_last_duplicate_alike,
    lineage::compression_lineage_follows_the_original_alike,
    id_fragments_and_folders::working_directories_are_counted_with_their_last_activity_in_byte_order_alike,
    id_fragments_and_folders::sessions_are_found_by_id_fragment_ranked_as_the_original_alike,
    message_stamps::the_newest_live_user_row_gets_api_content_only_when_its_content_matches_alike,
    message_stamps::the_newest_live_matching_message_gets_the_display_kind_alike,
    sweeps::idle_sessions_are_archived_pinned_ones_only_when_asked_alike,
    coordination::a_gateway_peer_is_recorded_overwriting_the_tuple_and_keeping_absent_extras_alike,
    coordination::a_session_is_found_by_origin_preferring_the_user_and_refusing_ambiguity_alike,
    coordination::the_latest_recoverable_session_of_a_peer_is_found_by_key_then_by_peer_alike,
    coordination::gateway_sessions_list_the_newest_row_per_key_most_recent_first_alike,
    original_errors::failures_are_classed_as_the_originals_exceptions_alike,
    originals_methods::telegram_topic_bindings_are_made_refused_read_and_removed_alike,
    originals_methods::resume_and_anchored_views_read_a_lineage_alike,
    picker_rows::a_preview_is_the_first_user_message_on_one_line_of_sixty_characters_alike,
    picker_rows::children_show_only_when_asked_except_branches_alike,
    picker_rows::the_picker_filters_by_source_folder_count_archive_and_ids_alike,
    picker_rows::a_compressed_root_is_listed_as_its_tip_alike,
    picker_rows::the_chain_leaves_tool_and_branch_children_out_alike,
    prune::prune_selects_deletes_and_orphans_alike,
    prune_selection::every_prune_filter_selects_what_it_names_alike,
    prune_selection::candidates_dry_runs_prunes_and_archives_select_the_same_sessions_alike,
    prune_selection::the_measured_prune_store_lists_archives_and_reads_alike,
    prune_selection::a_folder_prefix_is_the_originals_like_in_listings_and_prunes_alike,
    prune_selection::idle_tips_are_archived_with_their_chains_as_the_automatic_archive_does_alike,
    read_only::the_new_writes_refuse_a_read_only_handle_alike,
    rich_listing::sessions_by_last_activity_and_empty_counts_alike,
    rich_listing::prune_candidates_list_and_archive_alike,
    rich_listing::picker_listing_filters_projects_and_orders_alike,
    search::the_same_queries_find_the_same_messages,
    search::filters_paging_snippets_and_context_agree,
    search::hits_carry_their_fields_and_neighbours_as_context_alike,
    search::ten_thousand_messages_are_found_by_every_kind_of_query_alike,
    search::a_cancellable_search_answers_as_the_search_or_cancelled_alike,
    search_scope::a_lineage_scope_is_the_whole_chain_or_one_segment_alike,
    search_scope::scoped_hits_are_counted_by_offset_and_limit_alike,
    session_count::session_count_takes_the_originals_filters_alike,
    session_ref::ids_latest_titles_and_prefixes_name_sessions_alike,
    session_ref::an_ambiguous_prefix_lists_one_more_candidate_than_it_shows_alike,
    session_ref::latest_in_an_empty_store_names_no_session_alike,
    session_updates::prompt_model_meta_route_and_cwd_updates_alike,
    session_updates::archive_and_pin_cover_the_compression_lineage_alike,
    session_updates::compression_bookkeeping_alike,
    session_writes::a_created_session_stores_every_field_and_default_alike,
    session_writes::a_second_create_fills_only_null_columns_never_source_user_or_start_alike,
    session_writes::model_config_is_pythons_json_text_and_a_falsy_one_null_alike,
    session_writes::a_child_inherits_workspace_fields_and_gateway_ones_only_after_a_compression_alike,
    session_writes::parent_ids_and_empty_ids_are_taken_as_the_original_takes_them_alike,
    session_writes::ensure_session_creates_with_its_source_and_fills_a_null_model_alike,
    session_writes::the_first_end_wins_until_a_reopen_alike,
    sessions::sessions_are_created_filled_ended_and_reopened_alike,
    sessions::a_store_names_its_backend_and_is_itself_as_any,
    sessions::messages_are_appended_counted_and_read_back_alike,
    sessions::titles_are_unique_move_down_a_compression_lineage_and_resolve_alike,
    sessions::listings_have_previews_last_activity_filters_and_pages_alike,
    sessions::deleting_takes_delegates_along_and_orphans_other_children_alike,
    sessions::a_read_only_handle_refuses_writes_alike,
    stats::model_totals_top_sessions_and_usage_attribution_alike,
    sweeps::an_end_is_promoted_to_a_session_reset_only_from_live_or_a_cleanup_alike,
    sweeps::only_week_old_silent_compression_continuations_with_messages_are_finalized_alike,
    sweeps::ghost_tui_sessions_go_with_their_transcripts_children_orphaned_alike,
    sweeps::the_automatic_archive_runs_once_per_interval_and_reports_errors_alike,
    sweeps::the_automatic_prune_runs_once_per_interval_postgresql_without_vacuum,
    sweeps::the_automatic_runs_keep_the_originals_float_text_and_wait_out_the_interval_alike,
    telegram_topics::the_telegram_topic_tables_are_created_on_request_only_alike,
    telegram_topics::no_call_before_the_opt_in_makes_a_table_and_enabling_keeps_the_activation_alike,
    telegram_topics::a_session_binds_to_one_topic_and_a_topic_to_one_session_alike,
    telegram_topics::deleting_the_last_binding_of_a_chat_turns_its_topic_mode_off_alike,
    telegram_topics::unlinked_sessions_are_the_users_telegram_sessions_without_a_topic_alike,
    time_window::the_sessions_of_a_window_are_read_newest_first_alike,
    time_window::a_window_of_every_session_reports_what_the_store_aggregates_alike,
    titles::titles_are_normalised_cleared_and_set_only_on_known_sessions_alike,
    titles::a_title_held_elsewhere_is_refused_in_any_spelling_and_case_counts_alike,
    titles::a_title_moves_down_a_compression_chain_only_alike,
    titles::long_titles_are_refused_and_automatic_titles_fill_only_untitled_sessions_alike,
    titles::lineage_titles_number_and_resolve_round_trip_alike,
    turns::ensuring_a_session_creates_it_once_and_only_fills_a_missing_model_alike,
    turns::an_automatic_title_is_set_and_checked_only_on_an_untitled_session_alike,
    turns::rewound_and_compacted_rows_show_as_archived_and_in_the_full_conversation_alike,
];

/// The variable naming the cases to run (comma-separated), to rerun
/// failures alone; every case runs when it is unset or empty.
pub const ONLY_VAR: &str = "HERMES_STATE_CONFORMANCE";

/// What a run did: the cases that ran and those that failed, with their
/// panic messages.
#[derive(Debug, Default)]
pub struct Report {
    /// The backend's name.
    pub backend: &'static str,
    /// Every case that ran, in [`CASES`] order.
    pub ran: Vec<&'static str>,
    /// The failed cases and why.
    pub failed: Vec<(&'static str, String)>,
}

/// Runs every case (or those [`ONLY_VAR`] names) on `backend`, each
/// isolated: a panic in one is caught and reported, the rest still run.
/// Cases run on up to four threads, as the test harness ran them.
///
/// # Panics
/// When a case fails, naming every failed case and why; when
/// [`ONLY_VAR`] names a case that does not exist.
pub fn run_all(backend: &dyn Backend) -> Report {
    let only = std::env::var(ONLY_VAR).unwrap_or_default();
    let chosen: Vec<&Case> = if only.trim().is_empty() {
        CASES.iter().collect()
    } else {
        only.split(',').map(|name| find(name.trim())).collect()
    };
    let report = run_cases(backend, &chosen);
    for name in &report.ran {
        let failed = report.failed.iter().any(|(failed, _)| failed == name);
        println!(
            "conformance on {}: {} {name}",
            report.backend,
            if failed { "FAILED" } else { "ok" }
        );
    }
    println!(
        "conformance on {}: {} cases ran, {} failed",
        report.backend,
        report.ran.len(),
        report.failed.len()
    );
    assert!(report.failed.is_empty(), "{}", failure_text(&report));
    report
}

/// Runs one case by name on `backend`, as [`run_all`] would.
///
/// # Panics
/// When it fails, or when no case has that name.
pub fn run(backend: &dyn Backend, name: &str) {
    let report = run_cases(backend, &[find(name)]);
    assert!(report.failed.is_empty(), "{}", failure_text(&report));
}

fn find(name: &str) -> &'static Case {
    CASES
        .iter()
        .find(|case| case.name == name)
        .unwrap_or_else(|| panic!("no conformance case is named {name:?}"))
}

fn run_cases(backend: &dyn Backend, cases: &[&Case]) -> Report {
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<Result<(), String>>>> = Mutex::new(vec![None; cases.len()]);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 4)
        .min(cases.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(index) else { break };
                    let outcome = catch_unwind(AssertUnwindSafe(|| (case.run)(backend)))
                        .map_err(|payload| panic_text(payload.as_ref()));
                    if let Err(why) = &outcome {
                        eprintln!(
                            "conformance case {} failed on {}: {why}",
                            case.name,
                            backend.name()
                        );
                    }
                    outcomes
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)[index] = Some(outcome);
                }
            });
        }
    });
    let mut report = Report {
        backend: backend.name(),
        ..Report::default()
    };
    let outcomes = outcomes
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (case, outcome) in cases.iter().zip(outcomes) {
        report.ran.push(case.name);
        if let Some(Err(why)) = outcome {
            report.failed.push((case.name, why));
        }
    }
    report
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else {
        "a panic without a message".to_owned()
    }
}

fn failure_text(report: &Report) -> String {
    let mut text = format!(
        "{} of {} conformance cases failed on {}:\n",
        report.failed.len(),
        report.ran.len(),
        report.backend
    );
    for (name, why) in &report.failed {
        text.push_str(&format!("- {name}: {why}\n"));
    }
    let names: Vec<&str> = report.failed.iter().map(|(name, _)| *name).collect();
    text.push_str(&format!(
        "rerun them alone with {ONLY_VAR}={}",
        names.join(",")
    ));
    text
}
