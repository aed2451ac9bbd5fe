"""Forgiving words: a query word that no readable memory holds, one slip from words that some do, is read as the
likeliest of them. Identifiers, numbers and CJK are never touched: they keep their exact-match behaviour."""

import bisect
import functools
import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass

from ...domain.text import SLIP_WORD_MAX, stem
from .query import FRAME_WORDS, STOPWORDS

MIN_LETTERS = 3  # a shorter word is one slip from too many others to guess which was meant
MAX_WORDS_READ = 8  # words of one query looked up (2-3 ms each): a query of a thousand made-up words costs 8

# For each word the caller may have misspelt: the words one slip away that memories hold, and how many hold each.
Spellings = Callable[[Sequence[str]], Mapping[str, Mapping[str, int]]]


@dataclass(frozen=True)
class Correction:
    text: str  # the query as it was most likely meant
    words: dict[str, str]  # each misspelt word and the word it was read as


# Endings English adds to a word, and what each may have taken from it: "mailing" is "mail", "queries" "query",
# "staffing" "staff", "running" "run", "shared" "share".
ENDINGS = (("ings", ""), ("ing", ""), ("ing", "e"), ("ies", "y"), ("ied", "y"), ("iest", "y"), ("ier", "y"),
           ("ers", ""), ("ers", "e"), ("er", ""), ("er", "e"), ("est", ""), ("est", "e"), ("ed", ""), ("ed", "e"),
           ("es", ""), ("s", ""), ("ly", ""), ("ness", ""), ("ment", ""), ("ments", ""), ("age", ""), ("al", ""))


def is_english(word: str, words: Set[str]) -> bool:
    """A word of the lexicon, or one with an English ending on a word of it (a doubled last letter undone)."""
    if word in words:
        return True
    for ending, restored in ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_LETTERS:
            base = word[: -len(ending)]
            if base + restored in words or (base[-1] == base[-2] and base[:-1] in words):
                return True
    return False


POSSESSIVE = re.compile(r"['’]")
FAMILY_PREFIX = 5  # letters a word shares with a word of the lexicon to be of its family (at most two cut off)


@functools.cache
def _sorted(words: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(words))


def of_english_family(word: str, words: frozenset[str]) -> bool:
    """A word of English, or one of the family of a word of it: the two share all of `word` but its last two
    letters, at least five ("allergy" beside "allergic", "antibiotic" beside "antibiotics"). The lexicon, a
    model's vocabulary, lacks many everyday words its relatives stand for; a name or a term ("Zendesk",
    "orthodontist") has no such relative. A possessive is its word ("user's" is "user")."""
    word = POSSESSIVE.split(word)[0]
    if is_english(word, words):
        return True
    if len(word) <= FAMILY_PREFIX:
        return False
    prefix = word[: max(FAMILY_PREFIX, len(word) - 2)]
    ordered = _sorted(words)
    at = bisect.bisect_left(ordered, prefix)
    return at < len(ordered) and ordered[at].startswith(prefix)


def correctable(token: str, lexicon: Set[str]) -> bool:
    """A plain word of ASCII letters, long enough to guess from, that carries meaning and is no word of English
    (a real word the brain happens not to hold is searched as written: "now" is never read as "new")."""
    return token.isascii() and token.isalpha() and MIN_LETTERS <= len(token) <= SLIP_WORD_MAX \
        and token not in STOPWORDS and token not in FRAME_WORDS and not is_english(token, lexicon)


def likeliest(word: str, near: Mapping[str, int]) -> str | None:
    """The word most likely meant: slips rarely touch a word's first letter, and among the rest the word more
    memories hold wins (a ranking by how common each candidate is, as spell checkers' noisy-channel models do with
    equal slip costs). None when no candidate is a word worth searching on, or one is the word with another ending
    ("standups" where memories hold "standup"): the keyword arm searches both by their stem already."""
    candidates = {c: n for c, n in near.items() if len(c) >= MIN_LETTERS and c not in STOPWORDS}
    if not candidates or any(stem(c) == stem(word) for c in candidates):
        return None
    return max(candidates, key=lambda c: (c[0] == word[0], candidates[c], c))


def correct(text: str, tokens: Sequence[str], spellings: Spellings, lexicon: Set[str]) -> Correction | None:
    """The query with every misspelt word replaced by its likeliest reading, or None when none is misspelt."""
    asked = [t for t in tokens if correctable(t, lexicon)][:MAX_WORDS_READ]
    if not asked:
        return None
    near = spellings(asked)
    words = {word: meant for word in asked if word in near and (meant := likeliest(word, near[word]))}
    return Correction(text=rewrite(text, words), words=words) if words else None


def rewrite(text: str, words: Mapping[str, str]) -> str:
    """The text with each misspelt word (whole, in any case) written as the word it was read as."""
    for word, meant in words.items():
        text = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", functools.partial(_cased, meant), text,
                      flags=re.IGNORECASE)
    return text


def _cased(word: str, match: re.Match[str]) -> str:
    """The word written as the caller wrote theirs: "Zanzibr" -> "Zanzibar", "DATABSE" -> "DATABASE"."""
    typed = match[0]
    if typed.isupper() and len(typed) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if typed[0].isupper() else word
