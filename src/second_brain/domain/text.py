"""Pure text rules for captured content: hashtags, tags, volatility and status values."""

import functools
import re
import unicodedata

from .errors import InvalidInput

HASHTAG = re.compile(r"(?<![\w#&/=?.:-])#(\w+(?:-\w+)*)")
# Spans where a '#' is part of something else: URLs, fenced code blocks and inline code.
PROTECTED_SPANS = re.compile(
    r"```.*?(?:```|\Z)"  # fenced code, to its closing fence or the end of the note
    r"|`[^`\n]*`"  # inline code
    r"|\b(?:https?|ftp)://\S+"  # URLs with a scheme
    r"|\bwww\.\S+",
    re.DOTALL,
)

VOLATILITIES = ("durable", "state", "volatile")
STATUSES = ("canonical", "draft", "deprecated")
MAX_CONTENT_CHARS = 200_000
MAX_TAGS = 64
MAX_TAG_CHARS = 128
MAX_SOURCE_CHARS = 128
MAX_ID_CHARS = 128  # no memory id is longer: ours are UUIDs, an import keeps its own up to this
ECHO_CHARS = 40  # how much of a caller's value an error message repeats
# What a reader cannot see, or sees as something else: control, format (zero-width and bidirectional marks among
# them), surrogate, private-use and unassigned characters, line or paragraph separators; and the default-ignorable
# or blank letters that render as nothing or as a space (the combining grapheme joiner, variation selectors, the
# Hangul fillers, the blank braille pattern, tags). Names and tags are shown to others: they must look like what
# they are.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
BLANK = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
                   "\U000e0000-\U000e0fff]")
INT64 = (-(2**63), 2**63 - 1)  # times and counters are stored as signed 64-bit integers


def within_int64(n: int) -> int:
    """`n`, or the nearest signed 64-bit integer: a bound computed from a stored time (a window around it) that
    the stores can hold."""
    return max(INT64[0], min(INT64[1], n))
RESERVED_PREFIXES = ("kind:", "status:", "volatility:", "stale:", "project:", "capsule:", "capsule-slot:")
# Tags the brain itself sets: bookkeeping, not topics.
PIPELINE_MARKERS = frozenset(
    {"synthesized", "auto-pattern", "auto-insight", "duplicate-candidate", "possible-update", "contradiction-resolved",
     "rolled-up"}
)
# An explicit tag list on update replaces the caller's tags, never these.
WORKER_OWNED_PREFIXES = ("kind:", "status:", "volatility:", "stale:")
DEPRECATED = "status:deprecated"
CANONICAL = "status:canonical"
NEVER_RECALLED = (DEPRECATED, "auto-insight", "auto-pattern")
NEVER_DIGESTED = ("synthesized", "auto-pattern", "auto-insight", "rolled-up")  # already a digest, or in one
SYNTHESIZED, ROLLED_UP = "synthesized", "rolled-up"  # a digest, and a memory folded into one
AWAITING_CONFIRMATION = ("auto-insight", "auto-pattern")  # a pattern the nightly job proposed (the old name second)
SYSTEM_SOURCE = "system"  # what the brain writes itself (digests, patterns): never rolled into a digest again
PROTECTED_IMPORTANCE = 4  # at or above: never merged, replaced or rolled up without the user


def extract_hashtags(content: str) -> tuple[str, list[str]]:
    """Split hashtags out of content; digits-only tags, URLs and code are left untouched.

    Unlike the reference, whitespace is preserved: only the hashtag and one space beside it go.
    """
    protected = [m.span() for m in PROTECTED_SPANS.finditer(content)]
    tags: list[str] = []
    kept: list[str] = []
    cursor = 0
    for match in HASHTAG.finditer(content):
        start, end = match.span()
        if match.group(1).isdigit() or any(a <= start < b for a, b in protected):
            continue
        tags.append(match.group(1).lower())
        if start > cursor and content[start - 1] in " \t":
            start -= 1
        elif end < len(content) and content[end] in " \t":
            end += 1
        kept.append(content[cursor:start])
        cursor = end
    if not tags:
        return content, []
    kept.append(content[cursor:])
    text = "".join(kept).strip()
    return (text or content), dedupe(tags)


def check_length(content: str) -> None:
    """A memory is a note, not a data dump: refuse content past the limit rather than store a fragment."""
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"content is too long: at most {MAX_CONTENT_CHARS} characters")


def check_source(source: str) -> None:
    if len(source) > MAX_SOURCE_CHARS:
        raise InvalidInput(f"source is too long: at most {MAX_SOURCE_CHARS} characters")


def read_int(literal: str) -> int:
    """An integer literal; one with more digits than any 64-bit value reads as just past the range, so it is
    refused as out of range instead of reaching int(), which raises past 4,300 digits."""
    return int(literal) if len(literal.lstrip("+-").lstrip("0")) <= 19 else INT64[1] + 1


def invisible(value: str) -> bool:
    """Whether a value holds a character a reader cannot see, or sees as a space (HIDDEN_CATEGORIES, BLANK)."""
    return any(unicodedata.category(c) in HIDDEN_CATEGORIES for c in value) or BLANK.search(value) is not None


def shorten(value: str, most: int = ECHO_CHARS) -> str:
    """A caller's value as an error message repeats it: a short prefix, never a 100k-character echo."""
    return value if len(value) <= most else value[:most] + "…"


def dedupe(tags: list[str]) -> list[str]:
    """Keep the first occurrence of each tag, in order."""
    return list(dict.fromkeys(tags))


def normalize_tags(tags: list[str] | tuple[str, ...]) -> list[str]:
    """Trim and lowercase caller tags, drop empty ones, enforce the limits."""
    cleaned = dedupe([t.strip().lower() for t in tags if t.strip()])
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"Too many tags: at most {MAX_TAGS} are allowed")
    for tag in cleaned:
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInput(f"Tag too long: at most {MAX_TAG_CHARS} characters ({shorten(tag)})")
        if invisible(tag):
            raise InvalidInput("A tag may not contain control, zero-width or bidirectional characters")
    return cleaned


def check_volatility(volatility: str | None) -> None:
    """Volatility values are matched case-sensitively, as the reference does."""
    if volatility is not None and volatility not in VOLATILITIES:
        raise InvalidInput("volatility must be one of: durable, state, volatile")


def with_prefixed(tags: list[str], prefix: str, value: str | None) -> list[str]:
    """Replace any tag under `prefix` (case-insensitively) with `prefix + value`."""
    if value is None:
        return tags
    kept = [t for t in tags if not t.lower().startswith(prefix)]
    return [*kept, prefix + value]


def is_worker_owned(tag: str) -> bool:
    lowered = tag.lower()
    return lowered.startswith(WORKER_OWNED_PREFIXES) or lowered in PIPELINE_MARKERS


def is_topic_tag(tag: str) -> bool:
    """A tag a person chose, as opposed to the brain's own bookkeeping."""
    lowered = tag.lower()
    return not (lowered.startswith(RESERVED_PREFIXES) or lowered in PIPELINE_MARKERS or lowered.isdigit())


# Light English suffix stripping: "adopting" searches "adopt", which also finds "adoption" and "adopted".
SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")
MIN_STEM = 4


@functools.lru_cache(maxsize=1 << 16)  # pure, and asked for the same words all day (a sync's rules, every recall)
def stem(token: str) -> str:
    """The form a word is searched by: itself, or its stem for plain lowercase English words."""
    if not token.isascii() or not token.isalpha() or len(token) < MIN_STEM + 2:
        return token
    for _ in range(2):  # a plural, then a verb ending: "meetings" -> "meeting" -> "meet"
        suffix = next((s for s in SUFFIXES if token.endswith(s) and len(token) - len(s) >= MIN_STEM), None)
        if suffix is None:
            break
        token = token[: -len(suffix)]
    return token


LETTERS = "abcdefghijklmnopqrstuvwxyz"
SLIP_WORD_MAX = 24  # longer "words" are not read as slips: a word of n letters has about 54n neighbours to look up


def one_edit(word: str) -> set[str]:
    """Every word one typing slip from `word`: a letter dropped, added or replaced, or two neighbours swapped
    (Damerau's four slips, which make up most misspellings). Lowercase ASCII letters only."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    dropped = {left + right[1:] for left, right in splits if right}
    swapped = {left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1}
    replaced = {left + c + right[1:] for left, right in splits if right for c in LETTERS if c != right[0]}
    added = {left + c + right for left, right in splits for c in LETTERS}
    return (dropped | swapped | replaced | added) - {word, ""}
