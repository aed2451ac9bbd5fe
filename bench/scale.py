"""Recall at 10k and 100k memories as a client meets it: imported over HTTP, indexed by the server, asked over HTTP.

Usage: .venv/bin/python bench/scale.py [--sizes 10000 100000] [--repeat 50] [--dir bench/results]

One `brain serve` runs from start to end, with no restart. For each size, the new synthetic notes (60-600
characters, `note()`) go in through `POST /import` in pages of 1,000, the whole payload resent with the next
offset, as the import contract says. While the server's own background indexer embeds them, a rare-word recall
is asked every half second (latency while indexing); once `GET /stats` shows nothing unvectorized, the queries
below are asked in turn, `--repeat` rounds (a slow spell of the machine falls on all of them alike), one fresh
connection per request, and the server's RSS is read from /proc.

With --members N (a team brain), the owner adds N members over `POST /team/members` and the notes are spread
over them: each member imports their share into their own personal workspace with their own token (imports always
land there), so no one reads more than their share. The queries are then asked as the first member, and the same
sizes are measured again on a single-owner brain in the same run, side by side.

Time travel (single owner): after the live figures, 100 notes are rewritten through `POST /update` and 100 others
opened, and the same queries are asked with `as_of` set to the moment before those edits, then to the moment
each size's import was half done (at 100k, the 10k import's midpoint too: 5,000 memories then).

With --measure DIR [DIR ...], brains a run left behind are served again (after a restart, so the vectors are
loaded from disk rather than made) and measured side by side: as the first member where the brain has a team (their
token rotated by the owner: only hashes are kept), else as the owner.

Queries: a rare word (in 10 memories at every size), common words (about 30% of memories) and a paraphrase (no
word in common with the notes it should find: the migrations of billing, pricing or payments; hit@10 is the share
of its top 10 that are such notes), each asked --repeat times: warm caches, what a real workload never has. Then
the diverse workload (bench/workload.py): 50 distinct rare-word, everyday (3-5 common words) and paraphrase queries,
each asked once, with how often the top 10 held a note the query means. `GET /count`, `/tags` and `/stats` are
timed as the three fixed queries are.
"""

import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import workload  # noqa: E402

from tests.e2e.conftest import Server  # noqa: E402

PEOPLE = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Edsger", "Radia"]
VERBS = ["reviewed", "drafted", "approved", "questioned", "rewrote", "shipped", "postponed", "estimated"]
TOPICS = ["billing", "onboarding", "search", "pricing", "hiring", "security", "logging", "payments", "backup"]
NOUNS = ["plan", "migration", "proposal", "budget", "incident report", "roadmap", "checklist", "contract"]
PROJECTS = ["Atlas", "Borealis", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
SYLLABLES = ["ka", "lo", "mi", "ran", "tu", "vex", "sor", "pli", "den", "quo", "zar", "bel", "nim", "tor"]
QUERIES = {
    "rare word": "quokka",
    "common words": "meeting notes",
    "paraphrase": "who is taking care of moving customers to the new way we charge them",
}
PARAPHRASE_TOPICS = ("billing", "pricing", "payments")
# What the issue measured before this bench was rewritten (issue 14: p50 / p95 ms per query, RSS MB).
BEFORE = {
    10_000: {"rare word": (15.6, 22.9), "common words": (36.1, 42.8), "paraphrase": (42.4, 51.0), "rss": 1020},
    100_000: {"rare word": (30.6, 47.3), "common words": (41.8, 57.2), "paraphrase": (53.6, 71.9), "rss": 1630},
}
BEFORE_COUNT_MS = 10.0  # GET /count at 100k, on a kept-alive connection


def note(rng: random.Random, n: int, rare: bool) -> str:
    words = " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(2, 6)))
    text = (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} {rng.choice(NOUNS)} for "
            f"{rng.choice(PROJECTS)} on {rng.choice(DAYS)}; {words} (ref {n})")
    if rng.random() < 0.3:
        text += ". Follow up in the weekly meeting notes."
    if rare:
        text += " Spotted a quokka on the office webcam."
    if animal := workload.planted(n):
        text += f" Spotted a {animal} near the loading dock."
    if rng.random() < 0.5:  # longer notes, up to about 600 characters
        text += " " + " ".join(rng.choice(SYLLABLES) * rng.randint(1, 3) for _ in range(rng.randint(10, 80)))
    return text


class Client:
    """One fresh connection per request, as a client that does not keep connections alive."""

    def __init__(self, server: Server, token: str | None = None) -> None:
        self.port, self.headers = server.port, {"Authorization": f"Bearer {token or server.token}"}

    def call(self, method: str, path: str, params: dict | None = None, body: bytes | None = None) -> tuple[float, dict]:
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            headers = {**self.headers, "Content-Type": "application/json"} if body is not None else self.headers
            connection.request(method, path + (f"?{urlencode(params)}" if params else ""), body=body, headers=headers)
            response = connection.getresponse()
            data = json.loads(response.read())
        finally:
            connection.close()
        elapsed = (time.perf_counter() - started) * 1000
        if response.status != 200:
            raise RuntimeError(f"{method} {path} answered {response.status}: {data}")
        return elapsed, data


def import_notes(client: Client, start: int, stop: int, rare: set[int], step: int = 1,
                 midway: list[int] | None = None) -> float:
    """Notes start, start + step, ... below stop (each the same note whoever imports it); the moment half of them
    are in is added to `midway`."""
    entries = [{"id": f"note-{n}", "content": note(random.Random(n), n, rare=n in rare), "tags": ["bench"],
                "source": "bench", "created_at": 1_700_000_000_000 + n * 1000} for n in range(start, stop, step)]
    body = json.dumps({"version": 3, "entries": entries}).encode()
    print(f"importing {len(entries)} notes, a {len(body) / 1e6:.1f} MB payload resent with every page", flush=True)
    started, offset = time.perf_counter(), 0
    while True:
        _, report = client.call("POST", "/import", {"limit": 1000, "offset": offset}, body)
        if report["failed"]:
            raise RuntimeError(f"import failed: {report['results'][:3]}")
        offset = report["next_offset"]
        if midway is not None and not midway and offset >= len(entries) // 2:
            midway.append(int(time.time() * 1000))
        if not report["remaining_entries"]:
            return time.perf_counter() - started


def wait_for_indexing(importers: list[Client], imported: int | None) -> list[float]:
    """Until nothing anyone imported is left to embed (each sees their own in /stats); meanwhile a rare-word recall
    every half second, asked by the first of them. The indexing rate is printed for `imported` memories (None:
    a few edits the capture path may already have embedded, so no rate worth printing)."""
    client = importers[0]
    busy: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.wait(0.5):
            busy.append(client.call("GET", "/recall", {"query": QUERIES["rare word"], "topK": 10})[0])

    prober = threading.Thread(target=probe, daemon=True)
    started = time.perf_counter()
    prober.start()
    try:
        while any(who.call("GET", "/stats")[1]["unvectorized"] for who in importers):
            time.sleep(1)
    finally:
        stop.set()
        prober.join()
    seconds = time.perf_counter() - started
    if imported is not None:
        print(f"indexed by the server in {seconds:.0f} s: {imported / seconds:.0f} memories/s", flush=True)
    return sorted(busy)


def timed(client: Client, requests: dict[str, tuple[str, dict | None]],
          repeat: int) -> dict[str, tuple[float, float, dict]]:
    """p50, p95 and the last answer of each request, asked in turn `repeat` times: a spell in which this shared
    machine runs slower falls on every request alike, not on whichever was being asked at the time."""
    for path, params in requests.values():  # warm caches
        for _ in range(3):
            client.call("GET", path, params)
    times: dict[str, list[float]] = {name: [] for name in requests}
    data: dict[str, dict] = {}
    for _ in range(repeat):
        for name, (path, params) in requests.items():
            elapsed, data[name] = client.call("GET", path, params)
            times[name].append(elapsed)
    return {name: (statistics.median(spent), sorted(spent)[int(0.95 * (len(spent) - 1))], data[name])
            for name, spent in times.items()}


def rss_mb(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    read = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in status if line.startswith(("VmRSS", "VmHWM"))}
    return read["VmRSS"], read["VmHWM"]


def team(client: Client, server: Server, members: int) -> list[Client]:
    """N members added by the owner, as clients holding their own tokens."""
    tokens = [client.call("POST", "/team/members", body=json.dumps({"name": f"Member {m}"}).encode())[1]["token"]
              for m in range(members)]
    return [Client(server, token) for token in tokens]


def measure(client: Client, server: Server, size: int, repeat: int) -> dict[str, float]:
    before = BEFORE.get(size, {})
    rss, peak = rss_mb(server.process.pid)
    was = f"   (before: {before['rss']} MB)" if before else ""
    print(f"server RSS {rss:.0f} MB, peak {peak:.0f} MB{was}")
    p50s = {}
    answers = timed(client, {name: ("/recall", {"query": text, "topK": 10}) for name, text in QUERIES.items()},
                    repeat)
    for name, (p50, p95, data) in answers.items():
        p50s[name], p50s[f"{name} p95"] = p50, p95
        results = data["results"]
        extra = ""
        if name == "paraphrase":
            hits = sum(any(f"{t} migration" in r["content"] for t in PARAPHRASE_TOPICS) for r in results)
            extra = f", hit@10 {hits / 10:.2f}"
        elif name == "rare word":
            extra = f", {sum('quokka' in r['content'] for r in results)}/10 quokkas"
        was = f"   (before: {before[name][0]:.1f} / {before[name][1]:.1f})" if before else ""
        print(f"  {name:<13} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  {len(results)} results{extra}{was}", flush=True)
    p50s |= diverse(client)
    reads = {path: (path, params) for path, params in (("/count", None), ("/tags", None), ("/stats", None),
                                                        ("/list", {"n": 10}))}
    for path, (p50, p95, _) in timed(client, reads, repeat).items():
        print(f"  GET {path:<9} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms", flush=True)
    return p50s


def diverse(client: Client) -> dict[str, float]:
    """The diverse workload (bench/workload.py): 50 distinct queries of each kind, interleaved, each asked once on a
    fresh connection. p50 and p95 per kind, and how often the top 10 held what the query means."""
    spent: dict[str, list[float]] = {}
    found: dict[str, list[bool]] = {}
    for query in workload.queries():
        elapsed, data = client.call("GET", "/recall", {"query": query.text, "topK": 10})
        spent.setdefault(query.kind, []).append(elapsed)
        if query.wants:
            found.setdefault(query.kind, []).append(query.found([r["content"] for r in data["results"]]))
    figures = {}
    print("  diverse workload, each query once:")
    for kind, times in spent.items():
        p50, p95 = statistics.median(times), sorted(times)[int(0.95 * (len(times) - 1))]
        figures[f"diverse {kind}"], figures[f"diverse {kind} p95"] = p50, p95
        judged = found.get(kind)
        share = f", found in the top 10: {sum(judged)}/{len(judged)}" if judged else ""
        print(f"    {kind:<11} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  ({len(times)} queries{share})", flush=True)
    return figures


def edit(client: Client, size: int, count: int = 100) -> int:
    """`count` notes rewritten and `count` others opened, as a day of use would; the moment before, in Unix ms."""
    before = int(time.time() * 1000)
    time.sleep(0.01)
    rng = random.Random(size)
    for n in rng.sample(range(size), count):
        body = json.dumps({"id": f"note-{n}", "content": f"Revised: {note(random.Random(-n), n, rare=False)}"})
        client.call("POST", "/update", body=body.encode())
    for n in rng.sample(range(size), count):
        client.call("GET", "/entry", {"id": f"note-{n}"})
    return before


def measure_past(client: Client, moments: dict[str, int], live: dict[str, float], repeat: int) -> dict[str, float]:
    """GET /recall?as_of at each moment, each query `repeat` times, beside the live p50."""
    figures = {}
    for label, at in moments.items():
        print(f"  as_of {label}:", flush=True)
        asked = {name: ("/recall", {"query": text, "topK": 10, "as_of": at}) for name, text in QUERIES.items()}
        for name, (p50, p95, data) in timed(client, asked, repeat).items():
            figures[f"{label} {name}"] = p50
            print(f"    {name:<13} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  {len(data['results'])} results"
                  f"   (live p50 {live[name]:.1f} ms)", flush=True)
    return figures


def model_rate(count: int = 600) -> float:
    """Notes embedded per second by the served model alone, `count` distinct notes of the corpus (not its first
    ones), in a subprocess so that its memory and threads do not stay with this one."""
    import os
    import subprocess

    code = (
        "import os, random, sys, time; from concurrent.futures import ThreadPoolExecutor; "
        f"sys.path[:0] = [{str(ROOT / 'src')!r}, {str(ROOT / 'bench')!r}]; "
        "from scale import note; from second_brain.embedding import load_embedder; "
        "from second_brain.settings import Settings; "
        "model = load_embedder(Settings(), threads=1); "
        f"notes = [note(random.Random(n), n, rare=False) for n in range(10**6, 10**6 + {count})]; "
        "model.embed_batch(notes[:20]); pool = ThreadPoolExecutor(os.cpu_count()); started = time.perf_counter(); "
        "list(pool.map(lambda text: model.embed_batch([text]), notes[20:])); "
        f"print(({count} - 20) / (time.perf_counter() - started))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--members", type=int, default=0, help="a team brain with this many members, then a "
                                                                "single-owner one, side by side")
    parser.add_argument("--dir", default=str(ROOT / "bench/results"))
    parser.add_argument("--measure", nargs="+", type=Path, metavar="DIR", help="serve these brains again and "
                                                                                "measure them side by side")
    args = parser.parse_args()
    if args.measure:
        remeasure(args.measure, args.repeat)
        return
    rare = set(range(0, args.sizes[0], args.sizes[0] // 10))  # ten quokkas, whatever the size
    print(f"the model's own rate here: {model_rate():.0f} notes/s (one note per call, a call per core at once, "
          "as the indexer calls it, in a process of its own)", flush=True)
    if args.members:
        # Every member gets every members-th note; the quokkas go to the first member, who asks the queries.
        rare = {n - n % args.members for n in rare}
        teamed = run(args, rare, args.members)
        alone = run(args, rare, 0)
        print("\nrecall p50 as a member of a team / as the single owner of the same notes:")
        for size in args.sizes:
            for name in QUERIES:
                ratio = teamed[size][name] / alone[size][name]
                print(f"  {size:>7} {name:<13} {teamed[size][name]:6.1f} / {alone[size][name]:6.1f} ms  {ratio:.2f}x")
    else:
        run(args, rare, 0)


def remeasure(dirs: list[Path], repeat: int) -> None:
    figures = {}
    for data_dir in dirs:
        server = Server(data_dir, in_process=False).start()
        try:
            owner = Client(server)
            members = owner.call("GET", "/team/members")[1]["members"]
            first = next((m for m in members if m["name"] == "Member 0"), None)
            client = owner
            if first:
                token = owner.call("POST", "/team/members/token", body=json.dumps({"id": first["id"]}).encode())[1]
                client = Client(server, token["token"])
            size = owner.call("GET", "/stats")[1]["count"] if not first else None
            print(f"\n#### {data_dir.name}: as {'Member 0' if first else 'the owner'}"
                  f"{'' if size is None else f' ({size} memories)'}", flush=True)
            figures[data_dir.name] = measure(client, server, 0, repeat)
        finally:
            server.stop()
    names = list(figures)
    print("\nrecall p50 / p95, side by side: " + " | ".join(names))
    for query in [*QUERIES, *(f"diverse {kind}" for kind in ("rare", "everyday", "paraphrase"))]:
        print(f"  {query:<13} " + " | ".join(f"{figures[n][query]:6.1f} / {figures[n][f'{query} p95']:6.1f} ms"
                                             for n in names))


def run(args: argparse.Namespace, rare: set[int], members: int) -> dict[int, dict[str, float]]:
    data_dir = Path(args.dir) / f"scale-{int(time.time())}{f'-team{members}' if members else ''}"
    server = Server(data_dir, in_process=False).start()
    owner, loaded, figures = Client(server), 0, {}
    moments: dict[str, int] = {}
    importers = team(owner, server, members) if members else [owner]
    client = importers[0]  # who asks
    print(f"\n#### {'a team of ' + str(members) + ' members' if members else 'a single owner'}", flush=True)
    try:
        for size in args.sizes:
            print(f"\n== {size} memories ==", flush=True)
            midway: list[int] = []
            seconds = sum(import_notes(who, loaded + m, size, rare, len(importers), midway)
                          for m, who in enumerate(importers))
            moments[f"midway through the {size} import"] = midway[0]
            print(f"imported {size - loaded} through POST /import in {seconds:.1f} s: "
                  f"{(size - loaded) / seconds:.0f} memories/s", flush=True)
            busy = wait_for_indexing(importers, size - loaded)
            loaded = size
            figures[size] = measure(client, server, size, args.repeat)
            if len(busy) >= 2:
                p95, idle = busy[int(0.95 * (len(busy) - 1))], figures[size]["rare word p95"]
                print(f"  rare word while the indexer was busy: p50 {statistics.median(busy):.1f} ms, p95 {p95:.1f} ms "
                      f"over {len(busy)} recalls, {p95 / idle:.2f}x the idle p95", flush=True)
            if not members:  # time travel: before a day's edits, and back to each import's midpoint
                before = edit(client, size)
                wait_for_indexing(importers, None)
                figures[size] |= measure_past(client, {"before 100 edits and 100 opens": before, **moments},
                                              figures[size], args.repeat)
        if len(args.sizes) > 1:
            first, last = args.sizes[0], args.sizes[-1]
            growth = figures[last]["rare word"] / figures[first]["rare word"]
            print(f"\nrare-word p50 growth {first} -> {last}: {growth:.2f}x (before: 1.96x)")
            for kind in ("rare", "everyday", "paraphrase"):
                key = f"diverse {kind}"
                print(f"diverse {kind} p50 growth {first} -> {last}: {figures[last][key] / figures[first][key]:.2f}x")
    finally:
        server.stop()
    return figures


if __name__ == "__main__":
    main()
