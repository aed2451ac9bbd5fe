"""A memory's importance (1-5), kind (episodic or semantic) and volatility, judged from its words at capture.

The reference asked a language model for importance and kind in the background, so a memory was
unprotected (importance 0) until the answer landed. These rules answer at once; a configured model may
refine the judgement later, through the same event.
"""

import re
from dataclasses import dataclass

# How likely the fact is to stop being true (the reference's staleness patterns, applied at capture).
# Only plain signs: a guessed "volatile" costs a memory most of its rank once it is a few weeks old.
VOLATILE = re.compile(r"\b(appointment|deadline|due (?:on|by)|expires?(?: on)?|valid until)\b")
DURABLE = re.compile(
    r"\b(birthday|born|birth date|date of birth|grew up in|(?:my|his|her|their) name is|is called|nationality"
    r"|maiden name|allergic|allergy)\b"
)
STATE = re.compile(
    r"\b(works? (?:at|for)|working (?:at|for)|employed|job (?:at|with)|lives in|living in|plans? to|planning to"
    r"|role at|position at|currently|is dating|married to)\b"
)
# Something that happened, at a time: episodic. Everything else (facts, preferences, how-tos): semantic.
EPISODIC = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last (?:week|month|year|night)|this (?:morning|afternoon|evening|week)"
    r"|ago|(?:on|last|next) (?:mon|tues|wednes|thurs|fri|satur|sun)day|meeting|met|went|visited|attended"
    r"|decided|agreed|shipped|launched|released|deployed|happened|called|signed|finished|started|bought"
    r"|\d{4}-\d{2}-\d{2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}\b)"
)
# Words people use for what they must not lose.
# "important" only as a label ("Important: ...", "important!"): in conversation it is mostly a figure of speech.
STRONG = re.compile(
    r"(^\W*important\b|\bimportant(?=\s*[:!])|\b(?:critical|urgent|never forget|must not|allerg\w*"
    r"|password|deadline|emergency)\b)"
)
TRIVIAL = re.compile(r"^\W*(ok|okay|thanks|thank you|lol|haha|hi|hello|yes|no|test)\W*$")


@dataclass(frozen=True)
class Classification:
    importance: int  # 1-5
    kind: str  # episodic | semantic
    volatility: str  # durable | state | volatile | "" when nothing says


def classify(content: str, tags: tuple[str, ...] = ()) -> Classification:
    lowered = content.lower()
    strong = {m.group(1) for m in STRONG.finditer(lowered)}
    if TRIVIAL.match(lowered):
        importance = 1
    elif strong:
        importance = 5 if len(strong) >= 2 else 4
    else:
        importance = 3  # length says nothing: short notes are often the facts people ask about
    kind = "episodic" if EPISODIC.search(lowered) else "semantic"
    if "task" in tags or (VOLATILE.search(lowered) and not DURABLE.search(lowered)):
        volatility = "volatile"
    elif DURABLE.search(lowered) and not STATE.search(lowered):
        volatility = "durable"
    elif STATE.search(lowered):
        volatility = "state"
    else:
        volatility = ""
    return Classification(importance, kind, volatility)
