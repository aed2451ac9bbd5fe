"""Sharing: a memory moved to a company workspace, or taken back to its author's personal one (the team's digests
and patterns then lose the words it takes back: erasure.py)."""

from collections.abc import Callable

from ...domain.errors import InvalidInput
from ...domain.events import Envelope, MemoryReleased, MemoryShared, MemoryUnshared, memory_stream
from ...domain.integrations import refused
from ..handling import Context, envelopes, retrying
from .erasure import Erasure
from .streams import MemoryStreams, may_change, rolled_into


class Sharing:
    def __init__(self, streams: MemoryStreams, erasure: Erasure) -> None:
        self.streams = streams
        self.erasure = erasure

    def share(self, ctx: Context, memory_id: str, workspace: str,
              note: Callable[[Context, str, str, str, str], list[Envelope]],
              home: Callable[[str], str | None]) -> str:
        """Move a memory to `workspace` (a company workspace, or back to its author's personal one): "shared",
        "unshared" or "no_change". Anyone who may change it may share it; only its author or an admin may take a
        company memory back, and not once its author has left (`home` gives an author's personal workspace, None
        for a removed one). `note` gives the team feed's record of the move, appended with it."""
        memory_id = memory_id.strip()
        streams = self.streams

        def attempt() -> str:
            with streams.writing(memory_id):
                state, history = streams.load(ctx, memory_id)
                if state.mirror:  # its integration writes it where it was connected: moving it would lose it
                    raise refused(state.source, state.origin)
                to_company = workspace != ctx.identity.personal_workspace
                if to_company and state.workspace == workspace:
                    return "no_change"
                if not to_company and state.workspace not in ctx.identity.company_workspaces:
                    return "no_change"  # already personal (the caller's own: the only personal one they can read)
                may_change(ctx, state)
                event: MemoryShared | MemoryUnshared
                if to_company:
                    event, layer = MemoryShared(workspace), "company"
                else:
                    author_home = home(state.actor)
                    if author_home is None:
                        raise InvalidInput("Its author has left the team: it stays in the company layer")
                    event, layer = MemoryUnshared(author_home), "personal"
                now = streams.clock.now_ms()
                events: list[object] = [event]
                if not to_company and (digest_id := rolled_into(history)):
                    events.append(MemoryReleased(digest_id))  # that digest goes (below): back to full weight
                moved = envelopes(ctx, memory_stream(state.id), state.version, events, event.workspace, now)
                if not to_company:  # the team's digests and patterns must not keep the words it takes back
                    moved += self.erasure.derived(state, history, now)
                company = workspace if to_company else state.workspace
                streams.store.append(moved + note(ctx, state.id, layer, state.actor, company))
                return "shared" if to_company else "unshared"

        return retrying(attempt)
