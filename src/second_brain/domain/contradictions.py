"""Telling, without a language model, whether a new note contradicts a similar older one.

Embeddings cannot: "allergic to peanuts" and "not allergic to peanuts" score 0.97 with MiniLM, as high as
a paraphrase. These rules look at what actually differs between the two notes, once they are known to be
about the same thing (they share most of their content words):

- negation on one side only ("is" / "is not", "works at" / "no longer works at");
- different numbers, times or dates in the same frame ("Tuesday" / "Wednesday", "3pm" / "4pm");
- antonyms ("likes" / "dislikes", "enabled" / "disabled");
- one content word swapped for another, the rest unchanged ("favourite colour is blue" / "... green").

All but the negation need the notes to differ in one place only, where a value goes (`conflict`): another
person, quarter, meeting or direction is another subject, and both notes stay true. A language model's
verdict that would retire or overwrite a note is held to the same test (`one_subject`).

Each rule errs on the side of "no contradiction": a missed contradiction leaves two notes side by side,
a false one would retire a true memory (kept for audit, but out of recall). The reasons name the rule,
never the notes' words: they are stored on the other memory's stream, which a forget does not erase.
"""

import re
from difflib import SequenceMatcher
from itertools import pairwise
from typing import NamedTuple

from .text import one_edit, stem

WORD = re.compile(r"[a-z0-9]+(?:['.:/-][a-z0-9]+)*")
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without",
                       "isnt", "arent", "wasnt", "werent", "dont", "doesnt", "didnt", "cant", "couldnt", "wont",
                       "wouldnt", "shouldnt", "hasnt", "havent", "hadnt", "quit", "stopped", "formerly"})
# Words that announce a change without carrying the claim: ignored when lining the two notes up.
CUES = frozenset({"now", "actually", "currently", "anymore", "still", "instead", "already", "longer", "really",
                  "moved", "changed", "switched", "rescheduled", "updated", "correction", "update", "turns", "out",
                  "so", "then", "also", "just", "fact", "in", "to", "from", "at", "on", "is", "are", "was",
                  "were", "be", "been", "has", "have", "had", "will", "would", "slipped", "postponed", "delayed",
                  "replaced", "became"})
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
MAX_SWAP_WORDS = 2  # a value of up to two words on each side: "Elasticsearch 7" became "OpenSearch 2"
MIN_SUBJECT_WORDS = 2  # shared content words before a changed value: the subject and its attribute
# Words by which a newer note says it changes the older: with one, a changed subject or a numbered name is a
# change too ("Oliver now manages the support team", "the booth moved to Hall 5").
CHANGE_CUES = frozenset({"now", "moved", "changed", "switched", "rescheduled", "updated", "correction", "instead",
                         "anymore", "slipped", "postponed", "delayed", "replaced", "became", "actually"})
# Words by which a newer note announces that something it is about changed, whatever else it rewords: "switched to
# paying through PayPal", "postponed until February 23", "has grown to 520", "is back in the office". Matched on
# the word's stem; each must be in the newer note and not the older (a cue both share announces nothing). Words
# whose everyday sense is another ("raised" money, "left" side, "cut" hair, "done") announce nothing.
ANNOUNCERS = frozenset(stem(w) for w in (
    *CHANGE_CUES, "moving", "switching", "pushed", "brought", "replacing", "renamed", "upgraded", "downgraded",
    "extended", "shortened", "increased", "decreased", "lowered", "reduced", "dropped", "grown", "grew", "shrunk",
    "went", "gone", "become", "new", "back", "fixed", "resolved", "finished", "completed", "joined", "quit",
    "relocated", "cancelled", "canceled", "starting", "effective", "longer", "more", "promoted", "transferred",
    "migrated", "reopened",
))
# What makes a sentence a case rather than a change: "if it rains, the picnic moves to the gym".
CONDITIONALS = frozenset({"if", "unless", "otherwise", "when", "whenever", "case", "option", "plan", "b"})
# Relations a subject holds with many objects at once: another one is an addition, not a change.
MANY_OBJECTS = frozenset(stem(w) for w in (
    "likes", "loves", "enjoys", "hates", "dislikes", "speaks", "plays", "allergic", "afraid", "scared", "fond",
    "fan", "knows", "collects", "reads", "watches", "owns", "visits", "visited", "studies", "teaches", "supports",
    "follows", "intolerant", "sensitive", "interested", "skilled", "fluent",
))
DIRECTIONS = frozenset({"to", "from"})
COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "will"})
CONTRASTS = frozenset({"but", "while", "whereas", "although", "though", "except", "however"})
SUBJECTS = frozenset({"i", "we", "you", "he", "she", "they", "my", "our", "your", "his", "her", "their"})
LINKS = COPULAS | {"in", "at", "on", "to", "with", "by"}  # what a value follows


def words(text: str) -> list[str]:
    """Lowercased words, with "isn't" read as "isnt" so negations are single words."""
    return WORD.findall(text.lower().replace("’", "'").replace("n't", "nt").replace("'", ""))


def is_quantity(word: str) -> bool:
    return (bool(QUANTITY.match(word)) or word in WEEKDAYS or word.removesuffix("s") in WEEKDAYS or word in MONTHS
            or word in NUMBER_WORDS)


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
    """Why `new` contradicts `old`, or None when no rule is sure it does (see `_judge`)."""
    judged = _judge(old, new)
    return judged[0] if judged and judged[1] else None


def doubt(old: str, new: str) -> str | None:
    """Why `new` may change a fact of `old` though the rules cannot tell: one detail changed, but where the
    subject or its relation stands, unannounced ("Hannah manages the support team" / "Oliver manages ..."). Both
    notes are kept and the pair is flagged for a person."""
    judged = _judge(old, new)
    if not judged or judged[1]:
        return None
    return f"{judged[0][:-1]}, but maybe about another subject: both are kept for you to review."


def announced(old: str, new: str) -> str | None:
    """Why `new` may update `old` though no rule sees which value changed: it is about the same thing (most content
    words shared) and it announces a change the older note does not ("switched", "postponed", "no longer",
    "has grown to", "new"). Never sure: both notes are kept and the pair flagged for a person; a conditional
    ("if it rains ... moves to the gym") announces nothing."""
    a, b = words(old), words(new)
    if not _loose_frame(a, b) or any(w in CONDITIONALS for w in b):
        return None
    if not _announces(a, b):
        return None
    return "The newer note says something about this changed: both are kept for you to review."


def _announces(old: list[str], new: list[str]) -> bool:
    """Whether the newer note has a word announcing a change that the older does not."""
    told = {stem(w) for w in new} & ANNOUNCERS
    if "more" in told and "no" not in new:  # "no more Picnic deliveries", not "three more seats"
        told.discard("more")
    if "longer" in told and not _no_longer(new):
        told.discard("longer")
    return bool(told - {stem(w) for w in old})


def _loose_frame(old: list[str], new: list[str]) -> bool:
    """`same_frame` on words cut to their root ("paying" is "pay", "notifications" "notification"): a note that
    announces a change rewords the rest more freely than one that only swaps a value."""
    def root(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
        return word

    a, b = {root(w) for w in content_words(old)}, {root(w) for w in content_words(new)}
    shared = a & b
    return len(shared) >= MIN_SHARED and len(shared) >= MIN_OVERLAP * min(len(a), len(b))


def _judge(old: str, new: str) -> tuple[str, bool] | None:
    """A rule's reason for seeing a contradiction, and whether it is sure; None when no rule sees one.

    A contradiction is one fact given a new value: the two notes say the same thing about the same subject
    except in one place. So, besides a negation of the same claim, the notes must differ in a single span once
    change cues are set aside ("send Lucia the Q1 revenue report at 9" and "send Kenji the Q4 churn report at
    15" differ in three: other reports, not a change), travel the same way ("to Tokyo" is not "from Tokyo"),
    and the span must sit where a value goes: after the subject and its attribute (two shared content words
    before it, "the go-live date for Quartz is May 5") or after a link word ("the retreat is in the Alps"),
    unless the newer note says it is a change ("Oliver now manages the support team"). A different relation
    with the same value ("Tom lives in Berlin" / "Tom works in Berlin") is no new value; opposites
    ("likes" / "dislikes") are one wherever they stand.
    """
    a, b = words(old), words(new)
    if not same_frame(a, b):
        return None
    only_old, only_new = content_words(a) - content_words(b), content_words(b) - content_words(a)
    # A negation contradicts only when it is about the same claim: words may be dropped on one side, never
    # swapped ("not allergic to shellfish" says nothing about peanuts).
    if negated(a) != negated(b) and not (only_old and only_new) and len(only_old | only_new) <= MAX_NEW_WORDS:
        if _restates(a, b) or _restates(b, a):
            return None  # "open on Saturdays" / "open on Saturdays but the cafeteria is not": an added claim
        if any(_negative(w) for w in only_old | only_new):
            # "lactose intolerant" / "can't have lactose": a word that denies by itself may say what "not" says
            return "One note negates what the other asserts.", False
        return "One note negates what the other asserts.", True
    if negated(a) != negated(b):
        return None  # one side negated, and about something else: the other rules would misread the swap
    if not only_old and not only_new and _denied(a) != _denied(b):
        # "vegetarian, eats no meat" / "eats meat, not vegetarian"
        return "One note negates what the other asserts.", True
    if _directions(a) != _directions(b):
        return None  # the way there and the way back
    spans = _changes(a, b)
    if len(spans) != 1:
        return None  # nothing differs but cues, or more than one detail does: another subject, not a new value
    span = spans[0]
    if span.joins_two or len(span.removed) > MAX_SPAN or len(span.added) > MAX_SPAN:
        return None  # "budget for H1 is 200k" / "for H2 is 150k": a qualifier and a value; or a rewritten passage
    if len(span.removed) == 1 and len(span.added) == 1 and _slip(span.removed[0], span.added[0]):
        return None  # a typo, corrected or made: the same word
    if len(span.removed) == 1 and len(span.added) == 1 and _opposite(span.removed[0], span.added[0]):
        return "The notes say opposite things.", True
    cued = any(w in CHANGE_CUES for w in b) or _no_longer(b)
    valued = span.shared_before >= MIN_SUBJECT_WORDS or (span.shared_before >= 1 and span.before in LINKS)
    placed = valued or cued  # else the subject or the relation differs: unsure ("Tom lives/works in Berlin")
    if not cued and _gathers(old, new, span):
        # Unannounced, a second object of a relation that takes many ("allergic to peanuts" / "to shellfish",
        # "afraid of dogs" / "of the dark") or a second entry under a label that gathers proposals ("Gift idea
        # for Mum: a scarf" / ": a cookbook") is an addition: nothing to retire, nothing to ask a person.
        return None
    if not cued and (span.places > 1 or _recurring(span) or _listed(old, new, span)):
        # Unannounced, the other value may be another instance, not a new one: two details at once ("1:1 with
        # Isla at 9:00" / "with Jens at 16:00"), another weekday ("swim practice on Tuesday" / "on Friday"), another
        # entry under one label or of one relation ("Dinner idea: risotto" / ": curry", "afraid of dogs" / "of
        # the dark"). Both are kept and flagged.
        placed = False
    names = _names(span) and not cued
    old_q = [w for w in span.removed if is_quantity(w)]
    new_q = [w for w in span.added if is_quantity(w)]
    same_words = [w for w in span.removed if not is_quantity(w)] == [w for w in span.added if not is_quantity(w)]
    if old_q and new_q and set(old_q) != set(new_q) and same_words and not names:  # only the value moved
        return "The notes give different values for the same thing.", placed
    if len(content_words(a)) >= 3:
        old_c = [w for w in span.removed if w not in STOPWORDS]
        new_c = [w for w in span.added if w not in STOPWORDS]
        swapped = 0 < len(old_c) <= MAX_SWAP_WORDS and 0 < len(new_c) <= MAX_SWAP_WORDS
        if swapped and not names and not {stem(w) for w in old_c} & {stem(w) for w in new_c}:
            return "One detail changed between the notes.", placed
    return None


def restates_fact(old: str, new: str, share: float = 0.5) -> bool:
    """Whether `new` says again what `old` says, worded otherwise: the same values (numbers however written: "14",
    "fourteen", "LH 2041" and "LH2041", "30 days" and "30-day"; weekdays; months), and at least `share` of all their
    content words in common, give or take an ending ("backups"/"backup", "notes"/"note")."""
    if _asks(old) != _asks(new):
        return False  # a question and its answer
    spans = _changes(words(old), words(new))
    if len(spans) == 1 and _gathers(old, new, spans[0]):
        return False  # "afraid of dogs" / "of the dark": one more of many, not the same one again
    a, b = (words(POSSESSIVE.sub("", CODE.sub(r"\1\2", text)).replace("-", " ")) for text in (old, new))
    if _values(a) != _values(b):
        return False
    ra, rb = content_words(a), content_words(b)
    shared = sum(any(_alike(x, y) for y in rb) for x in ra)
    return bool(ra and rb) and shared >= share * (len(ra) + len(rb) - shared)


QUESTION_WORDS = frozenset({"which", "what", "who", "where", "when", "why", "how", "whose", "whom"})


def _asks(text: str) -> bool:
    tokens = words(text)
    return text.rstrip().endswith("?") or bool(tokens) and tokens[0] in QUESTION_WORDS


def _alike(a: str, b: str) -> bool:
    """The same word give or take an ending ("jenss" for Jens's, "backups"/"backup", "notes"/"note")."""
    if a == b or a + "s" == b or b + "s" == a:  # "day"/"days"
        return True
    return min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)) and abs(len(a) - len(b)) <= 3


COUNTED = {w: str(n) for n, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                                             "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                                             "sixteen", "seventeen", "eighteen", "nineteen", "twenty"))}
DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")
POSSESSIVE = re.compile(r"['’]s\b")  # "Olu's view", "Jens's flight": the name itself
CODE = re.compile(r"\b([A-Z]{1,4}) (\d{2,})\b")  # "LH 2041", "ICE 1043": one code, written apart or not


def _values(tokens: list[str]) -> set[str]:
    """The values a note states: its digit runs, numbers in words, weekdays and months."""
    found = {COUNTED[w] for w in tokens if w in COUNTED}
    found |= {w.removesuffix("s") for w in tokens if w.removesuffix("s") in WEEKDAYS or w in MONTHS}
    return found | {run for w in tokens for run in DIGITS.findall(w)}


def _slip(old: str, new: str) -> bool:
    """Whether two words are one typing slip apart ("millimetres"/"milimetres"): the same word, misspelt."""
    return min(len(old), len(new)) >= 5 and old.isalpha() and new.isalpha() and new in one_edit(old)


NEGATIVE_WORDS = frozenset({"allergic", "averse", "against", "afraid", "free", "lacking", "missing", "banned",
                            "forbidden", "closed", "absent", "intolerant", "unable", "unavailable"})
NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")


def _negative(word: str) -> bool:
    """Whether a word denies by itself ("intolerant", "unavailable", "allergic"): a negation may restate it."""
    return word in NEGATIVE_WORDS or (len(word) >= 8 and word.startswith(NEGATIVE_PREFIXES))


def _recurring(span: "Span") -> bool:
    """Whether the changed value is only a weekday (or weekdays) something happens on ("practice on Tuesday"): a
    schedule, which may have another day too. A weekday a thing is ("the deploy window is Friday") has one."""
    changed = [w for w in span.removed + span.added if w not in STOPWORDS]
    days = [w.removesuffix("s") in WEEKDAYS for w in changed]
    times = [bool(QUANTITY.match(w)) for w in changed]
    return (span.before in ("on", "every", "each") and any(days)
            and all(d or t for d, t in zip(days, times, strict=True)))


# Labels under which entries gather rather than replace one another ("Gift idea for Mum: ...").
PROPOSALS = frozenset(stem(w) for w in (
    "idea", "option", "candidate", "suggestion", "recommendation", "tip", "wish", "contender", "shortlist",
))


def _gathers(old: str, new: str, span: "Span") -> bool:
    """Whether the changed value is one more of many: an object of a relation that takes many (not a number of
    them: "speaks 3 languages" / "4 languages" is a new value), or an entry under a shared label naming proposals."""
    if any(is_quantity(w) for w in span.removed + span.added):
        return False
    if span.related:
        return True
    label = old.partition(":")[0]
    return _listed(old, new, span) and span.before != "of" and any(stem(w) in PROPOSALS for w in words(label))


def _listed(old: str, new: str, span: "Span") -> bool:
    """Whether the changed value is an entry under a label both notes share ("Gift idea for Mum: a scarf" /
    ": a cookbook") or the object of "of" ("afraid of dogs" / "of the dark"): one of several, not a new value."""
    if span.before == "of":
        return True
    label_old, colon_old, _ = old.partition(":")
    label_new, colon_new, _ = new.partition(":")
    return bool(colon_old and colon_new) and words(label_old) == words(label_new) and len(words(label_old)) >= 2 \
        and span.shared_before >= len(_claim(words(label_old)))


def one_subject(old: str, new: str) -> bool:
    """Whether a verdict that retires or overwrites `old` can be about the same subject as `new`: the notes travel
    the same way and replace claim words in at most one place (words added or dropped are details, two places
    replaced are another person and another quarter: "send Lucia the Q1 revenue report at 9" / "send Kenji the
    Q4 churn report at 15"). How a language model's contradiction or replacement is checked: it may see a change
    the rules cannot ("runs Postgres 14" / "got upgraded; is on Postgres 16 since Monday"), never one between two
    subjects. A change the newer note announces may replace the relation with the value ("live in NYC" / "moved to
    LA")."""
    a, b = words(old), words(new)
    if _directions(a) != _directions(b):
        return False
    spans = [s for s in _changes(a, b) if _claim(s.removed) and _claim(s.added)]
    replaced = sum(s.places for s in spans)
    # A note that announces its change may reword the relation with the value, its subject kept: "I live in NYC" /
    # "I moved to LA" replaces "live" and "NYC" (two places), one fact changed. Unannounced, two places are two
    # subjects; so is a replaced first word ("Karim lives in Porto" / "Lea moved to Lisbon").
    kept_subject = all(s.shared_before >= 1 for s in spans)
    return replaced <= (2 if _announces(a, b) and kept_subject else 1)


def adds_nothing(old: str, new: str) -> bool:
    """Whether `new` repeats `old`: its content words appear in `old`, in the same order ("thread 1 note 2"
    does not repeat "thread 2 note 1")."""
    remaining = iter(_claim(words(old)))
    return all(word in remaining for word in _claim(words(new)))


def _claim(tokens: list[str]) -> list[str]:
    return [stem(t) for t in tokens if t not in STOPWORDS and t not in NEGATIONS]


class Span(NamedTuple):
    """Where two notes differ, once change cues and negations are set aside."""
    removed: list[str]
    added: list[str]
    before: str  # the old note's word just before the span (a cue or not)
    after: str  # the first claim word both notes share after it, or ""
    shared_before: int  # content words (and pronouns: "I prefer") both notes share before it
    joins_two: bool  # a copula inside the span on either side: a qualifier and a value changed together
    places: int  # separate runs of changed words in either note ("2.0 shipped | February"); a time is one run
    related: bool  # what a relation that takes many objects takes, just before it ("likes jazz", "allergic to")


def _names(span: Span) -> bool:
    """Whether the changed words are numbers that name something ("note 5", "hall 3"): no value changed. A
    number with a unit ("20k", "9pm", "$40", "45 euros") is an amount, whatever precedes it."""
    changed = span.removed + span.added
    return (all(w.replace(".", "").isdigit() for w in changed) and span.before not in STOPWORDS
            and not is_quantity(span.before) and (not span.after or span.after in STOPWORDS))


def _opposite(old: str, new: str) -> bool:
    opposites = ANTONYMS.get(old, set()) | ANTONYMS.get(stem(old), set())
    return new in opposites or stem(new) in opposites


def _changes(old: list[str], new: list[str]) -> list[Span]:
    """The spans where two notes' claim words differ."""
    core_a, before, at_a = [], [], []  # the old note's claim words, the word (cue or not) before each, its place
    previous = ""
    for i, word in enumerate(old):
        if word not in NEGATIONS and word not in CUES:
            core_a.append(word)
            before.append(previous)
            at_a.append(i)
        previous = word
    kept_b = [(i, w) for i, w in enumerate(new) if w not in NEGATIONS and w not in CUES]
    core_b, at_b = [w for _, w in kept_b], [i for i, _ in kept_b]

    def joins_two(tokens: list[str], at: list[int], i1: int, i2: int) -> bool:
        return i2 - i1 >= 2 and any(w in COPULAS for w in tokens[at[i1]:at[i2 - 1]])

    def places(tokens: list[str], at: list[int], i1: int, i2: int) -> int:
        runs: list[list[str]] = []
        for k in range(i1, i2):
            if runs and at[k] == at[k - 1] + 1:
                runs[-1].append(tokens[at[k]])
            elif runs and all(map(is_quantity, runs[-1] + [tokens[at[k]]])):
                runs[-1].append(tokens[at[k]])  # "Mondays at 14:00": one time
            else:
                runs.append([tokens[at[k]]])
        return len(runs)

    def related(tokens: list[str], at: list[int], i1: int) -> bool:
        start = at[i1] if i1 < len(at) else len(tokens)
        return any(stem(w) in MANY_OBJECTS for w in tokens[max(0, start - 3):start])

    # difflib's "popular words are junk" heuristic applies from 200 words on: without it two long look-alike notes
    # (a log with repeated lines) took 0.2-0.6 s each to compare, five of them per capture; short notes, which
    # the rules are about, are diffed exactly as before.
    opcodes = SequenceMatcher(None, core_a, core_b, autojunk=True).get_opcodes()
    return [Span(core_a[i1:i2], core_b[j1:j2], before[i1] if i1 < len(before) else previous,
                 core_a[i2] if i2 < len(core_a) else "", sum(w not in STOPWORDS or w in SUBJECTS for w in core_a[:i1]),
                 joins_two(old, at_a, i1, i2) or joins_two(new, at_b, j1, j2),
                 max(places(old, at_a, i1, i2), places(new, at_b, j1, j2)),
                 related(old, at_a, i1))
            for op, i1, i2, j1, j2 in opcodes if op != "equal"]


def _restates(old: list[str], new: list[str]) -> bool:
    """Whether a clause of `new` (split at "but", "while"...) asserts all of `old`'s claim, unnegated."""
    claim = content_words(old)
    clauses: list[list[str]] = [[]]
    for word in new:
        if word in CONTRASTS:
            clauses.append([])
        else:
            clauses[-1].append(word)
    return any(not negated(c) and claim <= content_words(c) for c in clauses if len(clauses) > 1)


def _denied(tokens: list[str]) -> set[str]:
    """The claim word each negation denies: the first one after it ("eats no meat" denies meat)."""
    denied = set()
    for i, word in enumerate(tokens):
        if word in NEGATIONS:
            following = _claim([w for w in tokens[i + 1:] if w not in CUES])
            if following:
                denied.add(following[0])
    return denied


def _directions(tokens: list[str]) -> set[str]:
    """Which ways a note travels: "to" and "from", unless they only name a change ("moved to", "changed from")."""
    return {w for i, w in enumerate(tokens) if w in DIRECTIONS and (i == 0 or tokens[i - 1] not in CHANGE_CUES)}


def _no_longer(tokens: list[str]) -> bool:
    return any(a == "no" and b == "longer" for a, b in pairwise(tokens))
