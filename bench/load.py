"""Mixed load over HTTP against a real `brain serve`, then a check that every acknowledged write survived a restart.

Usage: .venv/bin/python bench/load.py [--threads 8] [--seconds 60] [--dir bench/results]

Each thread has its own keep-alive client and, until time is up, captures (a few of them exact repeats of
its earlier notes, which the duplicate check should block), appends (half of them to a few shared memories,
so appends contend), recalls and forgets. Every acknowledged write is kept in a ledger. Then the server is
stopped with SIGTERM, started again on the same data directory, and every write is read back with
GET /entry: each capture present with its text and every acknowledged addition, each forgotten memory 404.
Exits non-zero if a write was lost, a forgotten memory came back, or any request answered 5xx.

The workload of issue 65 (16 clients on a 2,000-note brain, 80% recall with distinct queries, 20% capture):

    .venv/bin/python bench/load.py --threads 16 --notes 2000 --mix recall=80,capture=20

`--notes` imports that many notes (bench/scale.py's corpus) through POST /import and waits until they are indexed.
Every recall asks a query no request asked before (drawn from several thousand, made of the corpus's words:
everyday words, names, and paraphrases as long as people's questions). Before the clients start, the same mix is
sent by one client, one request at a time (`--serial` requests, drawn from the same pools, so never repeated), and
the server process's CPU time over it (user + system, every thread, from /proc) gives the CPU one request costs;
the machine's cores divided by it is the most requests per second the server could answer, which the load run's
rate is compared with.
"""

import argparse
import os
import platform
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.e2e.conftest import Server  # noqa: E402  (the same server harness the tests use)

sys.path.insert(0, str(ROOT / "bench"))
import workload  # noqa: E402
from scale import DAYS, PROJECTS  # noqa: E402
from scale import note as corpus_note  # noqa: E402

MIX = {"capture": 40, "append": 25, "recall": 30, "forget": 5}  # relative weights of each operation
REPEAT_SHARE = 0.05  # of captures: an exact repeat of an earlier note from the same thread
HOT = 4  # memories every thread appends to, so appends race on the same stream
PEOPLE = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Edsger", "Radia"]
VERBS = ["reviewed", "drafted", "approved", "questioned", "rewrote", "shipped", "postponed", "estimated"]
TOPICS = ["billing", "onboarding", "search", "pricing", "hiring", "security", "logging", "payments", "backup"]
NOUNS = ["plan", "migration", "proposal", "budget", "incident report", "roadmap", "checklist", "contract"]
SYLLABLES = ["ka", "lo", "mi", "ran", "tu", "vex", "sor", "pli", "den", "quo", "zar", "bel", "nim", "tor"]


def words(rng: random.Random, low: int, high: int) -> str:
    """Made-up words, so no two notes are near-identical by accident."""
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
                    for _ in range(rng.randint(low, high)))


def note(rng: random.Random, tag: str) -> str:
    return (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} {rng.choice(NOUNS)}: "
            f"{words(rng, 4, 8)} (load {tag})")


def distinct_queries(seed: int = 65) -> list[str]:
    """Several thousand different queries over scale.py's corpus, shuffled: everyday words, names and verbs, and
    paraphrases (bench/workload.py's, every combination), none asked twice by a run."""
    asked = {
        *(f"{t} {n} for {p}" for t in TOPICS for n in NOUNS for p in PROJECTS),
        *(f"the {t} {n} on {d}" for t in TOPICS for n in NOUNS for d in DAYS),
        *(f"{who} {v} the {t} {n}" for who in PEOPLE for v in VERBS for t in TOPICS for n in NOUNS),
        *(form.format(v=workload.VERB_MEANS[v], n=workload.NOUN_MEANS[n], t=workload.TOPIC_MEANS[t])
          for form in workload.PARAPHRASE_FORMS for v in VERBS for t in TOPICS for n in NOUNS),
    }
    ordered = sorted(asked)
    random.Random(seed).shuffle(ordered)
    return ordered


def server_cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system, over all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def outcome_of(body: dict) -> str:
    """What a capture's answer says it did."""
    if body.get("duplicate"):
        return "blocked"
    if "resolved_conflict" in body:
        return "contradiction"
    if "kept_canonical" in body:
        return "draft"
    return body.get("action") or body.get("warning") or "stored"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")


class Queries:
    """The distinct queries, each handed out once (None when all are asked; then a made-up one is asked)."""

    def __init__(self, given: list[str]) -> None:
        self._left, self._lock, self.asked = list(reversed(given)), threading.Lock(), 0

    def next(self) -> str | None:
        with self._lock:
            if not self._left:
                return None
            self.asked += 1
            return self._left.pop()


@dataclass
class Ledger:
    """Every write the service acknowledged, and what each route answered."""

    contents: dict[str, str] = field(default_factory=dict)  # memory id -> the text its capture sent
    additions: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    forgotten: set[str] = field(default_factory=set)
    uncertain: set[str] = field(default_factory=set)  # a forget with no answer: either state is right
    hot: list[str] = field(default_factory=list)
    pool: list[str] = field(default_factory=list)  # append and forget targets
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    outcomes: Counter = field(default_factory=Counter)  # what each capture's answer said it did
    lock: threading.Lock = field(default_factory=threading.Lock)

    def request(self, client: httpx.Client, route: str, method: str, path: str, **kw) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = client.request(method, path, **kw)
        except httpx.TransportError as error:
            with self.lock:
                self.statuses[route][type(error).__name__] += 1
            return None
        with self.lock:
            self.latencies[route].append((time.perf_counter() - started) * 1000)
            self.statuses[route][response.status_code] += 1
        return response

    def captured(self, memory_id: str, content: str, hot: bool = False) -> None:
        with self.lock:
            self.contents[memory_id] = content
            (self.hot if hot else self.pool).append(memory_id)


class Worker:
    """One client thread: a random mix of operations until the deadline."""

    def __init__(self, number: int, server: Server, ledger: Ledger, deadline: float, mix: dict[str, int],
                 queries: "Queries") -> None:
        self.number, self.ledger, self.deadline, self.mix, self.queries = number, ledger, deadline, mix, queries
        self.client = server.client()
        self.rng = random.Random(number)
        self.sent: list[tuple[str, str]] = []  # this thread's stored notes and their ids: the exact repeats
        self.count = 0

    def run(self) -> None:
        with self.client:
            while time.monotonic() < self.deadline:
                self.step()

    def step(self) -> None:
        """One operation, drawn from the mix."""
        self.count += 1
        getattr(self, self.rng.choices(list(self.mix), weights=list(self.mix.values()))[0])()

    def capture(self) -> None:
        repeat = bool(self.sent) and self.rng.random() < REPEAT_SHARE
        content, original = (self.rng.choice(self.sent) if repeat
                             else (note(self.rng, f"{self.number}-{self.count}"), ""))
        response = self.ledger.request(self.client, "capture", "POST", "/capture",
                                       json={"content": content, "tags": ["load"]})
        if response is None or response.status_code != 200:
            return
        body = response.json()
        kind = "repeat" if repeat else "new"
        outcome = outcome_of(body)
        with self.ledger.lock:
            if repeat and outcome != "blocked":  # the original changed since: a repeat need not be blocked then
                outcome += (" (original forgotten)" if original in self.ledger.forgotten else
                            " (original appended to)" if original in self.ledger.additions else "")
            self.ledger.outcomes[f"{kind} {outcome}"] += 1
        if outcome == "blocked":  # nothing was written
            return
        if body.get("action") in ("merged", "replaced"):
            with self.ledger.lock:  # its text is now what the merge wrote: check presence only
                self.ledger.contents[body["id"]] = ""
            return
        self.ledger.captured(body["id"], content)
        self.sent.append((content, body["id"]))

    def append(self) -> None:
        with self.ledger.lock:
            targets = self.ledger.hot if self.rng.random() < 0.5 or not self.ledger.pool else self.ledger.pool
            memory_id = self.rng.choice(targets)
        addition = f"Follow-up {self.number}-{self.count}: {words(self.rng, 2, 5)}."
        response = self.ledger.request(self.client, "append", "POST", "/append",
                                       json={"id": memory_id, "addition": addition})
        if response is not None and response.status_code == 200:
            with self.ledger.lock:
                self.ledger.additions[memory_id].append(addition)

    def recall(self) -> None:
        query = self.queries.next() or f"{self.rng.choice(TOPICS)} {self.rng.choice(NOUNS)} {words(self.rng, 1, 2)}"
        self.ledger.request(self.client, "recall", "GET", "/recall", params={"query": query})

    def forget(self) -> None:
        with self.ledger.lock:
            if not self.ledger.pool:
                return
            memory_id = self.ledger.pool.pop(self.rng.randrange(len(self.ledger.pool)))
        response = self.ledger.request(self.client, "forget", "POST", "/forget", json={"id": memory_id})
        with self.ledger.lock:
            if response is None or response.status_code >= 500:
                self.ledger.uncertain.add(memory_id)
            elif response.status_code == 200:
                self.ledger.forgotten.add(memory_id)


def verify(server: Server, ledger: Ledger, threads: int) -> Counter:
    """Read every acknowledged write back from the restarted server."""
    def check(memory_id: str, client: httpx.Client) -> str:
        response = ledger.request(client, "verify", "GET", "/entry", params={"id": memory_id})
        if response is None or response.status_code >= 500:
            return "unreadable"
        if memory_id in ledger.forgotten:
            return "forgotten, absent" if response.status_code == 404 else "forgotten, still present"
        if response.status_code != 200:
            return "capture lost"
        content = response.json()["entry"]["content"]
        if ledger.contents[memory_id] not in content:
            return "capture text lost"
        if any(f"]: {a}" not in content for a in ledger.additions.get(memory_id, [])):
            return "addition lost"
        return "present, intact"

    local, clients = threading.local(), []

    def checked(memory_id: str) -> str:
        if not hasattr(local, "client"):
            local.client = server.client()
            clients.append(local.client)
        return check(memory_id, local.client)

    ids = [i for i in ledger.contents if i not in ledger.uncertain]
    with ThreadPoolExecutor(threads) as pool:
        results = Counter(pool.map(checked, ids))
    for client in clients:
        client.close()
    return results


def report(ledger: Ledger, elapsed: float, results: Counter, mix: dict[str, int], capacity: float | None) -> int:
    total = sum(len(v) for r, v in ledger.latencies.items() if r not in ("verify", "serial"))
    print(f"\n{total} answered requests in {elapsed:.1f} s: {total / elapsed:.0f} requests/s"
          + (f", {total / elapsed / capacity:.0%} of the {capacity:.0f}/s the cores allow" if capacity else ""))
    print(f"{'route':<8} {'n':>6} {'/s':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  answers")
    for route in [*mix, "verify"]:
        times, statuses = ledger.latencies[route], ledger.statuses[route]
        answers = ", ".join(f"{s} x{n}" for s, n in sorted(statuses.items(), key=str))
        rate = len(times) / elapsed if route != "verify" else float("nan")
        print(f"{route:<8} {len(times):>6} {rate:>6.0f} {percentile(times, 50):>8.1f} {percentile(times, 95):>8.1f} "
              f"{percentile(times, 99):>8.1f}  {answers}")
    print("captures: " + ", ".join(f"{k} {n}" for k, n in sorted(ledger.outcomes.items())))
    appended = sum(len(v) for v in ledger.additions.values())
    print(f"ledger: {len(ledger.contents)} memories, {appended} additions, {len(ledger.forgotten)} forgotten, "
          f"{len(ledger.uncertain)} forgets unanswered (not checked)")
    print("after restart: " + ", ".join(f"{k} {n}" for k, n in sorted(results.items())))
    lost = sum(n for k, n in results.items() if "lost" in k or k == "unreadable")
    unforgotten = results["forgotten, still present"]
    errors = sum(n for statuses in ledger.statuses.values() for s, n in statuses.items()
                 if isinstance(s, int) and s >= 500)
    unanswered = sum(n for statuses in ledger.statuses.values() for s, n in statuses.items() if isinstance(s, str))
    print(f"lost: {lost}  unforgotten: {unforgotten}  5xx: {errors}  no answer: {unanswered}")
    return 1 if lost or unforgotten or errors else 0


def seed(api: httpx.Client, count: int) -> None:
    """`count` notes of scale.py's corpus imported, and waited for until every one is indexed."""
    entries = [{"id": f"seed-{n}", "content": corpus_note(random.Random(n), n, rare=False), "tags": ["seed"],
                "created_at": 1_700_000_000_000 + n * 1000} for n in range(count)]
    for start in range(0, count, 1000):
        api.post("/import", params={"limit": 1000}, json={"entries": entries[start : start + 1000]},
                 timeout=600).raise_for_status()
    started = time.monotonic()
    while api.get("/stats").json()["unvectorized"]:
        time.sleep(1)
    print(f"{count} notes imported and indexed in {time.monotonic() - started:.0f} s", flush=True)


def serial_capacity(server: Server, mix: dict[str, int], queries: Queries, requests: int) -> float:
    """Requests per second the machine's cores allow: the same mix from one client, a request at a time, and the
    server's CPU time over it (every thread, the indexer's work for those captures included) per request."""
    ledger = Ledger()
    worker = Worker(-1, server, ledger, float("inf"), mix, queries)
    assert server.process is not None
    with worker.client:
        time.sleep(2)  # what the import's indexing left running settles
        cpu, started = server_cpu_seconds(server.process.pid), time.monotonic()
        for _ in range(requests):
            worker.step()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and worker.client.get("/stats").json()["unvectorized"]:
            time.sleep(0.2)  # the captures' indexing is part of their cost
        spent, elapsed = server_cpu_seconds(server.process.pid) - cpu, time.monotonic() - started
    per_request = spent / requests
    for route, times in ledger.latencies.items():
        print(f"  one client alone, {route}: p50 {percentile(times, 50):.1f} ms over {len(times)}")
    capacity = (os.cpu_count() or 1) / per_request
    print(f"one client alone: {requests} requests in {elapsed:.1f} s, server CPU {spent:.1f} s: "
          f"{per_request * 1000:.1f} ms a request, so {os.cpu_count()} cores allow {capacity:.0f} requests/s",
          flush=True)
    return capacity


def run(data_dir: Path, threads: int, seconds: float, mix: dict[str, int], notes: int, serial: int) -> int:
    ledger = Ledger()
    queries = Queries(distinct_queries())
    server = Server(data_dir, in_process=False).start()
    capacity = None
    try:
        with server.client() as api:
            if notes:
                seed(api, notes)
            rng = random.Random(-1)
            for n in range(HOT):
                content = note(rng, f"hot-{n}")
                ledger.captured(api.post("/capture", json={"content": content}).json()["id"], content, hot=True)
        if serial:
            capacity = serial_capacity(server, mix, queries, serial)
        assert server.process is not None
        cpu, started = server_cpu_seconds(server.process.pid), time.monotonic()
        workers = [Worker(n, server, ledger, started + seconds, mix, queries) for n in range(threads)]
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(Worker.run, workers))
        elapsed = time.monotonic() - started
        busy = (server_cpu_seconds(server.process.pid) - cpu) / elapsed
        print(f"distinct queries asked: {queries.asked}; the server used {busy:.2f} of {os.cpu_count()} cores",
              flush=True)
    finally:
        output = server.stop()
    print(f"server stopped with exit code {server.process.returncode}; its log: "
          + ", ".join(f"{level} {sum(f' {level} ' in line for line in output.splitlines())}"
                      for level in ("INFO", "WARNING", "ERROR")))
    if server.process.returncode not in (0, -signal.SIGTERM):
        print(output[-2000:])
    restarted = Server(data_dir, in_process=False).start()
    try:
        results = verify(restarted, ledger, threads)
    finally:
        restarted.stop()
    return report(ledger, elapsed, results, mix, capacity)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--dir", default=str(ROOT / "bench/results"), help="where the fresh data directory goes")
    parser.add_argument("--mix", default=",".join(f"{k}={v}" for k, v in MIX.items()),
                        help="relative weights, e.g. recall=80,capture=20")
    parser.add_argument("--notes", type=int, default=0, help="notes imported (and indexed) before the clients start")
    parser.add_argument("--serial", type=int, default=300, help="requests sent one at a time first (0: none)")
    args = parser.parse_args()
    mix = {name: int(weight) for name, weight in (part.split("=") for part in args.mix.split(","))}
    assert set(mix) <= set(MIX), f"--mix names one of {', '.join(MIX)}"
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}")
    print(f"{args.threads} threads for {args.seconds:.0f} s; mix " + ", ".join(f"{k} {v}%" for k, v in mix.items())
          + f"; {REPEAT_SHARE:.0%} of captures exact repeats; half the appends to {HOT} shared memories")
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="load-", dir=args.dir))
    code = run(data_dir / "brain", args.threads, args.seconds, mix, args.notes, args.serial)
    if code:
        print(f"data kept for inspection: {data_dir}")
    else:
        shutil.rmtree(data_dir)
    sys.exit(code)


if __name__ == "__main__":
    main()
