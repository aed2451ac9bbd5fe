"""The served app computes a few requests at once (BRAIN_REQUEST_THREADS): the rest wait their turn instead of
competing for the interpreter with the ones running, among them a thread holding the database's write lock."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.entrypoints.api import app as api_app
from second_brain.entrypoints.api.app import create_app, request_threads
from second_brain.settings import Settings
from tests.support.brains import sqlite_brain

TOKEN = "owner-token-for-threads"


def test_at_most_the_configured_number_of_requests_run_at_once(tmp_path, clock, monkeypatch):
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    brain.settings = brain.settings.model_copy(update={"request_threads": 3})
    running, most, lock = [0], [0], threading.Lock()
    stats = api_app.ops.stats

    def slow_stats(*args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return stats(*args, **kwargs)

    monkeypatch.setattr(api_app.ops, "stats", slow_stats)
    try:
        with TestClient(create_app(brain, TOKEN)) as client, ThreadPoolExecutor(8) as pool:
            asked = [pool.submit(client.get, "/stats", headers={"Authorization": f"Bearer {TOKEN}"})
                     for _ in range(8)]
            assert all(answer.result().status_code == 200 for answer in asked)
        assert most[0] == 3
    finally:
        brain.close()


def test_by_default_twice_the_cores_and_at_least_four(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert request_threads(Settings()) == 4
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert request_threads(Settings()) == 16
    assert request_threads(Settings(request_threads=2)) == 2
