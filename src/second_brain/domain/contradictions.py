"""Telling, without a language model, whether a new note contradicts a similar older one.

Embeddings cannot: "allergic to peanuts" and "not allergic to peanuts" score 0.97 with MiniLM, as high as
a paraphrase. These rules look at what actually differs between the two notes, once they are known to be
about the same thing (they share most of their content words):

- negation on one side only ("is" / "is not", "works at" / "no longer works at");
- different numbers, times or dates in the same frame ("Tuesday" / "Wednesday", "3pm" / "4pm");
- antonyms ("likes" / "dislikes", "enabled" / "disabled");
- one content word swapped for another, the rest unchanged ("favourite colour is blue" / "... green").

Each rule errs on the side of "no contradiction": a missed contradiction leaves two notes side by side,
a false one would retire a true memory (kept for audit, but out of recall). The reasons name the rule,
never the notes' words: they are stored on the other memory's stream, which a forget does not erase.
"""

import re
from difflib import SequenceMatcher

from .text import stem

WORD = re.compile(r"[a-z0-9]+(?:['.:/-][a-z0-9]+)*")
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without",
                       "isnt", "arent", "wasnt", "werent", "dont", "doesnt", "didnt", "cant", "couldnt", "wont",
                       "wouldnt", "shouldnt", "hasnt", "havent", "hadnt", "quit", "stopped", "formerly"})
# Words that announce a change without carrying the claim: ignored when lining the two notes up.
CUES = frozenset({"now", "actually", "currently", "anymore", "still", "instead", "already", "longer", "really",
                  "moved", "changed", "switched", "rescheduled", "updated", "correction", "update", "turns", "out",
                  "so", "then", "also", "just", "fact", "in", "to", "from", "at", "on", "is", "are", "was",
                  "were", "be", "been", "has", "have", "had", "will", "would"})
STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "for", "with", "about", "as", "by", "this", "that", "these", "those",
    "it", "its", "i", "me", "my", "we", "our", "you", "your", "he", "she", "his", "her", "they", "their", "them",
    "do", "does", "did", "what", "which", "who", "whom", "how", "when", "where", "why", "there", "here", "am",
    "being", "than", "very", "but", "if", "into", "over", "up", "some", "any", "all",
}) | CUES
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "noon", "midnight", "tomorrow", "today", "tonight", "yesterday")
QUANTITY = re.compile(r"^\$?\d[\d,.:/-]*(?:st|nd|rd|th|am|pm|k|m|kg|km|mg|h|min|%)?$")
ANTONYM_PAIRS = [
    ("like", "dislike"), ("love", "hate"), ("enable", "disable"), ("enabled", "disabled"), ("allow", "deny"),
    ("allowed", "forbidden"), ("accept", "reject"), ("accepted", "rejected"), ("approved", "rejected"),
    ("open", "closed"), ("true", "false"), ("always", "never"), ("early", "late"),
    ("before", "after"), ("more", "less"), ("increase", "decrease"), ("increased", "decreased"),
    ("win", "lose"), ("won", "lost"), ("pass", "fail"), ("passed", "failed"), ("hot", "cold"), ("start", "stop"),
    ("started", "stopped"), ("include", "exclude"), ("included", "excluded"), ("safe", "unsafe"),
    ("available", "unavailable"), ("possible", "impossible"), ("legal", "illegal"), ("public", "private"),
    ("remote", "onsite"), ("online", "offline"), ("single", "married"), ("alive", "dead"), ("cheap", "expensive"),
    ("higher", "lower"), ("above", "below"), ("easy", "hard"), ("good", "bad"), ("best", "worst"),
    ("first", "last"), ("add", "remove"), ("added", "removed"), ("buy", "sell"), ("bought", "sold"),
    ("arrive", "leave"), ("success", "failure"), ("succeeded", "failed"), ("valid", "invalid"),
    ("required", "optional"), ("mandatory", "optional"), ("supported", "unsupported"), ("vegan", "omnivore"),
    ("prefer", "avoid"), ("likes", "dislikes"), ("loves", "hates"), ("working", "broken"), ("works", "broken"),
]
ANTONYMS: dict[str, set[str]] = {}
for _a, _b in ANTONYM_PAIRS:
    ANTONYMS.setdefault(_a, set()).add(_b)
    ANTONYMS.setdefault(_b, set()).add(_a)
MIN_SHARED = 2  # content words both notes must share to be about the same thing
MIN_OVERLAP = 0.5  # ... as a share of the shorter note's content words
MAX_NEW_WORDS = 2  # a negation counts only when it is about what the other note says, not about something new
MAX_SPAN = 3  # a changed value sits in a short span: "at 3pm" became "at 4:30pm"
MAX_SWAP_WORDS = 3  # "GitHub Actions" became "GitLab"; two words for two is a rephrasing more often than not


def words(text: str) -> list[str]:
    """Lowercased words, with "isn't" read as "isnt" so negations are single words."""
    return WORD.findall(text.lower().replace("’", "'").replace("n't", "nt").replace("'", ""))


def is_quantity(word: str) -> bool:
    return bool(QUANTITY.match(word)) or word in WEEKDAYS or word in MONTHS or word in NUMBER_WORDS


def content_words(tokens: list[str]) -> set[str]:
    return set(_claim(tokens))


def negated(tokens: list[str]) -> bool:
    """Whether the note denies rather than asserts: an odd number of negations ("not never" asserts)."""
    return sum(t in NEGATIONS for t in tokens) % 2 == 1


def same_frame(old: list[str], new: list[str]) -> bool:
    """Whether two notes talk about the same thing: most content words, and at least two, in common."""
    a, b = content_words(old), content_words(new)
    shared = a & b
    return len(shared) >= MIN_SHARED and len(shared) >= MIN_OVERLAP * min(len(a), len(b))


def conflict(old: str, new: str) -> str | None:
    """Why `new` contradicts `old`, or None when no rule finds a contradiction."""
    a, b = words(old), words(new)
    if not same_frame(a, b):
        return None
    only_old, only_new = content_words(a) - content_words(b), content_words(b) - content_words(a)
    # A negation contradicts only when it is about the same claim: words may be dropped on one side, never
    # swapped ("not allergic to shellfish" says nothing about peanuts).
    if negated(a) != negated(b) and not (only_old and only_new) and len(only_old | only_new) <= MAX_NEW_WORDS:
        return "One note negates what the other asserts."
    if negated(a) != negated(b):
        return None  # one side negated, and about something else: the other rules would misread the swap
    changes = _changes(a, b)
    for removed, added, before in changes:
        if len(removed) > MAX_SPAN or len(added) > MAX_SPAN:
            continue  # a rewritten passage, not a changed value
        old_q = [w for w in removed if is_quantity(w)]
        new_q = [w for w in added if is_quantity(w)]
        if _names(removed + added, before):
            continue
        same_words = [w for w in removed if not is_quantity(w)] == [w for w in added if not is_quantity(w)]
        if old_q and new_q and set(old_q) != set(new_q) and same_words:  # only the value moved
            return "The notes give different values for the same thing."
    for removed, added, _ in changes:
        for word in removed:
            opposite = ANTONYMS.get(word, set()) | ANTONYMS.get(stem(word), set())
            hit = next((w for w in added if w in opposite or stem(w) in opposite), None)
            if hit:
                return "The notes say opposite things."
    if len(changes) == 1 and len(content_words(a)) >= 3:
        removed, added, before = changes[0]
        old_c, new_c = [w for w in removed if w not in STOPWORDS], [w for w in added if w not in STOPWORDS]
        swapped = old_c and new_c and len(old_c) + len(new_c) <= MAX_SWAP_WORDS
        if swapped and not _names(old_c + new_c, before) and not {stem(w) for w in old_c} & {stem(w) for w in new_c}:
            return "One detail changed between the notes."
    return None


def adds_nothing(old: str, new: str) -> bool:
    """Whether `new` repeats `old`: its content words appear in `old`, in the same order ("thread 1 note 2"
    does not repeat "thread 2 note 1")."""
    remaining = iter(_claim(words(old)))
    return all(word in remaining for word in _claim(words(new)))


def _claim(tokens: list[str]) -> list[str]:
    return [stem(t) for t in tokens if t not in STOPWORDS and t not in NEGATIONS]


def _names(changed: list[str], before: str) -> bool:
    """Whether changed numbers follow a noun and so name something ("note 5", "sprint 14"): no value changed."""
    numbers = [w for w in changed if w[:1].isdigit()]
    return bool(numbers) and len(numbers) == len(changed) and before not in STOPWORDS and not is_quantity(before)


def _changes(old: list[str], new: list[str]) -> list[tuple[list[str], list[str], str]]:
    """The spans that differ once change cues and negations are set aside: (removed, added, word before)."""
    core_a, before = [], []  # the old note's claim words, and the word (cue or not) just before each
    previous = ""
    for word in old:
        if word not in NEGATIONS and word not in CUES:
            core_a.append(word)
            before.append(previous)
        previous = word
    core_b = [w for w in new if w not in NEGATIONS and w not in CUES]
    # difflib's "popular words are junk" heuristic applies from 200 words on: without it two long look-alike notes
    # (a log with repeated lines) took 0.2-0.6 s each to compare, five of them per capture; short notes, which
    # the rules are about, are diffed exactly as before.
    opcodes = SequenceMatcher(None, core_a, core_b, autojunk=True).get_opcodes()
    return [(core_a[i1:i2], core_b[j1:j2], before[i1] if i1 < len(before) else previous)
            for op, i1, i2, j1, j2 in opcodes if op != "equal"]
