"""Recall: searching by meaning and by words, now or as the brain would have answered at a past moment, and a
model's answer grounded in memories (chat)."""

from collections.abc import Callable, Iterator
from typing import Any

from ..brain import Brain
from ..handling import Context
from ..past import as_of as past
from ..recall.chat import answer
from ..recall.chat import insight as synthesise
from .inputs import at_once, moment_of, recall_request, required


def recall(brain: Brain, ctx: Context, query: str | None, top_k: int = 5, *, tag: str | None = None,
           after: str | int | None = None, before: str | int | None = None, kind: str | None = None,
           actor: str | None = None, hops: int | None = None, workspace: str | None = None,
           project: str | None = None, full: bool = False, insight: bool = False, team: str | None = None,
           as_of: str | int | None = None, defer: Callable[..., None] | None = None) -> dict[str, Any]:
    """Search by meaning and by words; each memory returned counts one recall: at once, or later when the caller
    can answer first (`defer` given: in a running brain's lane of counts, else through `defer`). With `as_of`, what
    the brain would have answered then: the past is read, not used, so no recall is counted."""
    chosen = {"workspace": workspace, "tag": tag, "after": after, "before": before, "kind": kind, "actor": actor,
              "project": project, "team": team}
    if as_of is not None:
        return past.recall(brain, ctx, query, top_k, as_of=as_of, hops=hops, full=full, insight=insight, **chosen)
    request = recall_request(brain, ctx, query, top_k, hops, full, **chosen)
    response = brain.recall.recall(ctx, request, log=brain.store)  # the log names the pairs a capture flagged
    if insight:
        response["insight"] = synthesise(brain.llm, request.query, response["results"])
    returned = [r["id"] for r in response["results"]]
    if defer and brain.counts and brain.counts.running:  # gathered with other answers' recalls, off the path
        brain.counts.add(ctx, returned)
    else:
        (defer or at_once)(brain.memories.record_recalls, ctx, returned)
    return response


def chat(brain: Brain, ctx: Context, query: str | None, memories: str | None = None) -> Iterator[str]:
    """The model's answer to `query` from the `memories` given, in pieces. Without a model this raises
    LanguageModelUnavailable now, before any piece; a model failing once its answer began raises it from the
    pieces."""
    return answer(brain.llm, required(query, "query"), memories or "")


def moments(brain: Brain, ctx: Context, values: dict[str, str | int | None]) -> dict[str, int | None]:
    """The moments time parameters were read as (Unix ms, by name), to say back to whoever gave them in words; a
    bound on the past (after, before, since) as any whole number too."""
    return {name: moment_of(brain, value, name, ahead=False, any_integer=True) for name, value in values.items()}
