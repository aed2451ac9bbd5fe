"""Backups: export (now, or as the brain stood at a past moment) and import, page by page, in the reference's
version 3 format."""

from collections.abc import Callable
from typing import Any

from ..brain import Brain
from ..handling import Context
from ..past import as_of as past
from ..transfer import (
    ImportPayload,
    Parts,
    Staging,
    Window,
    body_digest,
    laid_out,
    parse_payload,
    staged,
    staged_window,
)


def export(brain: Brain, ctx: Context, as_of: str | int | None = None) -> dict[str, Any]:
    """Every memory, edge and project the caller can read; with `as_of`, as they were then (and `as_of` in the
    answer)."""
    if as_of is not None:
        return past.export(brain, ctx, as_of)
    return brain.transfer.export(ctx)


def read_backup(backup: Any) -> ImportPayload:
    """A backup's JSON object as a payload to import, or a 400 naming the first thing wrong with it."""
    return backup if isinstance(backup, ImportPayload) else parse_payload(backup)


def import_page(brain: Brain, ctx: Context, backup: ImportPayload | Callable[[], Any], limit: int = 40,
                offset: int = 0, edge_offset: int = 0, uploaded: tuple[Parts, str] | None = None,
                body: bytes | bytearray | None = None) -> dict[str, Any]:
    """One page of a backup restored, each slice one atomic append: the answer says where the next page starts.

    `backup`: the payload read_backup made, or what reads the backup's JSON object (a client sends the whole
    backup with every page). A backup read here is let go before the answer, and the memory its objects took is
    handed back to the system (Brain.release_memory): a server would otherwise keep hundreds of MB per import.
    `body`: the request's body `backup` reads, where the brain has a staging area: a backup larger than a page
    is then read and checked once, at its first page, and laid out in parts each later page reads its own of
    (named by the body's digest)."""
    if isinstance(backup, ImportPayload):
        return brain.transfer.import_page(ctx, backup, limit, offset, edge_offset)
    if uploaded is not None:  # `backup` reads the uploaded file; its parts go under that prefix
        return import_uploaded_page(brain, ctx, *uploaded, backup, limit, offset, edge_offset)
    try:
        if body is not None and brain.import_parts is not None:
            return _resent_page(brain, ctx, brain.import_parts, body_digest(body), backup, limit, offset,
                                edge_offset)
        return _restore_page(brain, ctx, backup, limit, offset, edge_offset)
    finally:
        brain.release_memory()  # the backup went with _restore_page's frame


STAGED_BODIES = "bodies"
STAGED_FOR_S = 3600.0  # a staged backup no page has come for in an hour is removed (its client gave up)


def _resent_page(brain: Brain, ctx: Context, parts: Staging, digest: str, read: Callable[[], Any], limit: int,
                 offset: int, edge_offset: int) -> dict[str, Any]:
    """A page of a whole backup sent again with every page (the import contract): parsed and checked whole at the
    first page that brings it (a malformed backup is refused before anything is written), laid out in parts if
    one page does not restore it all, then each page reads only its own parts (at 100,000 memories a page had
    parsed 43 MB: 2 s, the import slowing as it grew). Keyed by the caller and the body: another backup, or the
    same one from someone else, is laid out apart. The parts are removed with the last page."""
    key = f"{STAGED_BODIES}/{body_digest(f'{ctx.identity.actor_id}:{digest}'.encode())}"
    window = _staged_page(parts, key, limit, offset, edge_offset)
    if window is None:
        parts.remove(key)
        payload = parse_payload(read())
        if len(payload.entries) > offset + limit or len(payload.edges) > edge_offset + limit:  # more pages to come
            parts.sweep(STAGED_BODIES, STAGED_FOR_S)
            staged(parts, key, lambda: payload)
        return brain.transfer.import_page(ctx, payload, limit, offset, edge_offset)
    answer = brain.transfer.import_page(ctx, window, limit, offset, edge_offset)
    if not answer["remaining_entries"] and not answer["remaining_edges"]:
        parts.remove(key)
    return answer


def _staged_page(parts: Staging, key: str, limit: int, offset: int, edge_offset: int) -> Window | None:
    """The parts of the backup laid out under `key` a page from these offsets reads; None when it is not laid out
    (yet, or any longer: swept, or finished meanwhile by a page of the same backup)."""
    manifest = laid_out(parts, key)
    try:
        return None if manifest is None else staged_window(parts, key, manifest, limit, offset, edge_offset)
    except KeyError:
        return None


def _restore_page(brain: Brain, ctx: Context, read: Callable[[], Any], limit: int, offset: int,
                  edge_offset: int) -> dict[str, Any]:
    return brain.transfer.import_page(ctx, parse_payload(read()), limit, offset, edge_offset)


def import_uploaded_page(brain: Brain, ctx: Context, parts: Parts, prefix: str, read: Callable[[], Any],
                         limit: int = 40, offset: int = 0, edge_offset: int = 0) -> dict[str, Any]:
    """One page of an uploaded backup, staged under `prefix`. Its first page reads and checks the whole file
    (`read()`, its JSON object) and lays it out in parts under the prefix; every page reads only the parts it
    restores, so a page of a large backup takes the memory of its own entries, not of the whole file."""
    try:
        manifest = staged(parts, prefix, lambda: parse_payload(read()))
        window = staged_window(parts, prefix, manifest, limit, offset, edge_offset)
        return brain.transfer.import_page(ctx, window, limit, offset, edge_offset)
    finally:
        brain.release_memory()
