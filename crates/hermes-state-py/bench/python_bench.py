"""The original's workload from Python: the original SessionDB against hermes_state_rs.

    python bench/python_bench.py --original /path/to/hermes_state.py [--agent DIR] [--rounds 3]

`--original` is the original's `hermes_state.py` (schema 23); `--agent` a folder holding the
agent modules it imports (`agent/`, `hermes_constants.py`, ...). Each round runs every
workload on a fresh file for each implementation, alternating which goes first, and the
medians are printed (docs/PERFORMANCE.md, "From Python"). The original runs in WAL mode,
as ours: its WAL-reset check (which would choose DELETE where Python's own SQLite has the
bug) is switched off, so both write the same kind of file.
"""

import argparse
import importlib.util
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

WORDS = ("docker build kubernetes ingress python rust sqlite search session message agent "
         "gateway thread lock append tool result error retry cache token cost model").split()


def load_original(path, agent_dir):
    if agent_dir:
        sys.path.insert(0, agent_dir)
    spec = importlib.util.spec_from_file_location("hermes_state_original", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.is_sqlite_wal_reset_vulnerable = lambda *a, **k: False
    return module


def text(rng, n=30):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def appends(make, folder, count=2000, sessions=20):
    db = make(Path(folder) / "appends.db")
    rng = random.Random(1)
    for s in range(sessions):
        db.create_session(f"s{s}", "cli", model="m")
    start = time.perf_counter()
    for i in range(count):
        db.append_message(f"s{i % sessions}", "user" if i % 2 == 0 else "assistant", text(rng))
    elapsed = time.perf_counter() - start
    return db, count / elapsed


def searches(db, count=300):
    rng = random.Random(2)
    start = time.perf_counter()
    for _ in range(count):
        db.search_messages(" ".join(rng.sample(WORDS, 2)), limit=20)
    return count / (time.perf_counter() - start)


def gateway(make, folder, threads=8, each=250):
    db = make(Path(folder) / "gateway.db")
    for t in range(threads):
        db.create_session(f"g{t}", "telegram")
    errors = []

    def worker(t):
        rng = random.Random(t)
        try:
            for _ in range(each):
                db.append_message(f"g{t}", "user", text(rng, 20))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    db.close()
    if errors:
        raise errors[0]
    return threads * each / elapsed


def run(name, make):
    with tempfile.TemporaryDirectory() as folder:
        db, append_rate = appends(make, folder)
        search_rate = searches(db)
        db.close()
        gateway_rate = gateway(make, folder)
    return {"appends/s": append_rate, "searches/s": search_rate, "8-thread appends/s": gateway_rate}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--original", required=True)
    parser.add_argument("--agent")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    original = load_original(args.original, args.agent)
    import hermes_state_rs

    makers = {
        "original": lambda path: original.SessionDB(db_path=path),
        "hermes_state_rs": lambda path: hermes_state_rs.SessionDB(path),
    }
    results = {name: [] for name in makers}
    for round_ in range(args.rounds):
        order = list(makers) if round_ % 2 == 0 else list(reversed(makers))
        for name in order:
            results[name].append(run(name, makers[name]))
    print(f"{'workload':<22}{'original':>12}{'hermes_state_rs':>18}{'ratio':>8}")
    for key in results["original"][0]:
        a = statistics.median(r[key] for r in results["original"])
        b = statistics.median(r[key] for r in results["hermes_state_rs"])
        print(f"{key:<22}{a:>12.0f}{b:>18.0f}{b / a:>7.1f}x")


if __name__ == "__main__":
    main()
