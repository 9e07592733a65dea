"""The original (hermes-agent 0.19.0, schema 22) as the live agent on one file beside this package.

argv: the extracted sdist's folder (the original's code), a scratch folder.
Exits non-zero with a message on the first difference.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ORIG, WORK = sys.argv[1], Path(sys.argv[2])
DB = WORK / "state.db"
ENV = dict(os.environ, HERMES_HOME=str(WORK / "home"), PYTHONPATH=ORIG)

AGENT = """
import json, sys, time
from pathlib import Path
import hermes_state
db = hermes_state.SessionDB(Path(sys.argv[1]))
if db.get_session("live") is None:
    db.create_session("live", "cli")
print("READY", flush=True)
ids = []
for i in range(int(sys.argv[2])):
    ids.append(db.append_message("live", "user", f"agent message {i} kettle"))
    time.sleep(0.01)
print("ACKS " + json.dumps(ids), flush=True)
db.close()
"""

ORIGINAL_READS = """
import json, sys
from pathlib import Path
import hermes_state
db = hermes_state.SessionDB(Path(sys.argv[1]))
ours = [m["content"] for m in db.get_messages("ours")]
hits = [h["session_id"] for h in db.search_messages("teapot", limit=100)]
new_id = db.append_message("ours", "assistant", "written by the original after the upgrade")
print(json.dumps({"ours": ours, "hits": hits, "new_id": new_id}), flush=True)
db.close()
"""


def original(script, *args):
    return subprocess.run([sys.executable, "-c", script, str(DB), *map(str, args)],
                          cwd=ORIG, env=ENV, capture_output=True, text=True, timeout=300)


def fail(what):
    print("FAIL: " + what, flush=True)
    sys.exit(1)


# 1. A file the original wrote (schema 22).
made = original("""
import sys
from pathlib import Path
import hermes_state
db = hermes_state.SessionDB(Path(sys.argv[1]))
db.create_session("before", "telegram")
for text in ["first kettle", "second", "third kettle"]:
    db.append_message("before", "user", text)
db.close()
""")
if made.returncode != 0:
    fail("the original could not write its file: " + made.stderr[-2000:])

# 2. The original as the live agent, writing while this package reads and writes.
agent = subprocess.Popen([sys.executable, "-c", AGENT, str(DB), "150"], cwd=ORIG, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
if agent.stdout.readline().strip() != "READY":
    fail("the agent did not start: " + agent.stderr.read()[-2000:])

import hermes_state_rs  # noqa: E402  (this package; after the original made the file)

db = hermes_state_rs.SessionDB(DB)
before = [m["content"] for m in db.get_messages("before")]
if before != ["first kettle", "second", "third kettle"]:
    fail(f"the original's rows read differently: {before}")
db.create_session("ours", "cli")
for i in range(30):
    db.append_message("ours", "user", f"our message {i} teapot")
    found = db.search_messages("kettle", limit=500)
    if not any(h["session_id"] == "before" for h in found):
        fail("search missed the original's rows")
    time.sleep(0.005)
out, err = agent.communicate(timeout=300)
if agent.returncode != 0:
    fail("the agent failed while this package wrote: " + err[-3000:])
acks = json.loads(out.strip().split("ACKS ", 1)[1])
live = [m["id"] for m in db.get_messages("live")]
if live != acks:
    fail(f"acknowledged by the agent {len(acks)}, stored {len(live)}")
session = db.get_session("live")
if session["message_count"] != len(acks):
    fail(f"counter {session['message_count']} != rows {len(acks)}")
version = db._conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
db.close()

# 3. The file written here opens in the original: it reads our rows, searches them, writes.
read = original(ORIGINAL_READS)
if read.returncode != 0:
    fail("the original could not open the file written here: " + read.stderr[-3000:])
seen = json.loads(read.stdout.strip().splitlines()[-1])
if seen["ours"] != [f"our message {i} teapot" for i in range(30)]:
    fail(f"the original read our rows differently: {seen['ours'][:3]}")
if seen["hits"].count("ours") != 30:
    fail(f"the original's search found {seen['hits'].count('ours')} of our 30 rows")
print(json.dumps({"schema_after": version, "agent_acks": len(acks), "ours": 30,
                  "original_wrote_after": seen["new_id"]}), flush=True)
print("OK", flush=True)
