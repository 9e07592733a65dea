//! The original's public methods with their parameters, so a binding can
//! offer the same names, positions and defaults.

/// One public method of the original's `SessionDB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// The method's name.
    pub name: &'static str,
    /// Its parameters after `self`, in Python's syntax (`session_id, source, model=None, *, limit=20`).
    pub parameters: &'static str,
    /// A `@staticmethod` of the original (no `self`).
    pub is_static: bool,
}

/// Every public method of the original's `SessionDB` at schema 23, in its order.
pub const SIGNATURES: &[Signature] = &[
    Signature {
        name: "close",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "fts_rebuild_status",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "fts_rebuild_step",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "fts_cjk_rebuild_status",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "fts_cjk_rebuild_step",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "fts_optimize_available",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "optimize_fts_storage",
        parameters: "*, progress_cb=None, vacuum=True",
        is_static: false,
    },
    Signature {
        name: "create_session",
        parameters: "session_id, source, **kwargs",
        is_static: false,
    },
    Signature {
        name: "record_gateway_session_peer",
        parameters: "session_id, *, source, user_id=None, session_key=None, chat_id=None, chat_type=None, thread_id=None, display_name=None, origin_json=None",
        is_static: false,
    },
    Signature {
        name: "set_expiry_finalized",
        parameters: "session_id, finalized=True",
        is_static: false,
    },
    Signature {
        name: "save_gateway_routing_entry",
        parameters: "session_key, entry_json, *, scope=''",
        is_static: false,
    },
    Signature {
        name: "replace_gateway_routing_entries",
        parameters: "entries, *, scope=''",
        is_static: false,
    },
    Signature {
        name: "load_gateway_routing_entries",
        parameters: "*, scope=''",
        is_static: false,
    },
    Signature {
        name: "delete_gateway_routing_entries",
        parameters: "session_keys, *, scope=''",
        is_static: false,
    },
    Signature {
        name: "list_gateway_sessions",
        parameters: "*, platform=None, active_only=True",
        is_static: false,
    },
    Signature {
        name: "find_session_by_origin",
        parameters: "*, platform, chat_id, thread_id=None, user_id=None",
        is_static: false,
    },
    Signature {
        name: "find_latest_gateway_session_for_peer",
        parameters: "*, source, user_id=None, session_key=None, chat_id=None, chat_type=None, thread_id=None",
        is_static: false,
    },
    Signature {
        name: "end_session",
        parameters: "session_id, end_reason",
        is_static: false,
    },
    Signature {
        name: "reopen_session",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "promote_to_session_reset",
        parameters: "session_id, reason='session_reset'",
        is_static: false,
    },
    Signature {
        name: "update_session_cwd",
        parameters: "session_id, cwd, git_branch=None, git_repo_root=None",
        is_static: false,
    },
    Signature {
        name: "backfill_repo_roots",
        parameters: "cwd_to_root",
        is_static: false,
    },
    Signature {
        name: "record_compression_failure_cooldown",
        parameters: "session_id, cooldown_until, error=None",
        is_static: false,
    },
    Signature {
        name: "get_compression_failure_cooldown",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "clear_compression_failure_cooldown",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "get_compression_fallback_streak",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "set_compression_fallback_streak",
        parameters: "session_id, streak",
        is_static: false,
    },
    Signature {
        name: "get_compression_ineffective_count",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "set_compression_ineffective_count",
        parameters: "session_id, count",
        is_static: false,
    },
    Signature {
        name: "refresh_compression_lock",
        parameters: "session_id, holder, ttl_seconds=300.0",
        is_static: false,
    },
    Signature {
        name: "try_acquire_compression_lock",
        parameters: "session_id, holder, ttl_seconds=300.0",
        is_static: false,
    },
    Signature {
        name: "release_compression_lock",
        parameters: "session_id, holder",
        is_static: false,
    },
    Signature {
        name: "get_compression_lock_holder",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "update_session_meta",
        parameters: "session_id, model_config_json, model=None",
        is_static: false,
    },
    Signature {
        name: "update_system_prompt",
        parameters: "session_id, system_prompt",
        is_static: false,
    },
    Signature {
        name: "update_session_model",
        parameters: "session_id, model",
        is_static: false,
    },
    Signature {
        name: "update_session_billing_route",
        parameters: "session_id, *, provider, base_url, billing_mode=None",
        is_static: false,
    },
    Signature {
        name: "update_token_counts",
        parameters: "session_id, input_tokens=0, output_tokens=0, model=None, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, estimated_cost_usd=None, actual_cost_usd=None, cost_status=None, cost_source=None, pricing_version=None, billing_provider=None, billing_base_url=None, billing_mode=None, api_call_count=0, absolute=False",
        is_static: false,
    },
    Signature {
        name: "ensure_session",
        parameters: "session_id, source='unknown', model=None, **kwargs",
        is_static: false,
    },
    Signature {
        name: "record_auxiliary_usage",
        parameters: "session_id, task, *, model=None, billing_provider=None, billing_base_url=None, input_tokens=0, output_tokens=0, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, estimated_cost_usd=None",
        is_static: false,
    },
    Signature {
        name: "prune_empty_ghost_sessions",
        parameters: "sessions_dir=None",
        is_static: false,
    },
    Signature {
        name: "finalize_orphaned_compression_sessions",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "get_session",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "resolve_session_id",
        parameters: "session_id_or_prefix",
        is_static: false,
    },
    Signature {
        name: "sanitize_title",
        parameters: "title",
        is_static: true,
    },
    Signature {
        name: "set_session_title",
        parameters: "session_id, title",
        is_static: false,
    },
    Signature {
        name: "set_auto_title_if_empty",
        parameters: "session_id, title",
        is_static: false,
    },
    Signature {
        name: "get_session_title",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "set_session_archived",
        parameters: "session_id, archived",
        is_static: false,
    },
    Signature {
        name: "set_session_pinned",
        parameters: "session_id, pinned",
        is_static: false,
    },
    Signature {
        name: "get_session_by_title",
        parameters: "title",
        is_static: false,
    },
    Signature {
        name: "resolve_session_by_title",
        parameters: "title",
        is_static: false,
    },
    Signature {
        name: "get_next_title_in_lineage",
        parameters: "base_title",
        is_static: false,
    },
    Signature {
        name: "get_compression_tip",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "distinct_session_cwds",
        parameters: "include_archived=False",
        is_static: false,
    },
    Signature {
        name: "list_sessions_rich",
        parameters: "source=None, exclude_sources=None, cwd_prefix=None, limit=20, offset=0, include_children=False, min_message_count=0, project_compression_tips=True, order_by_last_active=False, include_archived=False, archived_only=False, id_query=None, search_query=None, compact_rows=False",
        is_static: false,
    },
    Signature {
        name: "list_cron_job_runs",
        parameters: "job_id, limit=20, offset=0",
        is_static: false,
    },
    Signature {
        name: "append_message",
        parameters: "session_id, role, content=None, tool_name=None, tool_calls=None, tool_call_id=None, token_count=None, finish_reason=None, reasoning=None, reasoning_content=None, reasoning_details=None, codex_reasoning_items=None, codex_message_items=None, platform_message_id=None, observed=False, effect_disposition=None, timestamp=None, api_content=None, display_kind=None, display_metadata=None",
        is_static: false,
    },
    Signature {
        name: "set_latest_matching_message_display_kind",
        parameters: "session_id, *, role, content, display_kind, display_metadata=None",
        is_static: false,
    },
    Signature {
        name: "replace_messages",
        parameters: "session_id, messages, active_only=False",
        is_static: false,
    },
    Signature {
        name: "has_archived_messages",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "archive_and_compact",
        parameters: "session_id, compacted_messages",
        is_static: false,
    },
    Signature {
        name: "set_latest_user_api_content",
        parameters: "session_id, content, api_content",
        is_static: false,
    },
    Signature {
        name: "get_messages",
        parameters: "session_id, include_inactive=False, limit=None, offset=0",
        is_static: false,
    },
    Signature {
        name: "get_messages_around",
        parameters: "session_id, around_message_id, window=5",
        is_static: false,
    },
    Signature {
        name: "get_anchored_view",
        parameters: "session_id, around_message_id, window=5, bookend=3, keep_roles=('user', 'assistant')",
        is_static: false,
    },
    Signature {
        name: "resolve_resume_session_id",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "get_messages_as_conversation",
        parameters: "session_id, include_ancestors=False, include_inactive=False, repair_alternation=False",
        is_static: false,
    },
    Signature {
        name: "get_resume_conversations",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "get_ancestor_display_prefix",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "get_conversation_root",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "rewind_to_message",
        parameters: "session_id, target_message_id",
        is_static: false,
    },
    Signature {
        name: "restore_rewound",
        parameters: "session_id, since_message_id",
        is_static: false,
    },
    Signature {
        name: "list_recent_user_messages",
        parameters: "session_id, limit=20, include_inactive=False",
        is_static: false,
    },
    Signature {
        name: "search_messages",
        parameters: "query, source_filter=None, exclude_sources=None, role_filter=None, limit=20, offset=0, sort=None, include_inactive=False",
        is_static: false,
    },
    Signature {
        name: "search_sessions_by_id",
        parameters: "query, limit=20, include_archived=True",
        is_static: false,
    },
    Signature {
        name: "search_sessions",
        parameters: "source=None, limit=20, offset=0",
        is_static: false,
    },
    Signature {
        name: "session_count",
        parameters: "source=None, cwd_prefix=None, min_message_count=0, include_archived=False, archived_only=False, exclude_children=False, exclude_sources=None",
        is_static: false,
    },
    Signature {
        name: "message_count",
        parameters: "session_id=None",
        is_static: false,
    },
    Signature {
        name: "has_platform_message_id",
        parameters: "session_id, platform_message_id",
        is_static: false,
    },
    Signature {
        name: "get_compression_lineage",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "export_session",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "export_session_lineage",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "export_all",
        parameters: "source=None",
        is_static: false,
    },
    Signature {
        name: "import_sessions",
        parameters: "sessions",
        is_static: false,
    },
    Signature {
        name: "clear_messages",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "delete_session",
        parameters: "session_id, sessions_dir=None",
        is_static: false,
    },
    Signature {
        name: "delete_session_if_empty",
        parameters: "session_id, sessions_dir=None",
        is_static: false,
    },
    Signature {
        name: "delete_sessions",
        parameters: "session_ids, sessions_dir=None",
        is_static: false,
    },
    Signature {
        name: "count_empty_sessions",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "delete_empty_sessions",
        parameters: "sessions_dir=None",
        is_static: false,
    },
    Signature {
        name: "list_prune_candidates",
        parameters: "older_than_days=None, source=None, **filters",
        is_static: false,
    },
    Signature {
        name: "archive_sessions",
        parameters: "older_than_days=None, source=None, **filters",
        is_static: false,
    },
    Signature {
        name: "archive_stale_sessions",
        parameters: "idle_days, *, exclude_pinned=True",
        is_static: false,
    },
    Signature {
        name: "prune_sessions",
        parameters: "older_than_days=90, source=None, sessions_dir=None, **filters",
        is_static: false,
    },
    Signature {
        name: "get_meta",
        parameters: "key",
        is_static: false,
    },
    Signature {
        name: "set_meta",
        parameters: "key, value, *, cursor=None",
        is_static: false,
    },
    Signature {
        name: "apply_telegram_topic_migration",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "enable_telegram_topic_mode",
        parameters: "*, chat_id, user_id, has_topics_enabled=None, allows_users_to_create_topics=None",
        is_static: false,
    },
    Signature {
        name: "disable_telegram_topic_mode",
        parameters: "*, chat_id, clear_bindings=True",
        is_static: false,
    },
    Signature {
        name: "is_telegram_topic_mode_enabled",
        parameters: "*, chat_id, user_id",
        is_static: false,
    },
    Signature {
        name: "get_telegram_topic_binding",
        parameters: "*, chat_id, thread_id",
        is_static: false,
    },
    Signature {
        name: "list_telegram_topic_bindings_for_chat",
        parameters: "*, chat_id",
        is_static: false,
    },
    Signature {
        name: "get_telegram_topic_binding_by_session",
        parameters: "*, session_id",
        is_static: false,
    },
    Signature {
        name: "delete_telegram_topic_binding",
        parameters: "*, chat_id, thread_id",
        is_static: false,
    },
    Signature {
        name: "bind_telegram_topic",
        parameters: "*, chat_id, thread_id, user_id, session_key, session_id, managed_mode='auto'",
        is_static: false,
    },
    Signature {
        name: "is_telegram_session_linked_to_topic",
        parameters: "*, session_id",
        is_static: false,
    },
    Signature {
        name: "list_unlinked_telegram_sessions_for_user",
        parameters: "*, chat_id, user_id, limit=10",
        is_static: false,
    },
    Signature {
        name: "optimize_fts",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "rebuild_fts",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "vacuum",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "maybe_auto_prune_and_vacuum",
        parameters: "retention_days=90, min_interval_hours=24, vacuum=True, sessions_dir=None",
        is_static: false,
    },
    Signature {
        name: "maybe_auto_archive",
        parameters: "idle_days=3, min_interval_hours=24, exclude_pinned=True",
        is_static: false,
    },
    Signature {
        name: "request_handoff",
        parameters: "session_id, platform",
        is_static: false,
    },
    Signature {
        name: "get_handoff_state",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "list_pending_handoffs",
        parameters: "",
        is_static: false,
    },
    Signature {
        name: "claim_handoff",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "complete_handoff",
        parameters: "session_id",
        is_static: false,
    },
    Signature {
        name: "fail_handoff",
        parameters: "session_id, error",
        is_static: false,
    },
];
