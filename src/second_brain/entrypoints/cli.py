"""The `brain` command: serve, mcp, export, import, replay, maintenance, timeline, version. Each command calls the
application's operations (app/operations/) or, to rebuild what the log projects, the composition root.

The brain is imported by the command that needs it, not here: `serve` and `mcp` first start loading the embedding
model on a thread, so it loads on one core while the rest of the brain is imported on the other (an MCP client
starts `brain mcp` for every session, and waits for its first answer)."""

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from .. import __version__
from ..settings import Settings

SWITCH_INTERVAL = 0.001  # seconds a thread runs before one waiting for the interpreter gets it (`brain serve`)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="brain", description="Second Brain: a memory service for people and agents.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve the REST API on one embedded brain")
    serve.add_argument("--host", help="interface to bind (default 127.0.0.1, or BRAIN_HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (default 8787, or BRAIN_PORT)")
    serve.add_argument("--data-dir", type=Path, help="where the brain is stored (default ./data, or BRAIN_DATA_DIR)")

    replay = commands.add_parser("replay", help="drop every projection and rebuild it from the event log")
    replay.add_argument("--data-dir", type=Path, help="where the brain is stored (with --until: the new copy)")
    replay.add_argument("--until", help="materialise the brain as it was at this moment (ISO 8601, offsetless in "
                        "TIMEZONE, or Unix ms) into a new --data-dir; the brain itself is only read")
    replay.add_argument("--from", dest="source", type=Path, help="with --until: the brain to read (default "
                        "BRAIN_DATA_DIR or ./data)")
    replay.add_argument("--aws", action="store_true", help="rebuild the OpenSearch indexes from the DynamoDB log "
                        "(BRAIN_EVENTS_TABLE, BRAIN_OPENSEARCH_URL and the embedder settings)")
    replay.add_argument("--after", type=int, help="with --aws: keep the indexes and project only the events after "
                        "this position (the one a replay printed): the catch-up once the functions are switched")

    mcp = commands.add_parser("mcp", help="serve the MCP tools over stdio, for desktop AI clients")
    mcp.add_argument("--data-dir", type=Path, help="where the brain is stored")

    export = commands.add_parser("export", help="write every memory, edge and project to a JSON file (format 3)")
    export.add_argument("file", type=Path)
    export.add_argument("--data-dir", type=Path, help="where the brain is stored")

    restore = commands.add_parser("import", help="restore an export (this brain's or the reference product's)")
    restore.add_argument("file", type=Path)
    restore.add_argument("--data-dir", type=Path, help="where the brain is stored (stop `brain serve` first)")
    restore.add_argument("--page", type=int, default=500, help="entries or edges per atomic step (max 1000)")

    upkeep = commands.add_parser("maintenance", help="run the nightly maintenance now (stop `brain serve` first, "
                                 "or POST /maintenance/run to it)")
    upkeep.add_argument("job", nargs="?", help="one job to run (default: every nightly job); --list names them")
    upkeep.add_argument("--list", action="store_true", help="list the jobs and their latest runs")
    upkeep.add_argument("--data-dir", type=Path, help="where the brain is stored")

    feed = commands.add_parser("timeline", help="print the audit trail: who changed what and when, newest first")
    feed.add_argument("--id", help="only this memory's events and those of the links touching it")
    feed.add_argument("--actor", help="only events by this author: a roster name, user id or `system`")
    feed.add_argument("--type", action="append", help="only these events (repeat): created, updated, ...")
    feed.add_argument("--after", help="only events at/after this moment (ISO 8601 or Unix ms)")
    feed.add_argument("--before", help="only events at/before this moment (ISO 8601 or Unix ms)")
    feed.add_argument("--limit", type=int, default=50, help="events to print (default 50)")
    feed.add_argument("--cursor", type=int, help="continue below this log position (the cursor a page ended on)")
    feed.add_argument("--json", action="store_true", help="print the pages as JSON lines")
    feed.add_argument("--data-dir", type=Path, help="where the brain is stored")
    commands.add_parser("version", help="print the version")

    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"second-brain {__version__}")
        return 0
    overrides = {k: v for k, v in vars(args).items() if k in ("host", "port", "data_dir") and v is not None}
    settings = Settings(**overrides)
    from ..domain.errors import NewerFormat

    try:
        return _run(args, settings)
    except NewerFormat as exc:  # a brain this build cannot read: said in words, and nothing written to it
        print(f"brain {args.command}: {exc.message}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "replay" and args.until is not None:
        if args.aws:
            print("--until materialises a local brain: it does not go with --aws", file=sys.stderr)
            return 2
        return _replay_until(args.until, args.source, args.data_dir)
    if args.command == "replay":
        if args.after is not None and not args.aws:
            print("--after is for a replay of the AWS log (--aws)", file=sys.stderr)
            return 2
        return replay_aws(settings, args.after) if args.aws else _replay(settings)
    if args.command == "mcp":
        return _mcp(settings)
    if args.command == "export":
        return _export(settings, args.file)
    if args.command == "import":
        return _import(settings, args.file, args.page)
    if args.command == "maintenance":
        return _maintenance(settings, args.job, args.list)
    if args.command == "timeline":
        return _timeline(settings, args)
    return _serve(settings)


def _serve(settings: Settings) -> int:
    import logging

    from ..embedding import load_embedder

    # Our own log format, set before anything logs: the MCP server's rich handler is only added when none is set
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    embedder = load_embedder(settings, threads=1, background=True)  # first: it loads while the rest is imported

    import uvicorn

    from ..bootstrap import build, limit_malloc_arenas, resolve_token
    from .api.app import create_app

    # Before the indexer's and the server's threads: the model's, started first, has taken the second arena; glibc
    # fixes its arena limit only once there are eight, so capping it now still holds the process to two.
    limit_malloc_arenas()
    # A recall's two arms run on two threads (the query's embedding and nearest memories beside its keyword search),
    # and the event loop, the recall counts and the indexer share the interpreter with them: a thread waiting for
    # it waited up to the 5 ms default switch interval. 1 ms: on the 100k brain, 300 distinct recalls over HTTP,
    # p50 14.6-15.0 -> 13.7-14.0 ms and p95 26.4-27.8 -> 24.2-26.2 ms.
    sys.setswitchinterval(SWITCH_INTERVAL)

    brain = build(settings, embedder=embedder)
    token, generated = resolve_token(settings)
    if generated:
        print(f"Generated an owner token (saved to {settings.token_path}, shown only this once):\n\n  {token}\n",
              flush=True)
    print(f"Second Brain {__version__} serving http://{settings.host}:{settings.port} "
          f"(data in {settings.data_dir.resolve()})", flush=True)
    brain.start(schedule=True)
    # uvicorn stops gracefully on SIGTERM, then raises the signal again once its own handler is gone: with the
    # default one the process died there, before the brain was closed (its workers stopped mid-task, the log's WAL
    # left beside the file). This handler turns it into an exception, so the brain closes, and the exit is clean.
    signal.signal(signal.SIGTERM, _stopped)
    try:
        uvicorn.run(create_app(brain, token), host=settings.host, port=settings.port, log_level="warning")
    except (Stopped, KeyboardInterrupt):
        pass
    finally:
        brain.close()
    return 0


class Stopped(Exception):
    """SIGTERM, once the server has stopped serving."""


def _stopped(signum: int, frame: object) -> None:
    raise Stopped


def _mcp(settings: Settings) -> int:
    """MCP over stdin/stdout: the client launched us, so the caller is the brain's owner. Logs go to stderr."""
    import logging

    from ..embedding import load_embedder

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    embedder = load_embedder(settings, threads=1, background=True)  # first: it loads while the rest is imported

    from functools import partial

    from ..app import operations as ops
    from ..bootstrap import build
    from .mcp import build_mcp

    brain = build(settings, embedder=embedder)
    brain.start()
    try:
        build_mcp(brain, partial(ops.owner_identity, brain)).run("stdio")
    finally:
        brain.close()
    return 0


def _export(settings: Settings, file: Path) -> int:
    from ..app import operations as ops
    from ..app.handling import Context
    from ..bootstrap import build

    brain = build(settings)
    try:
        backup = ops.export(brain, Context(ops.owner_identity(brain), "cli-export"))
    finally:
        brain.close()
    file.write_text(json.dumps(backup, ensure_ascii=False))
    print(f"Exported {len(backup['entries'])} memories, {len(backup['edges'])} edges and "
          f"{len(backup['projects'])} projects to {file}")
    return 0


def _import(settings: Settings, file: Path, page: int) -> int:
    """Restore page by page, each page one atomic append: an interrupted run is resumed by running it again."""
    from ..app import operations as ops
    from ..app.handling import Context
    from ..bootstrap import build
    from ..domain.errors import BrainError

    try:
        payload = ops.read_backup(json.loads(file.read_text()))
    except (OSError, ValueError, BrainError) as exc:
        print(f"Cannot import {file}: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 1
    brain = build(settings)
    ctx = Context(ops.owner_identity(brain), "cli-import")
    totals: dict[str, int] = {}
    offset = edge_offset = 0
    total = len(payload.entries) + len(payload.edges)
    try:
        while True:
            report = ops.import_page(brain, ctx, payload, page, offset, edge_offset)
            for key, value in report.items():
                if isinstance(value, int) and key.endswith(("imported", "skipped", "failed")):
                    totals[key] = totals.get(key, 0) + value
            for failure in report["results"]:
                print(f"  failed: {failure}", file=sys.stderr)
            offset, edge_offset = report["next_offset"], report["next_edge_offset"]
            _progress(offset + edge_offset, total)
            if not report["remaining_entries"] and not report["remaining_edges"]:
                break
        print(file=sys.stderr)
        print(", ".join(f"{k} {v}" for k, v in totals.items()))
        if (passes := ops.embed_pending(brain)) is not None:
            print("Embedding the restored memories for semantic search (keyword search works already)...")
            remaining = waiting = 0
            for remaining, waiting in passes:
                _progress(waiting - remaining, waiting, "embedded")
            if remaining:
                print(f"\n{remaining} memories could not be embedded now; `brain serve` retries them",
                      file=sys.stderr)
            _progress(waiting, waiting, "embedded")
            print(file=sys.stderr)
    finally:
        brain.close()
    return 0


def _timeline(settings: Settings, args: argparse.Namespace) -> int:
    """The owner's audit feed, page after page until --limit events are printed or the log begins."""
    from ..app import operations as ops
    from ..app.handling import Context
    from ..app.past.timeline import MAX_LIMIT
    from ..bootstrap import build
    from ..domain.errors import BrainError
    from .mcp.render import render_timeline

    brain = build(settings)
    ctx = Context(ops.owner_identity(brain), "cli-timeline")
    left, cursor = max(1, args.limit), args.cursor
    try:
        while left:
            page = ops.timeline(brain, ctx, memory_id=args.id, actor=args.actor, types=args.type, after=args.after,
                                before=args.before, cursor=cursor, limit=min(left, MAX_LIMIT))
            print(json.dumps(page, ensure_ascii=False) if args.json else render_timeline(page), flush=True)
            left -= len(page["timeline"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
    except BrainError as exc:
        print(exc.message, file=sys.stderr)
        return 2
    finally:
        brain.close()
    return 0


def _maintenance(settings: Settings, job: str | None, listing: bool) -> int:
    """Run the nightly jobs (or one) in this process, printing each run's summary as it finishes."""
    from ..app import operations as ops
    from ..app.handling import Context
    from ..bootstrap import build
    from ..domain.errors import BrainError

    brain = build(settings)
    ctx = Context(ops.owner_identity(brain), "cli-maintenance")
    try:
        if listing:
            for row in ops.maintenance_status(brain, ctx)["jobs"]:
                last = row["last"]
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last["finished_at"] / 1000)) if last else "never"
                print(f"{row['job']:<14} {row['schedule']:<8} last run {when}")
            return 0
        started = time.perf_counter()
        try:
            for name, summary in ops.run_jobs(brain, ctx, job):
                print(f"{name}: {_summary_line(summary)} ({time.perf_counter() - started:.1f}s)", flush=True)
                started = time.perf_counter()
        except BrainError as exc:
            print(exc.message, file=sys.stderr)
            return 2
    finally:
        brain.close()
    return 0


def _summary_line(summary: dict) -> str:
    if "skipped" in summary:
        return f"skipped, {summary['skipped']}"
    counts = ", ".join(f"{k} {v}" for k, v in summary["counts"].items()) or "nothing to do"
    errors = f"; errors: {'; '.join(summary['errors'])}" if summary["errors"] else ""
    more = "" if summary["complete"] else "; more left for the next run"
    return counts + more + errors


def _progress(done: int, total: int, label: str = "restored", width: int = 30) -> None:
    filled = width * done // max(total, 1)
    print(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)


def replay_aws(settings: Settings, after: int | None = None) -> int:
    """Fresh OpenSearch indexes from the whole DynamoDB log, then embeddings for every memory; with `after`, a
    catch-up of the events past that position into the indexes there are."""
    try:
        from ..aws.composition import ReplayRefused, replay
    except ImportError as missing:  # `make run`'s venv holds the local extra only
        print(f"brain replay --aws needs the aws extra ({missing.name} is not installed): "
              ".venv/bin/pip install -e '.[aws]'", file=sys.stderr)
        return 2

    started = time.perf_counter()
    try:
        done = replay(settings, lambda events: print(f"\rprojected {events} events", end="", file=sys.stderr,
                                                     flush=True), after=after)
    except ReplayRefused as refused:
        print(str(refused), file=sys.stderr)
        return 2
    print(file=sys.stderr)
    what = "Caught up" if after is not None else "Replayed"
    print(f"{what} {done.events} events into {settings.opensearch_prefix}-* and embedded {done.embedded} memories "
          f"in {time.perf_counter() - started:.1f}s, up to position {done.position}. Writes made since: "
          f"`brain replay --aws --after {done.position}` once the functions write to this prefix")
    return 0


def _replay_until(until: str, source: Path | None, copy: Path | None) -> int:
    """A new brain in `copy` holding the log up to `until` (positions and erasures kept), its projections rebuilt."""
    from zoneinfo import ZoneInfo

    from ..app.reminders.time_anchors import parse_when
    from ..bootstrap import materialise
    from ..domain.errors import BrainError

    origin = Settings(data_dir=source) if source else Settings()
    if copy is None:
        print("--until needs --data-dir: the new directory to materialise the brain into", file=sys.stderr)
        return 2
    try:
        moment = parse_when(until, ZoneInfo(origin.timezone), "--until")
    except BrainError as exc:
        print(exc.message, file=sys.stderr)
        return 2
    if not origin.database_path.exists():
        print(f"No brain at {origin.database_path}", file=sys.stderr)
        return 1
    if copy.exists() and (not copy.is_dir() or any(copy.iterdir())):
        print(f"{copy} is not empty: give a new directory for the copy", file=sys.stderr)
        return 1
    started = time.perf_counter()
    count = materialise(origin, copy, moment, lambda read, total: _progress(read, total, "copied"))
    print(file=sys.stderr)
    print(f"Materialised {count} events up to {until} ({moment}) from {origin.data_dir} into {copy} "
          f"in {time.perf_counter() - started:.2f}s")
    return 0


def _replay(settings: Settings) -> int:
    from ..bootstrap import replay

    if not settings.database_path.exists():
        print(f"No brain at {settings.database_path}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    count, projections = replay(settings)
    print(f"Replayed {count} events into {projections} projection(s) in {time.perf_counter() - started:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
