"""Edits a person asks for on one memory (append, update, retag, status) and the model's classification of it:
each a command the aggregate decides (domain/memory.py), appended through `MemoryStreams.execute`."""

from collections.abc import Sequence
from datetime import datetime

from ...domain import commands as c
from ...domain.classification import classify
from ...domain.events import MemoryClassified
from ...domain.memory import Memory
from ...ports.llm import LanguageModel
from ..handling import Context, retrying
from .streams import MemoryStreams
from .triage import classify_with_model


class Editing:
    def __init__(self, streams: MemoryStreams, llm: LanguageModel | None = None) -> None:
        self.streams = streams
        self.llm = llm  # refines classification, when a real model is configured

    def append(self, ctx: Context, memory_id: str, addition: str, volatility: str | None = None,
               anchor: tuple[int, str] | None = None) -> Memory:
        """Add to a memory under a dated label; with `anchor` (when_at, when_kind), its reminder moves there in the
        same batch."""
        now = self.streams.clock.now_ms()
        dated = datetime.fromtimestamp(now / 1000, self.streams.timezone).strftime("%b %-d, %Y")
        anchoring = (c.SetTimeAnchor(anchor[0], anchor[1], 0),) if anchor else ()
        return self.streams.execute(ctx, memory_id, c.Append(addition, dated, volatility), *anchoring)

    def update(
        self, ctx: Context, memory_id: str, content: str, tags: list[str] | None, volatility: str | None = None
    ) -> Memory:
        return self.streams.execute(ctx, memory_id, c.Update(content, None if tags is None else tuple(tags),
                                                             volatility))

    def retag(self, ctx: Context, memory_id: str, add: Sequence[str], remove: Sequence[str]) -> Memory:
        return self.streams.execute(ctx, memory_id, c.Retag(tuple(add), tuple(remove)))

    def set_status(self, ctx: Context, memory_id: str, status: str) -> Memory:
        return self.streams.execute(ctx, memory_id, c.SetStatus(status))

    def classify_with_model(self, ctx: Context, memory_id: str) -> bool:
        """Refine a memory's rule-based classification with the language model; whether it changed anything."""
        if self.llm is None:
            return False
        streams = self.streams
        state, _ = streams.load(ctx, memory_id)
        judged = classify(state.content, state.tags)
        answer = classify_with_model(self.llm, state.content, judged)
        if answer is None:
            return False
        model, canonical = answer

        def attempt() -> bool:
            with streams.writing(memory_id):
                current, _ = streams.load(ctx, memory_id)
                streams.append(ctx, current, [MemoryClassified(model.importance, model.kind, model.volatility,
                                                               canonical, "model")])
            return True

        return retrying(attempt)
