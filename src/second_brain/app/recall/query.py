"""From what the caller typed to the words recall searches on: tag syntax, tokens, framing words."""

import re
import unicodedata
from dataclasses import dataclass

TAG_SYNTAX = re.compile(r"(?<!\S)tag:(\S+)", re.IGNORECASE)
HASHTAG = re.compile(r"(?<![\w#])#([^\W\d]\w*(?:-\w+)*)")
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u3100-\u312f\u3000-\u303f\uff66-\uff9f"
CJK_RUN = re.compile(f"([{CJK}]+)")
# Particles and auxiliaries that glue CJK words together; they carry no topic.
CJK_STOP = re.compile(
    "について|ください|教えて|ですか|ました|ません|でした|します|して|した|です|ます|こと|ため|から|まで|なぜ|"
    "什么|怎么|为什么|没有|可以|我们|这个|因为|所以|但是|如果|已经|关于|"
    "[のはがをにでともへやかねよ的了是在和吗呢]"
)
EDGE = re.compile(r"^[^\w#]+|[^\w%]+$")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # a control character (NUL among them) parts words as a space does
STOPWORDS = frozenset(
    "the a an and or of to in on for is are was were be been i me my we you it this that these those with about "
    "from at as by do did does what when where who whom how why which am can could would will shall should may "
    "might must our your their its his her he she they them us any some there than then so not no yes if into "
    "over after before just also very much many more most".split()
)
FRAME_WORDS = frozenset(
    "user wants want know tried tell show find help remind recommended please have has had done "
    "remember recall get give look".split()
)


@dataclass(frozen=True)
class ParsedQuery:
    text: str  # the query with tag syntax taken out: what the embedder sees
    tokens: list[str]  # distinct search words, lowercased, framing dropped
    tags: list[str]  # tag: syntax and hashtags, lowercased
    words: list[str]  # every word of the query, stopwords and framing included


def parse(query: str) -> ParsedQuery:
    tags = [t.lower() for t in TAG_SYNTAX.findall(query)]
    text = TAG_SYNTAX.sub(" ", query).strip() or query.strip()
    tags += [t.lower() for t in HASHTAG.findall(text)]
    words = tokenize(text)
    return ParsedQuery(text=text, tokens=significant(words), tags=list(dict.fromkeys(tags)), words=words)


def tokenize(text: str) -> list[str]:
    """Lowercased words; identifiers stay whole (ERR_TLS_90412, config.yaml, v1.9, #149, SB-024)."""
    tokens: list[str] = []
    for raw in unicodedata.normalize("NFKC", CONTROL.sub(" ", text)).lower().split():
        for part in CJK_RUN.split(raw):
            if not part:
                continue
            if CJK_RUN.fullmatch(part):
                tokens.extend(w for w in CJK_STOP.split(part) if w)
                continue
            word = EDGE.sub("", part).removesuffix("'s").removesuffix("’s").rstrip(".")
            if any(ch.isalnum() for ch in word):
                tokens.append(word)
    return list(dict.fromkeys(tokens))


def significant(tokens: list[str]) -> list[str]:
    """Drop stopwords, then framing words, each only while something else is left to search on."""
    for noise in (STOPWORDS, FRAME_WORDS):
        kept = [t for t in tokens if t not in noise]
        if kept:
            tokens = kept
    # A lone CJK character is too common to search on unless it is all there is.
    longer = [t for t in tokens if not (len(t) == 1 and CJK_RUN.fullmatch(t))]
    return longer or tokens


def without_speakers(text: str, speakers: set[str]) -> str:
    """The query for the meaning side when it names who spoke: each name (or its possessive) becomes "they".

    The speaker weighting already finds that person's lines; left in, the name pulls the embedding towards every
    line that merely addresses them ("Thanks, Melanie!") instead of what the question is about. A query that is
    nothing but names keeps them: there is nothing else to search on."""
    meant = text
    for name in sorted(speakers, key=len, reverse=True):
        words = r"\W+".join(re.escape(word) for word in name.split())
        meant = re.sub(rf"(?<!\w){words}(?:['’]s)?(?!\w)", "they", meant, flags=re.IGNORECASE)
    return meant if set(tokenize(meant)) - STOPWORDS - FRAME_WORDS else text
