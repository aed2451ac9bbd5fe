"""Integrations: a notes folder of --notes distinct Markdown notes (front matter, tags, [[wikilinks]]), or a mailbox
of --mails distinct messages on a real IMAP server (GreenMail, as the tests start it: `make test` fetches its jar),
synced into a real local brain (SQLite file, the packaged embedder loaded as `brain serve` loads it) through the
operations the routes call: POST /integrations (connect and first sync; again until complete, as the hourly job
would), then POST /integrations/sync after --edits items were edited (mail: --edits new messages) and --deletes
deleted, then once more with nothing changed. Each new mirror is judged as a capture is (its text embedded and
compared). Prints memories/s, each sync's time and this process's RSS: its peak from when the brain is built (the
notes or messages are made before, a few at a time), and over the whole run (GreenMail's JVM is not counted). The
vectors are left to the background indexer, as in a served brain (not timed here).

    .venv/bin/python bench/integrations.py --notes 10000
    .venv/bin/python bench/integrations.py --mails 10000
"""

import argparse
import os
import random
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support.greenmail starts the IMAP server

from second_brain.app import operations as ops
from second_brain.app.handling import Context
from second_brain.bootstrap import Brain, build
from second_brain.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import rss_mb  # (this process's RSS now and its peak, since the last reset_peak)

WORDS = ("harbour crane cable budget invoice roadmap meeting supplier heron quarry kestrel pricing floor renewal "
         "contract onboarding review launch migration backlog incident outage capacity hiring interview offer "
         "garden recipe lentil ferment travel visa passport flight dentist insurance premium mortgage lease").split()
TAGS = ("work", "home", "idea", "project", "reading", "health", "finance", "travel")


def note(rng: random.Random, n: int, names: list[str]) -> str:
    sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + f" ({n}-{s})."
                 for s in range(rng.randint(2, 8))]
    links = " ".join(f"[[{rng.choice(names)}]]" for _ in range(rng.randint(0, 3)))
    tags = ", ".join(rng.sample(TAGS, rng.randint(0, 3)))
    return f"---\ntags: [{tags}]\n---\n# Note {n}: {rng.choice(WORDS)} {rng.choice(WORDS)}\n\n" + \
        "\n".join(sentences) + (f"\n\nSee {links}\n" if links else "\n")


PEOPLE = ("Ana Reyes", "Bob Stone", "Carol Diaz", "Dev Patel", "Eve Moreau", "Femi Ade", "Gus Olsen", "Hana Sato")


def mail(rng: random.Random, n: int) -> EmailMessage:
    """A distinct message: a subject and a few sentences, some replying with quoted history and a signature."""
    sender = rng.choice(PEOPLE)
    made = EmailMessage()
    made["Subject"] = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} #{n}"
    made["From"] = f"{sender} <{sender.split()[0].lower()}@example.org>"
    made["To"] = "me@example.com"
    made["Date"] = format_datetime(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=37 * n))
    made["Message-ID"] = f"<bench-{n}@example.org>"
    body = "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + f" ({n}-{s})."
                     for s in range(rng.randint(2, 8)))
    if n and rng.random() < 0.3:
        made["In-Reply-To"] = f"<bench-{rng.randrange(n)}@example.org>"
        body += f"\n\nOn Mon, 5 Jan 2026, {rng.choice(PEOPLE)} wrote:\n> an earlier message\n\n-- \n{sender}\n"
    made.set_content(body)
    return made


class Upstream:
    """The connector, timed: how long the sync waited on the server (GreenMail answers a 50-message FETCH in
    about a second once 10,000 messages are in the folder, a real server in milliseconds)."""

    def __init__(self, connector: object) -> None:
        self.connector = connector
        self.seconds = 0.0

    def __getattr__(self, name: str) -> object:
        return getattr(self.connector, name)

    def items(self, settings: object, synced: object) -> object:
        found = self.connector.items(settings, synced)  # type: ignore[attr-defined]
        while True:
            started = time.perf_counter()
            try:
                item = next(found)
            except StopIteration:
                self.seconds += time.perf_counter() - started
                return
            self.seconds += time.perf_counter() - started
            yield item


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--mails", type=int, default=0, help="a mailbox of this many messages instead of notes")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--deletes", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(47)
    root = Path(tempfile.mkdtemp(prefix="bench-integrations-"))
    if args.mails:
        mailbox(args, rng, root)
        return
    vault = root / "vault"
    names = [f"note-{n:05}" for n in range(args.notes)]
    for n, name in enumerate(names):
        folder = vault / f"area-{n % 20:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.md").write_text(note(rng, n, names))
    print(f"{args.notes} notes, {sum(p.stat().st_size for p in vault.rglob('*.md')) / 1e6:.1f} MB, in {vault}")

    brain = build(Settings(data_dir=root / "brain"))
    print(f"brain built: RSS {rss_mb(os.getpid())[0]:.0f} MB")
    reset_peak()
    try:
        ctx = Context(brain.team.owner_identity(), "bench")
        started = time.perf_counter()
        connected = ops.connect_integration(brain, ctx, "notes", "Bench vault", {"path": str(vault)})
        first = time.perf_counter() - started
        integration_id, passes = completed(brain, ctx, connected)
        first = time.perf_counter() - started
        mirrors = brain.integrations.list(ctx)[0]["mirrors"]
        print(f"first sync: {mirrors} memories in {first:.1f} s over {passes} syncs of at most 500 changes: "
              f"{mirrors / first:.0f} memories/s")

        for path in rng.sample(sorted(vault.rglob("*.md")), args.edits + args.deletes)[:args.edits]:
            path.write_text(path.read_text() + f"\nEdited: {rng.choice(WORDS)} {rng.choice(WORDS)}.\n")
        remaining = sorted(vault.rglob("*.md"))
        for path in rng.sample(remaining, args.deletes):
            path.unlink()
        started = time.perf_counter()
        sync = ops.sync_integration(brain, ctx, integration_id)["sync"]
        print(f"sync after {args.edits} edits and {args.deletes} deletes: {time.perf_counter() - started:.1f} s "
              f"(updated {sync['updated']}, removed {sync['removed']}, unchanged {sync['unchanged']})")
        unchanged(brain, ctx, integration_id)
    finally:
        brain.close()


def completed(brain: Brain, ctx: Context, connected: dict[str, Any]) -> tuple[str, int]:
    """Sync again until a sync goes all through (each writes at most 500 changes: the hourly job would go on): the
    integration's id, and how many syncs that took with the connect's."""
    integration_id, sync = connected["integration"]["id"], connected["sync"]
    passes = 1
    while not sync["complete"]:
        sync = ops.sync_integration(brain, ctx, integration_id)["sync"]
        passes += 1
    return integration_id, passes


def unchanged(brain: Brain, ctx: Context, integration_id: str) -> None:
    """A sync with nothing changed upstream, timed; then the process's RSS, and its peak since the brain was built
    (the bench's own making of the notes or messages before is not the sync's), and over the whole run."""
    started = time.perf_counter()
    sync = ops.sync_integration(brain, ctx, integration_id)["sync"]
    print(f"sync with nothing changed: {time.perf_counter() - started:.1f} s (unchanged {sync['unchanged']})")
    now, peak = rss_mb(os.getpid())
    print(f"RSS {now:.0f} MB; peak since the brain was built {peak:.0f} MB; peak over the whole run "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def reset_peak() -> None:
    """Start the peak RSS over from now (Linux: `5` to clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


def mailbox(args: argparse.Namespace, rng: random.Random, root: Path) -> None:
    from tests.support.greenmail import GreenMail

    greenmail = GreenMail(root, heap="1g", long_lived=True).start()
    try:
        started = time.perf_counter()
        for start in range(0, args.mails, 500):  # a few at a time: 10,000 message objects take 750 MB here
            greenmail.append_all([mail(rng, n) for n in range(start, min(start + 500, args.mails))], "bench")
        print(f"{args.mails} messages appended to GreenMail in {time.perf_counter() - started:.1f} s")
        brain = build(Settings(data_dir=root / "brain", push_allow_loopback=True))
        print(f"brain built: RSS {rss_mb(os.getpid())[0]:.0f} MB")
        reset_peak()
        upstream = Upstream(brain.integrations.connectors["imap"])
        brain.integrations.connectors["imap"] = upstream  # type: ignore[assignment]
        try:
            ctx = Context(brain.team.owner_identity(), "bench")
            started = time.perf_counter()
            connected = ops.connect_integration(brain, ctx, "imap", "Bench mail", greenmail.settings("bench"))
            integration_id, passes = completed(brain, ctx, connected)
            first = time.perf_counter() - started
            mirrors = brain.integrations.list(ctx)[0]["mirrors"]
            print(f"first sync: {mirrors} memories in {first:.1f} s over {passes} syncs of at most 500 changes: "
                  f"{mirrors / first:.0f} memories/s; of it {upstream.seconds:.1f} s reading GreenMail, so the brain's "
                  f"own part: {mirrors / (first - upstream.seconds):.0f} memories/s")
            greenmail.append_all([mail(rng, args.mails + n) for n in range(args.edits)], "bench")
            for n in rng.sample(range(args.mails), args.deletes):
                greenmail.delete(f"bench-{n}@example.org", "bench")
            started = time.perf_counter()
            sync = ops.sync_integration(brain, ctx, integration_id)["sync"]
            print(f"sync after {args.edits} new messages and {args.deletes} deleted: "
                  f"{time.perf_counter() - started:.1f} s (created {sync['created']}, removed {sync['removed']}, "
                  f"unchanged {sync['unchanged']})")
            unchanged(brain, ctx, integration_id)
        finally:
            brain.close()
    finally:
        greenmail.stop()


if __name__ == "__main__":
    main()
