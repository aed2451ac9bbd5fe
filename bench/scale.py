"""Recall latency at 10k and 100k memories over HTTP, and the server's memory, on one growing brain.

Usage: .venv/bin/python bench/scale.py [--sizes 10000 100000] [--repeat 50] [--dir bench/results]

Synthetic notes are loaded in-process (through the call POST /import makes, then the real local embedder,
whose rate is printed), then `brain serve`
answers three queries over HTTP: a rare word (in 10 memories at every size), a common word (in
about 30% of memories) and a paraphrase (no word in common with the notes it should find). Each
size is measured twice: the full pipeline, and keyword only (BRAIN_EMBEDDER=none), whose rare-word
cost should track the number of matches, not the number of memories.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from second_brain.app.memories import Context  # noqa: E402
from second_brain.app.transfer import parse_payload  # noqa: E402
from second_brain.bootstrap import build  # noqa: E402
from second_brain.domain.identity import owner  # noqa: E402
from second_brain.settings import Settings  # noqa: E402
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
    "common word": "meeting notes",
    "paraphrase": "who is taking care of moving customers to the new way we charge them",
}


def note(rng: random.Random, n: int, rare: bool) -> str:
    words = " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(2, 6)))
    text = (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} the {rng.choice(TOPICS)} {rng.choice(NOUNS)} for "
            f"{rng.choice(PROJECTS)} on {rng.choice(DAYS)}; {words} (ref {n})")
    if rng.random() < 0.3:
        text += ". Follow up in the weekly meeting notes."
    if rare:
        text += " Spotted a quokka on the office webcam."
    return text


def load(data_dir: Path, start: int, stop: int, rare: set[int]) -> float:
    """Restore the notes through the import route's own call, in pages of 1,000, then index them all."""
    started = time.perf_counter()
    brain = build(Settings(data_dir=data_dir, sqlite_synchronous="OFF"))
    if brain.worker:
        brain.worker.stop()  # the indexing below is timed on its own
    ctx = Context(owner(), "bench-load")
    rng = random.Random(start)
    entries = [{"id": f"note-{n}", "content": note(rng, n, rare=n in rare), "tags": ["bench"], "source": "bench",
                "created_at": 1_700_000_000_000 + n * 1000} for n in range(start, stop)]
    payload = parse_payload({"version": 3, "entries": entries})
    offset = 0
    while offset < len(entries):
        offset = brain.transfer.import_page(ctx, payload, 1000, offset)["next_offset"]
    pending, indexing = brain.vectors.pending_count(), time.perf_counter()
    while brain.indexer.run_once(4096).remaining:
        pass
    seconds = time.perf_counter() - indexing
    print(f"indexed {pending} memories in {seconds:.0f} s: {pending / seconds:.0f} memories/s with "
          f"{brain.indexer.embedder.model_id} (one core; embedding, storing vectors, inferring links)", flush=True)
    brain.close()
    return time.perf_counter() - started


def rss_mb(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    read = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in status if line.startswith(("VmRSS", "VmHWM"))}
    return read["VmRSS"], read["VmHWM"]


def measure(data_dir: Path, repeat: int, keyword_only: bool) -> dict:
    server = Server(data_dir, env={"BRAIN_EMBEDDER": "none"} if keyword_only else {}).start()
    figures: dict = {}
    try:
        with server.client() as api:
            for name, query in QUERIES.items():
                for _ in range(5):  # warm caches; the first recalls of a memory also record it
                    api.get("/recall", params={"query": query})
                times = []
                for _ in range(repeat):
                    started = time.perf_counter()
                    response = api.get("/recall", params={"query": query})
                    times.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200
                results = response.json()["results"]
                times.sort()
                figures[name] = (statistics.median(times), times[int(0.95 * (len(times) - 1))], len(results),
                                 results[0]["content"][:60] if results else "")
        figures["rss"] = rss_mb(server.process.pid)
    finally:
        server.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--dir", default=str(ROOT / "bench/results"))
    parser.add_argument("--measure", type=Path, help="only measure this already loaded brain directory")
    args = parser.parse_args()
    if args.measure:
        report(f"{args.measure}", args.measure, args.repeat)
        return
    data_dir = Path(args.dir) / f"scale-{int(time.time())}"
    rare = set(range(0, args.sizes[0], args.sizes[0] // 10))  # ten quokkas, whatever the size
    loaded = 0
    for size in args.sizes:
        seconds = load(data_dir, loaded, size, rare)
        loaded = size
        report(f"{size} memories (loaded in {seconds:.0f}s)", data_dir, args.repeat)


def report(title: str, data_dir: Path, repeat: int) -> None:
    print(f"\n== {title} ==", flush=True)
    for mode, keyword_only in (("full pipeline", False), ("keyword only", True)):
        figures = measure(data_dir, repeat, keyword_only)
        rss, peak = figures.pop("rss")
        print(f"{mode}: server RSS {rss:.0f} MB (peak {peak:.0f} MB)")
        for name, (p50, p95, count, first) in figures.items():
            print(f"  {name:<12} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  {count} results  top: {first!r}", flush=True)


if __name__ == "__main__":
    main()
