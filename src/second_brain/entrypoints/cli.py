"""The `brain` command: serve, mcp, replay, version."""

import argparse
import sys
import time
from pathlib import Path

from .. import __version__
from ..bootstrap import build, resolve_token
from ..settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="brain", description="Second Brain: a memory service for people and agents.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve the REST API on one embedded brain")
    serve.add_argument("--host", help="interface to bind (default 127.0.0.1, or BRAIN_HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (default 8787, or BRAIN_PORT)")
    serve.add_argument("--data-dir", type=Path, help="where the brain is stored (default ./data, or BRAIN_DATA_DIR)")

    replay = commands.add_parser("replay", help="drop every projection and rebuild it from the event log")
    replay.add_argument("--data-dir", type=Path, help="where the brain is stored")

    mcp = commands.add_parser("mcp", help="serve the MCP tools over stdio, for desktop AI clients")
    mcp.add_argument("--data-dir", type=Path, help="where the brain is stored")

    commands.add_parser("version", help="print the version")

    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"second-brain {__version__}")
        return 0
    overrides = {k: v for k, v in vars(args).items() if k in ("host", "port", "data_dir") and v is not None}
    settings = Settings(**overrides)
    if args.command == "replay":
        return _replay(settings)
    if args.command == "mcp":
        return _mcp(settings)
    return _serve(settings)


def _serve(settings: Settings) -> int:
    import uvicorn

    from .api.app import create_app

    brain = build(settings)
    token, generated = resolve_token(settings)
    if generated:
        print(f"Generated an owner token (saved to {settings.token_path}, shown only this once):\n\n  {token}\n",
              flush=True)
    print(f"Second Brain {__version__} serving http://{settings.host}:{settings.port} "
          f"(data in {settings.data_dir.resolve()})", flush=True)
    brain.start()
    try:
        uvicorn.run(create_app(brain, token), host=settings.host, port=settings.port, log_level="warning")
    finally:
        brain.close()
    return 0


def _mcp(settings: Settings) -> int:
    """MCP over stdin/stdout: the client launched us, so the caller is the brain's owner. Logs go to stderr."""
    import logging

    from .mcp_server import build_mcp

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    brain = build(settings)
    brain.start()
    try:
        build_mcp(brain, lambda: brain.owner).run("stdio")
    finally:
        brain.close()
    return 0


def _replay(settings: Settings) -> int:
    if not settings.database_path.exists():
        print(f"No brain at {settings.database_path}", file=sys.stderr)
        return 1
    brain = build(settings)
    started = time.perf_counter()
    count = brain.store.rebuild_projections()
    print(f"Replayed {count} events into {len(brain.store.projections)} projection(s) "
          f"in {time.perf_counter() - started:.2f}s")
    brain.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
