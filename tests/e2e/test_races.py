"""Concurrent clients against a real server: identical captures at once store one note, and appends racing
on one memory all land (issue 12, items 5 and 6)."""

import threading
from concurrent.futures import ThreadPoolExecutor


def at_once(server, count, request):
    """Run `request(client, n)` from `count` threads released together, each on its own connection."""
    barrier = threading.Barrier(count)

    def run(n):
        with server.client() as client:
            client.get("/count")  # connect before the barrier, so the requests really leave together
            barrier.wait()
            return request(client, n)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def test_identical_captures_sent_at_once_store_one_note(server, api):
    answers = at_once(server, 8, lambda client, _: client.post(
        "/capture", json={"content": "The boiler service is booked for March 3rd."}))
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    bodies = [a.json() for a in answers]
    stored = [b for b in bodies if b["ok"]]
    assert len(stored) == 1, bodies
    for blocked in (b for b in bodies if not b["ok"]):
        assert blocked == {"ok": False, "duplicate": True, "matchId": stored[0]["id"], "score": blocked["score"],
                           "message": "Near-exact duplicate detected — not stored", "workspace": "personal",
                           "undo": 'To store it anyway, send the same capture again with "force": true.'}
    assert api.get("/count").json() == {"count": 1}


def test_a_forgotten_note_can_be_captured_again(api):
    first = api.post("/capture", json={"content": "Locker code is 4411."}).json()
    assert api.post("/forget", json={"id": first["id"]}).status_code == 200
    again = api.post("/capture", json={"content": "Locker code is 4411."}).json()
    assert again["ok"] is True and again["id"] != first["id"]


def test_appends_from_eight_threads_to_one_memory_all_land(server, api):
    memory_id = api.post("/capture", json={"content": "Running log of the kitchen renovation."}).json()["id"]

    def append_25(client, n):
        return [client.post("/append", json={"id": memory_id, "addition": f"step {n}-{k} done"})
                for k in range(25)]

    answers = [a for batch in at_once(server, 8, append_25) for a in batch]
    refused = [a for a in answers if a.status_code != 200]
    assert [a.status_code for a in refused] == [], [a.text for a in refused][:3]
    content = api.get("/entry", params={"id": memory_id}).json()["entry"]["content"]
    assert all(f"step {n}-{k} done" in content for n in range(8) for k in range(25))
