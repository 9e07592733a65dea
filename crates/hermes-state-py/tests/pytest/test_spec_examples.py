"""The specification's examples (docs/spec/api.md), made through Python.

Each test is one worked example of api.md, so a value that crosses the
boundary wrongly (an int that came back a float, a dict's key order, a
tuple, None) shows here as it would to the agent.
"""

import sqlite3

import pytest

# api.md §6.1, the table of sanitize_title.
SANITIZE_EXAMPLES = [
    ("  Hello   World  ", "Hello World"),
    ("a\tb\nc\rd", "a b c d"),
    ("x\x00y\x07z\x1b\x7f", "xyz"),
    ("zero\u200bwidth\u202eRTL\ufeffBOM\u2066iso\u2069", "zerowidthRTLBOMiso"),
    ("nb\u00a0sp", "nb sp"),
    ("ctl\x85nel", "ctl nel"),
    ("   ", None),
    ("", None),
    (None, None),
    ("a" * 100, "a" * 100),
    ("😀" * 100, "😀" * 100),
    (" " + "b" * 100 + " ", "b" * 100),
]


@pytest.mark.parametrize(("title", "expected"), SANITIZE_EXAMPLES)
def test_sanitize_title_is_static_and_answers_as_the_spec(title, expected):
    from hermes_state_rs import SessionDB

    assert SessionDB.sanitize_title(title) == expected


@pytest.mark.parametrize("title", ["a" * 101, "😀" * 101])
def test_a_title_over_100_characters_is_a_value_error(title):
    from hermes_state_rs import SessionDB

    with pytest.raises(ValueError, match=r"^Title too long \(101 chars, max 100\)$"):
        SessionDB.sanitize_title(title)


def test_a_non_string_title_is_a_type_error():
    from hermes_state_rs import SessionDB

    with pytest.raises(TypeError):
        SessionDB.sanitize_title(123)


def test_create_session_inherits_from_its_parent_as_in_the_spec(db):
    # api.md §2.1, the measured example.
    db.create_session(
        "s1", "cli", cwd="/w", git_repo_root="/w", profile_name="prof", user_id="u1",
        session_key="k1", chat_id="c1", chat_type="dm", thread_id="t1",
    )
    db.update_session_cwd("s1", "/w", git_branch="main")
    assert db.create_session("c1", "cli", parent_session_id="s1") == "c1"
    c1 = db.get_session("c1")
    assert (c1["cwd"], c1["git_branch"], c1["git_repo_root"], c1["profile_name"]) == (
        "/w", "main", "/w", "prof")
    assert c1["user_id"] is None and c1["session_key"] is None and c1["chat_id"] is None

    db.end_session("s1", "compression")
    db.create_session("c2", "cli", parent_session_id="s1", cwd="/other")
    c2 = db.get_session("c2")
    assert (c2["cwd"], c2["git_branch"], c2["git_repo_root"], c2["profile_name"]) == (
        "/other", "main", "/w", "prof")
    assert (c2["user_id"], c2["session_key"], c2["chat_id"], c2["chat_type"], c2["thread_id"]) == (
        "u1", "k1", "c1", "dm", "t1")


def test_model_config_is_stored_as_pythons_json_text(db):
    # api.md §0.3: the original's encoder, byte for byte.
    db.create_session("s", "cli", model_config={"temperature": 0.5, "name": "é"})
    raw = db._conn.execute("SELECT model_config FROM sessions WHERE id='s'").fetchone()[0]
    assert raw == '{"temperature": 0.5, "name": "\\u00e9"}'


def test_a_set_as_model_config_is_the_encoders_type_error(db):
    with pytest.raises(TypeError, match="^Object of type set is not JSON serializable$"):
        db.create_session("s", "cli", model_config={1, 2})
    assert db.get_session("s") is None


def test_session_rows_keep_ints_ints_and_floats_floats(db):
    db.create_session("s", "cli")
    db.update_token_counts("s", input_tokens=7, estimated_cost_usd=0.25)
    row = db.get_session("s")
    assert type(row["input_tokens"]) is int and row["input_tokens"] == 7
    assert type(row["estimated_cost_usd"]) is float and row["estimated_cost_usd"] == 0.25
    assert type(row["started_at"]) is float
    assert list(row)[:3] == ["id", "source", "user_id"]  # the table's column order


def _search_fixture(db):
    """api.md §8.6's data."""
    db.create_session("a", "cli", model="gpt")
    db.create_session("b", "telegram", model="claude")
    rows = [
        ("a", "user", "How do I fix the docker build? It fails on step 3.", {}),
        ("a", "assistant",
         "The docker build fails because the base image is missing. Try docker pull first.", {}),
        ("a", "assistant", None, {"tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "web_search", "arguments": "{\"q\": \"kubernetes ingress\"}"}}]}),
        ("a", "tool", "search results about kubernetes",
         {"tool_name": "web_search", "tool_call_id": "c1"}),
        ("b", "user", "chat-send is broken in P2.2 release", {}),
        ("b", "assistant", "我们在大别山项目中使用docker部署。修改youer服务端", {}),
        ("b", "user", "广西 桂林 漓江 旅游", {}),
        ("b", "user", [{"type": "text", "text": "multimodal docker picture"},
                       {"type": "image_url", "image_url": {"url": "x"}}], {}),
    ]
    for i, (session, role, content, extra) in enumerate(rows, start=1):
        got = db.append_message(session, role, content, timestamp=1000.0 + i, **extra)
        assert got == i


def _ids(results):
    return [row["id"] for row in results]


@pytest.mark.parametrize(("query", "kwargs", "ids"), [
    ("docker", {}, [2, 1, 8]),
    ("docker build", {}, [2, 1]),
    ('"base image"', {}, [2]),
    ("docker OR kubernetes", {}, [4, 3, 2, 1, 8]),
    ("docker NOT build", {}, [8]),
    ("dock*", {}, [2, 1, 8]),
    ("chat-send", {}, [5]),
    ("kubernetes", {"role_filter": ["tool"]}, [4]),
    ("大别山", {}, [6]),
    ("漓江", {}, [7]),
    ("youer", {}, [6]),
    ("docker", {"source_filter": ["telegram"]}, [8]),
    ("docker", {"exclude_sources": ["telegram"]}, [2, 1]),
    ("docker", {"sort": "oldest", "limit": 2}, [1, 2]),
    ("docker", {"limit": 2, "offset": 1}, [1, 8]),
    ("C++", {}, []),
    ("50%", {}, []),
    ("don't", {}, []),
])
def test_search_examples_of_the_spec(db, query, kwargs, ids):
    _search_fixture(db)
    assert _ids(db.search_messages(query, **kwargs)) == ids


def test_a_search_result_carries_the_spec_fields_and_context(db):
    _search_fixture(db)
    results = db.search_messages("docker")
    first = results[0]
    assert first["snippet"] == (
        "The >>>docker<<< build fails because the base image is missing. Try >>>docker<<< pull first.")
    assert first["context"] == [
        {"role": "user", "content": "How do I fix the docker build? It fails on step 3."},
        {"role": "assistant", "content":
            "The docker build fails because the base image is missing. Try docker pull first."},
        {"role": "assistant", "content": ""},
    ]
    tool_row = db.search_messages("kubernetes", role_filter=["tool"])[0]
    assert (tool_row["tool_name"], tool_row["source"], tool_row["model"], tool_row["timestamp"]) == (
        "web_search", "cli", "gpt", 1004.0)


def test_title_transfer_along_a_compression_chain(db):
    # api.md §6.2, the transfer example.
    db.create_session("root", "cli")
    db.set_session_title("root", "Base")
    db.end_session("root", "compression")
    db.create_session("tip", "cli", parent_session_id="root")
    db.set_session_title("tip", "Base #2")
    assert db.set_session_title("tip", "Base") is True
    assert db.get_session_title("root") is None
    assert db.get_session_title("tip") == "Base"
    db.create_session("other", "cli")
    with pytest.raises(ValueError, match="^Title 'Base' is already in use by session tip$"):
        db.set_session_title("other", "Base")


@pytest.mark.parametrize(("existing", "argument", "expected"), [
    ([], "New thing", "New thing"),
    (["Docker fix"], "Docker fix", "Docker fix #2"),
    (["Docker fix", "Docker fix #2"], "Docker fix #2", "Docker fix #3"),
    (["Docker fix", "Docker fix #2", "Docker fix #10", "Docker fix #abc"], "Docker fix",
     "Docker fix #11"),
    (["Only #3"], "Only", "Only #4"),
    ([], "#5", "#5"),
])
def test_next_title_in_lineage_examples(db, existing, argument, expected):
    for i, title in enumerate(existing):
        db.create_session(f"s{i}", "cli")
        db.set_session_title(f"s{i}", title)
    assert db.get_next_title_in_lineage(argument) == expected


def test_get_messages_as_conversation_gives_the_agents_message_dicts(db):
    db.create_session("s", "cli")
    db.append_message("s", "user", "hi")
    db.append_message("s", "assistant", None, tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}])
    db.append_message("s", "tool", "files", tool_call_id="c1", tool_name="ls")
    conversation = db.get_messages_as_conversation("s")
    assert [m["role"] for m in conversation] == ["user", "assistant", "tool"]
    assert conversation[1]["tool_calls"][0]["function"]["name"] == "ls"
    assert conversation[2]["tool_call_id"] == "c1"


def test_rewind_errors_are_the_originals_value_errors(db):
    db.create_session("s", "cli")
    assistant = db.append_message("s", "assistant", "x")
    with pytest.raises(ValueError, match="^message 99 not found in session s$"):
        db.rewind_to_message("s", 99)
    with pytest.raises(ValueError, match=r"^rewind target must be a 'user' message \(got role='assistant', id=\d+\)$"):
        db.rewind_to_message("s", assistant)


def test_export_and_import_round_trip(db, tmp_path):
    import hermes_state_rs

    db.create_session("s", "cli", model="m")
    db.append_message("s", "user", "hello")
    exported = db.export_session("s")
    assert exported["messages"][0]["content"] == "hello"
    other = hermes_state_rs.SessionDB(tmp_path / "other.db")
    try:
        report = other.import_sessions([exported])
        assert report["imported"] == 1
        assert other.get_messages("s")[0]["content"] == "hello"
    finally:
        other.close()


def test_import_of_a_non_list_is_the_originals_value_error(db):
    with pytest.raises(ValueError, match="^sessions must be a list$"):
        db.import_sessions({"not": "a list"})


def test_foreign_key_failure_is_sqlite3s_integrity_error(db):
    with pytest.raises(sqlite3.IntegrityError, match="^FOREIGN KEY constraint failed$"):
        db.append_message("missing", "user", "x")
    with pytest.raises(sqlite3.IntegrityError, match="^NOT NULL constraint failed: messages.role$"):
        db.create_session("s", "cli")
        db.append_message("s", None, "x")


def test_repair_alternation_merges_a_user_pair_as_the_agents_helper_does(db):
    # The original hands the conversation to the agent's repair_message_sequence;
    # the library applies the same repair (a wedged user/user pair is merged).
    db.create_session("s", "cli")
    for role, content in [("user", "first ask"), ("assistant", "first reply"),
                          ("user", "unanswered turn"), ("user", "next turn"),
                          ("assistant", "next reply")]:
        db.append_message("s", role, content)
    plain = db.get_messages_as_conversation("s")
    assert [m["role"] for m in plain] == ["user", "assistant", "user", "user", "assistant"]
    repaired = db.get_messages_as_conversation("s", repair_alternation=True)
    assert [m["role"] for m in repaired] == ["user", "assistant", "user", "assistant"]
    assert "unanswered turn" in repaired[2]["content"] and "next turn" in repaired[2]["content"]


def test_optimize_fts_storage_reports_progress_to_the_callback(db):
    db.create_session("s", "cli")
    db.append_message("s", "user", "hello")
    reports = []
    summary = db.optimize_fts_storage(progress_cb=reports.append)
    assert isinstance(summary, dict)
    assert reports, "the callback was called"
    assert all(set(r) == {"phase", "percent", "indexed", "total"} for r in reports)
    assert reports[-1]["phase"] == "done"


def test_an_exception_of_the_progress_callback_reaches_the_caller(db):
    def refuse(report):
        raise KeyError("stop")

    db.create_session("s", "cli")
    with pytest.raises(KeyError, match="stop"):
        db.optimize_fts_storage(progress_cb=refuse)
    db.append_message("s", "user", "still writable")


def test_cleanups_remove_transcript_files_in_sessions_dir(db, tmp_path):
    # api.md §11.6: with sessions_dir, a deleted session's transcripts go too.
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for sid in ("a", "b", "empty"):
        db.create_session(sid, "cli")
        (sessions / f"{sid}.jsonl").write_text("")
    (sessions / "request_dump_a_1.json").write_text("{}")
    assert db.delete_session("a", sessions_dir=sessions) is True
    assert not (sessions / "a.jsonl").exists() and not (sessions / "request_dump_a_1.json").exists()
    assert db.delete_sessions(["b", None, 3], sessions_dir=str(sessions)) == 1
    assert not (sessions / "b.jsonl").exists()
    assert db.delete_session_if_empty("empty", sessions_dir=sessions) is True
    assert not (sessions / "empty.jsonl").exists()
    for sid in ("ended", "live"):
        db.create_session(sid, "cli")
        (sessions / f"{sid}.json").write_text("{}")
    db.end_session("ended", "user_exit")
    assert db.delete_empty_sessions(sessions_dir=sessions) == 1
    assert not (sessions / "ended.json").exists() and (sessions / "live.json").exists()
