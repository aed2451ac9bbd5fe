"""A sync killed halfway and taken up again, as the issue asks of every connector: `brain serve` in its own process
connects an integration (its first sync runs in the request), is SIGKILLed once some mirrors are written (no
handler runs, nothing is flushed), and a new server on the same data finishes the sync with each item mirrored once."""

import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from .conftest import Server

# Keyword search only: a `brain serve` with no model starts in a second and syncs fast (what is under test is the
# log's recovery, not the judgement of each mirror).
NO_MODEL = {"BRAIN_EMBEDDER": "none"}


def kill_mid_sync(data_dir: Path, env: dict[str, str], connect: Callable[[httpx.Client], httpx.Response],
                  at_least: int = 20) -> None:
    server = Server(data_dir, in_process=False, env=env | NO_MODEL).start()
    answered: list[httpx.Response | Exception] = []

    def connecting() -> None:
        try:
            with server.client() as api:
                answered.append(connect(api))
        except httpx.HTTPError as e:  # the server died under it: what this is for
            answered.append(e)

    thread = threading.Thread(target=connecting)
    thread.start()
    with server.client() as watching:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = watching.get("/integrations").json()["integrations"]
            if listed and listed[0]["mirrors"] >= at_least:
                break
            time.sleep(0.01)
    server.stop(signal.SIGKILL)
    thread.join(timeout=30)
    assert answered and isinstance(answered[0], Exception), "the sync finished before the kill: nothing was tested"


def resume(data_dir: Path, env: dict[str, str], total: int, source: str) -> list[str]:
    """Sync again on a new server until complete; the first lines of the mirrors of `source`, one per mirror."""
    again = Server(data_dir, in_process=False, env=env | NO_MODEL).start()
    try:
        with again.client() as api:
            listed = api.get("/integrations").json()["integrations"]
            assert len(listed) == 1 and 0 < listed[0]["mirrors"] < total, listed  # killed halfway
            sync = api.post("/integrations/sync", json={"id": listed[0]["id"]}).json()["sync"]
            while not sync["complete"] and not sync["error"]:
                sync = api.post("/integrations/sync", json={"id": listed[0]["id"]}).json()["sync"]
            assert sync["complete"] is True and sync["failed"] == 0, sync
            rows = [row for offset in range(0, total + 100, 100)
                    for row in api.get("/list", params={"n": 100, "offset": offset}).json()]
            return [row["content"].split("\n")[0] for row in rows if row["source"] == source]
    finally:
        again.stop()
