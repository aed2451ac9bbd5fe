"""The queries people and agents send, many and each different: the diverse workload of bench/scale.py and
bench/stages.py (issue 43), generated here, never repeated.

Three kinds, 50 distinct queries each by default, every one with the notes it should find:

- rare: one rare word ("where is the axolotl note", or the word alone), planted by `planted()` in a handful of the
  corpus's notes at every size;
- everyday: three to five common words of the notes, as people type them ("pricing budget for Delta",
  "the weekly meeting notes on security") — every note holds some of them, many hold all;
- paraphrase: a sentence meaning one kind of note without any of its words ("who signed off on the spending limits
  for money coming in from customers" for "... approved the payments budget ..."): found when a note of that
  verb, topic and noun is in the top 10.

The corpus generator is bench/scale.py's `note()`; a note numbered n holds rare word `planted(n)`, if any.
"""

import random
from dataclasses import dataclass

RARE_WORDS = (
    "axolotl", "pangolin", "narwhal", "okapi", "tapir", "capybara", "kinkajou", "wombat", "dugong", "aardvark",
    "chinchilla", "gharial", "saiga", "bilby", "numbat", "jerboa", "quoll", "tarsier", "ocelot", "caracal",
    "manatee", "echidna", "loris", "binturong", "fossa", "serval", "margay", "coati", "gerenuk", "markhor",
    "takin", "dhole", "sifaka", "potoroo", "solenodon", "babirusa", "hoatzin", "kakapo", "shoebill", "tuatara",
    "olinguito", "zorilla", "vaquita", "gaur", "bongo", "nilgai", "civet", "genet", "agouti", "paca",
)
PLANT_EVERY = 97  # one note in 97 holds a rare word: about two notes per word at 10k, twenty at 100k
RARE_FORMS = ("{w}", "where did I note the {w}", "{w} sighting", "anything about a {w}?")

TOPIC_MEANS = {
    "billing": "the way we charge customers", "onboarding": "getting new users started",
    "search": "finding things in the product", "pricing": "what customers are asked to pay",
    "hiring": "bringing new people onto the team", "security": "keeping attackers out",
    "logging": "recording what the servers do", "payments": "money coming in from customers",
    "backup": "spare copies kept in case data is lost",
}
NOUN_MEANS = {
    "plan": "scheme", "migration": "move to the new system", "proposal": "suggestion", "budget": "spending limits",
    "incident report": "write-up of the outage", "roadmap": "long-term schedule", "checklist": "list of steps",
    "contract": "signed agreement",
}
VERB_MEANS = {
    "reviewed": "looked over", "drafted": "wrote a first version of", "approved": "signed off on",
    "questioned": "raised doubts about", "rewrote": "redid", "shipped": "delivered", "postponed": "pushed back",
    "estimated": "put a number on",
}
PARAPHRASE_FORMS = ("who {v} the {n} for {t}", "which colleague {v} the {n} about {t}",
                    "remind me who {v} the {n} on {t}")
EVERYDAY_FORMS = ("{topic} {noun} for {project}", "the {topic} {noun} on {day}", "{person} {topic} {noun}",
                  "{verb} {topic} {noun}", "weekly meeting notes on {topic}", "{project} {noun} {day}",
                  "{person} {verb} the {noun}")


@dataclass(frozen=True)
class Query:
    kind: str  # "rare", "everyday" or "paraphrase"
    text: str
    wants: tuple[str, ...]  # words a note must all hold to count as found (paraphrase, rare); empty: not judged

    def found(self, contents: list[str]) -> bool:
        return any(all(word in content for word in self.wants) for content in contents)


def planted(n: int) -> str | None:
    """The rare word note n holds, if any."""
    return RARE_WORDS[(n // PLANT_EVERY) % len(RARE_WORDS)] if n % PLANT_EVERY == 0 else None


def queries(per_kind: int = 50, seed: int = 43) -> list[Query]:
    """`per_kind` distinct queries of each kind, interleaved (rare, everyday, paraphrase, rare, ...)."""
    from scale import DAYS, NOUNS, PEOPLE, PROJECTS, TOPICS, VERBS  # the corpus's words (scale.py imports this)

    rng = random.Random(seed)
    rare = [Query("rare", rng.choice(RARE_FORMS).format(w=word), (word,))
            for word in rng.sample(RARE_WORDS, min(per_kind, len(RARE_WORDS)))]
    everyday: dict[str, Query] = {}
    while len(everyday) < per_kind:
        text = rng.choice(EVERYDAY_FORMS).format(
            topic=rng.choice(TOPICS), noun=rng.choice(NOUNS), project=rng.choice(PROJECTS), day=rng.choice(DAYS),
            person=rng.choice(PEOPLE), verb=rng.choice(VERBS))
        everyday.setdefault(text, Query("everyday", text, ()))
    combos = rng.sample([(v, t, n) for v in VERBS for t in TOPICS for n in NOUNS], per_kind)
    paraphrase = [Query("paraphrase", rng.choice(PARAPHRASE_FORMS).format(
        v=VERB_MEANS[v], n=NOUN_MEANS[n], t=TOPIC_MEANS[t]), (f" {v} the {t} {n} ",)) for v, t, n in combos]
    return [q for trio in zip(rare, everyday.values(), paraphrase, strict=True) for q in trio]
