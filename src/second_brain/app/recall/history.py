"""What recall says of a result's history, and the ranking rule that follows from it.

- `superseded_by`: a memory that a newer one replaced (a `supersedes` edge points at it) names that memory while it
  is still replaced: retired (deprecated), or superseded by a person's own link. A retirement a person took back
  (the memory is current again, the capture's edge still there) is history, not a replacement.
- `conflicts_with`: current memories that may say otherwise: the other end of a `contradicts` edge, the other
  memory of a pair a capture flagged on the newer one's stream (until a person answers it), and a near-copy of a
  replaced memory beside the memory that replaced it.
- A near-copy of a replaced memory ranks just below the memory that replaced it: "$8k" left in a second note must
  not outrank the note that changed it to "$10k".
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from ...domain import conflicts
from ...domain.contradictions import announced, content_words, negated, same_frame, words
from ...domain.envelope import Envelope
from ...domain.events import memory_stream
from ...domain.text import DEPRECATED
from ...ports.read_model import Connection, EdgeRow, EntryRow, HistoryReads, LinkedPair

SUPERSEDES = "supersedes"
CONTRADICTS = "contradicts"  # no such link type yet: an edge of it would name a conflict outright
LINKS = (SUPERSEDES, CONTRADICTS)
# Flags a capture records on the newer memory's stream, each with the field naming the older memory. Only the
# streams of memories carrying one of FLAG_TAGS are read (duplicate-candidate, possible-update: the capture tags
# the newer memory so; status:draft, a newcomer kept as a draft beside a canonical memory it contradicts); a
# person's answer about the pair (ANSWERED, on both streams) closes it.
FLAGS = {"DuplicateSuspected": "match_id", "ConflictSuspected": "other_id", "ContradictionLost": "other_id"}
FLAG_TAGS = (*conflicts.FLAG_TAGS, "status:draft")
KEPT_AS_DRAFT = "ContradictionLost"  # a flag only in the capture that stored the memory (kept_canonical)
ANSWERED = "ConflictAnswered"
FLAG_READS = 20  # streams read for flags in one recall: the page's first, then the other candidates'
WINNERS_READ = 8  # candidates that won a contradiction whose replaced memories are read, best first
ANNOUNCED_CHARS = 1500  # of each note read for an announced change: its words cost ~6 ms a thousand, every recall
BELOW = 0.999  # a near-copy's score as a share of the score of the memory that replaced what it copies


@dataclass(frozen=True)
class Replacement:
    winner: EntryRow
    loser: EntryRow


@dataclass
class Notes:
    """What each result of a page says of its history."""

    superseded_by: dict[str, str] = field(default_factory=dict)
    conflicts_with: dict[str, list[str]] = field(default_factory=dict)
    review: dict[str, list[str]] = field(default_factory=dict)  # the review items (answer_conflict) it is part of


class Flag(NamedTuple):
    """A pair a capture flagged and nobody has answered: the newer memory, the older, and the review item."""

    newer: str
    older: str
    item: str


class Connections(Protocol):
    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False, deprecated: bool = False) -> list[Connection]: ...


class Streams(Protocol):
    def read_stream(self, stream_id: str) -> list[Envelope]: ...


def linked(reads: Connections, ids: Sequence[str], workspaces: Sequence[str], types: Sequence[str],
           rows: Mapping[str, EntryRow], fanout: int) -> list[LinkedPair]:
    """The edges of these types touching these memories (whose rows are in `rows`), both ends readable."""
    if isinstance(reads, HistoryReads):
        return reads.linked_pairs(ids, workspaces, types)
    # The past's reads (app/past/recall.py) answer one memory at a time, with the edges as they were; they do not
    # say which way an edge goes, so the newer end is taken to be the one that supersedes.
    found: dict[tuple[str, str, str], LinkedPair] = {}
    for key in ids:
        for kind in types:
            for link in reads.connections(key, workspaces, kind, fanout, deprecated=True):
                ends = sorted((rows[key], link.entry), key=lambda row: (row.created_at, row.id))
                edge = EdgeRow(ends[1].id, ends[0].id, link.type, link.weight, link.provenance, link.linked_at)
                found[(edge.source_id, edge.target_id, edge.type)] = LinkedPair(edge, ends[1], ends[0])
    return sorted(found.values(), key=lambda pair: -pair.edge.created_at)


def replacements(pairs: Iterable[LinkedPair]) -> list[Replacement]:
    """The supersedes edges whose target is still replaced: retired, or superseded by a person's own link."""
    return [Replacement(p.source, p.target) for p in pairs
            if p.edge.type == SUPERSEDES and (DEPRECATED in p.target.tags or p.edge.provenance != "system")]


def near_copy(entry: EntryRow, replaced: Replacement) -> bool:
    """Whether `entry` still says what the replaced memory said: written before the memory that replaced it, current,
    about the same thing (most content words in common with the replaced one), and holding every word the
    replacement took away and none it brought ("$8k" where "$8k" became "$10k"); for a changed negation, negated as
    the replaced memory was."""
    winner, loser = replaced.winner, replaced.loser
    if entry.id in (winner.id, loser.id) or entry.created_at > winner.created_at or DEPRECATED in entry.tags:
        return False
    old, new, own = words(loser.content), words(winner.content), words(entry.content)
    if not same_frame(old, own):
        return False
    said, was, now = content_words(own), content_words(old), content_words(new)
    gone, brought = was - now, now - was
    if gone or brought:
        return bool(gone) and gone <= said and not brought & said
    return negated(own) == negated(old) != negated(new)


def below_winners(ordered: list[tuple[str, float]], rows: Mapping[str, EntryRow], replaced: Sequence[Replacement],
                  conflicts: dict[str, set[str]]) -> list[tuple[str, float]]:
    """Each candidate that is a near-copy of a replaced memory placed just below the candidate that replaced it, and
    the two marked in `conflicts` as conflicting with each other."""
    scores = dict(ordered)
    for replacement in replaced:
        winner = replacement.winner.id
        if winner not in scores:
            continue
        for key, _ in ordered:
            if near_copy(rows[key], replacement):
                scores[key] = min(scores[key], scores[winner] * BELOW)
                conflicts.setdefault(key, set()).add(winner)
                conflicts.setdefault(winner, set()).add(key)
    return sorted(((key, scores[key]) for key, _ in ordered), key=lambda item: -item[1])  # stable: ties keep order


def flagged(log: Streams, rows: Iterable[EntryRow], now: int) -> list[Flag]:
    """The pairs a capture flagged on these memories' streams by `now` and nobody has answered: read for the first
    FLAG_READS memories carrying a flag tag."""
    pairs: list[Flag] = []
    carrying = [row for row in rows if any(tag in FLAG_TAGS for tag in row.tags)][:FLAG_READS]
    for row in carrying:
        open_: dict[str, str] = {}  # the other memory, and the item its flag made
        stream = log.read_stream(memory_stream(row.id))
        for envelope in stream:
            if envelope.at > now:
                break
            if envelope.type == KEPT_AS_DRAFT and (envelope.request_id, envelope.at) != (stream[0].request_id,
                                                                                      stream[0].at):
                continue  # lost by a later capture (a retirement), not kept as a draft by its own (one append)
            if envelope.type in FLAGS:
                open_[getattr(envelope.event, FLAGS[envelope.type], "")] = f"{row.id}@{envelope.version}"
            elif envelope.type == ANSWERED:
                open_.pop(getattr(envelope.event, "other_id", ""), None)
        pairs += [Flag(row.id, other, item) for other, item in open_.items() if other and other != row.id]
    return pairs


def notes(page: Sequence[str], pairs: Iterable[LinkedPair], near: Mapping[str, set[str]],
          flags: Iterable[Flag], current: Iterable[str]) -> Notes:
    """Each page result's `superseded_by` and `conflicts_with`, naming only `current` memories (readable, not
    retired) in `conflicts_with`; `pairs` are the history edges touching the page."""
    on_page, live = set(page), set(current)
    found = Notes()
    conflicts: dict[str, dict[str, None]] = {key: dict.fromkeys(sorted(near.get(key, ()))) for key in page}
    newest_first = sorted(pairs, key=lambda p: -p.edge.created_at)  # the newest replacement is the one named
    for pair in newest_first:
        source, target = pair.source.id, pair.target.id
        if pair.edge.type == CONTRADICTS:
            for key, other in ((source, target), (target, source)):
                if key in on_page and other in live:
                    conflicts[key][other] = None
    for replacement in replacements(newest_first):
        if replacement.loser.id in on_page:
            found.superseded_by.setdefault(replacement.loser.id, replacement.winner.id)
    for flag in flags:
        for key, other in ((flag.newer, flag.older), (flag.older, flag.newer)):
            if key in on_page and other in live:
                conflicts[key][other] = None
                found.review.setdefault(key, []).append(flag.item)
    for key in page:
        named = [other for other in conflicts[key] if other not in (key, found.superseded_by.get(key))]
        if named:
            found.conflicts_with[key] = named
    return found


def newer_first(ranked: list[tuple[str, float]], rows: Mapping[str, EntryRow],
                conflicts_with: Mapping[str, list[str]], reach: int = 0,
                near: Callable[[str, str], bool] = lambda a, b: False) -> list[tuple[str, float]]:
    """A page where, of two results that may say otherwise about one thing, the newer ranks above the older: the two
    trade places, each taking the other's score, so the page stays in order of score and the likely current answer
    is read first. Such a pair is a possible update a capture flagged (the newer still tagged so until someone
    answers), or, among the first `reach` results, a newer note about the same thing (`near`: their vectors close)
    announcing a change the older does not ("moved to", "postponed", "no longer": `contradictions.announced`), as
    notes that came in by import or from a mirror were never flagged. Repeats flagged as similar keep their order
    (they say the same)."""
    order = [key for key, _ in ranked]
    scores = [score for _, score in ranked]
    flagged = [(key, other, True) for key, others in conflicts_with.items() for other in others]
    firsts = order[:reach]
    unflagged = [(a, b, False) for n, a in enumerate(firsts) for b in firsts[n + 1:]
                 if b not in conflicts_with.get(a, ())]  # a flagged pair is judged by its flag alone
    for key, other, was_flagged in flagged + unflagged:
        if key in order and other in order and key in rows and other in rows:
            a, b = order.index(key), order.index(other)
            upper, lower = (a, b) if a < b else (b, a)
            older, newer = rows[order[upper]], rows[order[lower]]
            if older.created_at < newer.created_at and (
                    conflicts.POSSIBLE_UPDATE in newer.tags if was_flagged
                    else near(older.id, newer.id)
                    and announced(older.content[:ANNOUNCED_CHARS], newer.content[:ANNOUNCED_CHARS]) is not None):
                order[upper], order[lower] = order[lower], order[upper]
    return list(zip(order, scores, strict=True))
