"""Reads a store written by hermes-state the way the original Python store does.

Run by tests/interop.rs with the store path as argument. Python's own sqlite3
(SQLite 3.40.1 on Debian, no cjk_unicode61 tokenizer) plays the original: it
checks the v23 shape and encodings, then applies the original's
tokenizer-absent rule (schema-v23.md §6.6) and writes a message, as the
original's open and append_message would. Prints one JSON line of findings.
"""
import json
import sqlite3
import sys

path = sys.argv[1]
conn = sqlite3.connect(path)
conn.execute("PRAGMA foreign_keys=ON")
found = {}
found["schema_version"] = conn.execute("SELECT version FROM schema_version").fetchall()
found["session_columns"] = [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
found["message_columns"] = [r[1] for r in conn.execute("PRAGMA table_info(messages)")]
found["journal_mode"] = conn.execute("PRAGMA journal_mode").fetchone()[0]
row = conn.execute("SELECT tool_calls, model_config FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.tool_calls IS NOT NULL").fetchone()
found["tool_calls_roundtrip"] = json.dumps(json.loads(row[0])) == row[0]
found["model_config_roundtrip"] = json.dumps(json.loads(row[1])) == row[1]
found["fts_hits"] = [r[0] for r in conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'docker' ORDER BY rowid")]
found["trigram_hits"] = [r[0] for r in conn.execute("SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH '\"大别山\"' ORDER BY rowid")]
content = conn.execute("SELECT content FROM messages WHERE hex(substr(CAST(content AS BLOB), 1, 1)) = '00'").fetchone()[0]
found["multimodal"] = json.loads(content[len("\x00json:"):]) if content.startswith("\x00json:") else None

# The original's open without the tokenizer: mark the CJK index stale, drop its triggers.
cjk_triggers = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger' AND name LIKE 'messages_fts_cjk_%'")]
with conn:
    conn.execute("INSERT INTO state_meta (key, value) VALUES ('fts_cjk_stale', '1') ON CONFLICT(key) DO UPDATE SET value = excluded.value")
    for name in cjk_triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
# Then append_message, as the original writes it.
with conn:
    cur = conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp, observed, active) VALUES (?, 'user', ?, 1800000000.0, 0, 1)",
        ("py", "written by python 数据库 docker"),
    )
    found["python_message_id"] = cur.lastrowid
    conn.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = 'py'")
found["integrity"] = conn.execute("PRAGMA integrity_check").fetchone()[0]
for table in ("messages_fts", "messages_fts_trigram"):
    conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
conn.close()
print(json.dumps(found))
