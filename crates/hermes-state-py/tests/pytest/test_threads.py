"""One SessionDB shared by many threads, as the gateway shares it."""

import threading
import time

from hermes_state_rs import SessionDB


def test_the_gil_is_released_while_a_call_waits_for_the_write_lock(db, db_path, hold_write_lock):
    db.create_session("s", "cli")
    release = hold_write_lock(db_path)
    done = threading.Event()
    errors = []

    def append():
        try:
            db.append_message("s", "user", "waited")
            done.set()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    worker = threading.Thread(target=append)
    worker.start()
    time.sleep(0.1)  # the worker is inside the store call, waiting for the lock
    ticks = 0
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        ticks += 1
    waiting_meanwhile = not done.is_set()
    release()  # let the write through
    worker.join(30)
    assert errors == []
    assert done.is_set()
    assert waiting_meanwhile  # the call was still in the store...
    assert ticks > 10_000  # ...while this thread ran Python freely


def test_eight_threads_append_to_one_store(db):
    threads_count, per_thread = 8, 150
    for t in range(threads_count):
        db.create_session(f"s{t}", "gateway")
    ids, errors = [], []
    lock = threading.Lock()

    def worker(t):
        try:
            mine = [db.append_message(f"s{t}", "user", f"message {t}/{i}")
                    for i in range(per_thread)]
            with lock:
                ids.extend(mine)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert len(ids) == len(set(ids)) == threads_count * per_thread
    assert db.message_count() == threads_count * per_thread
    for t in range(threads_count):
        contents = [m["content"] for m in db.get_messages(f"s{t}")]
        assert contents == [f"message {t}/{i}" for i in range(per_thread)]  # each thread's order


def test_readers_and_writers_share_one_store(db):
    db.create_session("s", "cli")
    stop = threading.Event()
    errors, seen = [], []

    def writer():
        try:
            for i in range(300):
                db.append_message("s", "user", f"needle {i}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            stop.set()

    def reader():
        try:
            last = 0
            while not stop.is_set():
                count = db.get_session("s")["message_count"]
                assert count >= last  # never goes back
                last = count
                db.search_messages("needle", limit=5)
            seen.append(last)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert db.get_session("s")["message_count"] == 300
    assert len(seen) == 4


def test_two_session_dbs_on_one_file_in_two_threads(db_path):
    first, second = SessionDB(db_path), SessionDB(db_path)
    try:
        first.create_session("a", "cli")
        second.create_session("b", "cli")

        def fill(store, sid):
            for i in range(100):
                store.append_message(sid, "user", f"{sid}{i}")

        threads = [threading.Thread(target=fill, args=(first, "a")),
                   threading.Thread(target=fill, args=(second, "b"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert first.message_count("b") == 100 and second.message_count("a") == 100
    finally:
        first.close()
        second.close()
