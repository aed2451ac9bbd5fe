"""The no-model contradiction rules, on the labelled pairs in tests/data and on the cases each rule is for."""

import json
from pathlib import Path

import pytest

from second_brain.domain.contradictions import adds_nothing, announced, conflict, doubt, one_subject, restates_fact

PAIRS = [json.loads(line)
         for line in (Path(__file__).parents[1] / "data" / "note_pairs.jsonl").read_text().splitlines()]


def rate(label: str) -> float:
    chosen = [p for p in PAIRS if p["label"] == label]
    return sum(bool(conflict(p["old"], p["new"])) for p in chosen) / len(chosen)


def test_the_pair_set_is_large_enough_to_mean_something():
    labels = {p["label"] for p in PAIRS}
    assert len(PAIRS) >= 40 and labels == {"contradiction", "paraphrase", "addition", "duplicate", "distinct"}


def test_the_rules_catch_most_contradictions_and_few_false_ones():
    # Measured 21/24 and 2/47 (after a review showed swapped-claim negations retiring true memories, the
    # negation rule got stricter and lost one contradiction); these bounds catch a rule that regresses.
    assert rate("contradiction") >= 0.85
    assert rate("paraphrase") == 0 and rate("duplicate") == 0
    others = [p for p in PAIRS if p["label"] != "contradiction"]
    assert sum(bool(conflict(p["old"], p["new"])) for p in others) <= 2


@pytest.mark.parametrize(("old", "new", "why"), [
    ("I am allergic to peanuts.", "I am not allergic to peanuts.", "negates"),
    ("Dana works at Acme.", "Dana no longer works at Acme.", "negates"),
    ("The standup is at 9am in room Kepler", "The standup moved to 10am in room Kepler", "different values"),
    ("Sam likes spicy food.", "Sam dislikes spicy food.", "opposite"),
    ("My favourite colour is blue.", "My favourite colour is green.", "One detail changed"),
])
def test_each_rule(old, new, why):
    assert why in (conflict(old, new) or "")


@pytest.mark.parametrize(("old", "new"), [
    ("thread 3 note 5", "thread 3 note 6"),  # numbers that name things are no values
    ("Invoice 1042 was paid in full.", "Invoice 1043 was paid in full."),
    ("I am allergic to peanuts.", "Peanuts give me an allergic reaction."),  # a paraphrase
    ("Tom is allergic to peanuts.", "Tom is not allergic to shellfish."),  # two different claims
    ("The flight leaves at 9am.", "The flight returns at 6pm."),
    ("Renew the passport", "Book the flights to Lisbon"),  # not about the same thing
    ("The office is open.", "The office is not a place for meetings about the budget review."),
])
def test_what_is_not_a_contradiction(old, new):
    assert conflict(old, new) is None


def test_a_repeat_adds_nothing_in_the_same_order():
    assert adds_nothing("Dana works at Acme Corp as a designer.", "dana works at acme corp as a designer")
    assert not adds_nothing("thread 2 note 1", "thread 1 note 2")
    assert not adds_nothing("Dana works at Acme.", "Dana works at Acme and leads the brand refresh.")


def test_a_changed_value_is_found_in_long_notes_too():
    """Notes past 200 words are diffed with difflib's popular-word heuristic (fast on repetitive logs): one value
    changed in the middle of a long note is still a contradiction, and a long log's next entry is not."""
    filler = " ".join(f"item {n} of the checklist was reviewed by the team" for n in range(40))
    old = f"{filler}. The pricing floor for enterprise deals is $6k per year. {filler}"
    assert conflict(old, old.replace("$6k", "$8k")) == "The notes give different values for the same thing."
    log = "Falcon migration log {n}: " + "step {n} moved shard data. " * 130
    assert conflict(log.format(n=3), log.format(n=4)) is None


# A contradiction is one fact given a new value. Pairs written for these rules (not the bench's): a newer note
# that changes one value of the older, and look-alikes where both stay true (another person, period, meeting,
# direction, relation). Retiring a true memory costs far more than missing a change: no look-alike may retire.
CHANGES = [
    ("The staging server runs Ubuntu 20.04", "The staging server now runs Ubuntu 22.04"),
    ("Sara's phone number is 555-0142", "Sara's phone number is 555-0199"),
    ("The team lunch is on Thursdays", "The team lunch moved to Fridays"),
    ("Our office wifi password is tigerlily", "Our office wifi password is bluefjord"),
    ("The rent is $1,800 a month", "The rent is now $1,950 a month"),
    ("Max is allergic to penicillin", "Max is not allergic to penicillin"),
    ("The deploy freeze starts on December 18", "The deploy freeze starts on December 20"),
    ("Priya leads the mobile team", "Marco now leads the mobile team"),
    ("The API rate limit is 100 requests per minute", "The API rate limit is 300 requests per minute"),
    ("Our accountant is Dana Whitfield", "Our accountant is Greg Olsen"),
    ("The kids' school starts at 8:15", "The kids' school starts at 8:40"),
    ("The conference booth is in Hall 3", "The conference booth moved to Hall 5"),
    ("Dad's flight lands at 6:30pm", "Dad's flight now lands at 9:10pm"),
    ("The backup job runs nightly", "The backup job runs hourly"),
    ("Our default branch is master", "Our default branch is main"),
    ("The gym membership costs 45 euros a month", "The gym membership costs 55 euros a month"),
    ("Carlos prefers tea", "Carlos prefers coffee"),
    ("The printer on floor 2 is broken", "The printer on floor 2 is working"),
    ("The quarterly review is with Jana", "The quarterly review is with Tomas"),
    ("Our CI runs on Jenkins", "Our CI switched to GitHub Actions"),
]
LOOKALIKES = [
    ("Tom lives in Berlin", "Tom works in Berlin"),
    ("The Monday standup is at 9:30", "The Friday retro is at 16:00"),
    ("Anna's birthday is March 3", "Ben's birthday is March 28"),
    ("The Android app uses Kotlin", "The iOS app uses Swift"),
    ("Early check-in is allowed at the Lisbon hotel", "Late check-out is allowed at the Lisbon hotel"),
    ("Sprint 14 demo is on Friday", "Sprint 15 demo is on Friday"),
    ("The 2023 tax return was filed in April", "The 2024 tax return is due in April"),
    ("The London office opens at 8am", "The Berlin office opens at 9am"),
    ("Grandma's cake recipe needs 200g sugar", "Grandma's bread recipe needs 500g flour"),
    ("The blue route takes 40 minutes", "The red route takes 55 minutes"),
    ("Kenji reviewed the Q3 budget", "Kenji drafted the Q4 budget"),
    ("The dentist appointment is on May 4 at 10am", "The vet appointment is on May 6 at 2pm"),
    ("Our Slack workspace has 120 members", "Our GitHub org has 45 members"),
    ("Lena's flight to Tokyo departs at 11:00", "Lena's flight from Tokyo departs at 18:45"),
    ("The small box holds 12 eggs", "The large box holds 30 eggs"),
    ("My passport expires in 2027", "My driving licence expires in 2031"),
    ("Weekday parking costs $5", "Weekend parking costs $12"),
    ("Alice's manager is Rob", "Alice's mentor is Carmen"),
    ("The east wing closes at 6pm", "The west wing closes at 9pm"),
    ("Jonas used to work at SAP", "Jonas works at Zalando"),
]


@pytest.mark.parametrize(("old", "new"), LOOKALIKES)
def test_a_look_alike_never_retires_the_older_note(old, new):
    assert conflict(old, new) is None


def test_most_changed_values_are_caught():
    # 18/20 when written: "Our accountant is Dana Whitfield" shares one content word with its change, "Our CI
    # switched to GitHub Actions" one too; both are kept side by side.
    assert sum(bool(conflict(old, new)) for old, new in CHANGES) >= 17


@pytest.mark.parametrize(("old", "new"), [
    ("Send Lucia the Q1 revenue report on Monday", "Send Kenji the Q4 churn report on Monday"),  # three places
    ("The 2024 summer party was in Hamburg", "The 2025 summer party will be in Cologne"),  # the year and the place
    ("The hiring budget for H1 is 200k", "The hiring budget for H2 is 150k"),  # a qualifier and a value in one span
    ("The train to Milan leaves at 8:05", "The train from Milan leaves at 19:10"),  # the other way
    ("Tom lives in Berlin", "Tom works in Berlin"),  # another relation, the same value
    ("Hannah manages the support team", "Oliver manages the support team"),  # another person, unannounced
    ("The office is open on Saturdays.", "The office is open on Saturdays but the cafeteria is not."),  # added
])
def test_what_differs_in_more_than_one_value_is_no_contradiction(old, new):
    assert conflict(old, new) is None


@pytest.mark.parametrize(("old", "new", "why"), [
    ("Hannah manages the support team", "Oliver now manages the support team", "One detail changed"),  # announced
    ("The booth is in Hall 3 of the fair", "The booth moved to Hall 5 of the fair", "different values"),
    ("The Helios sponsorship costs 20k", "The Helios sponsorship costs 25k", "different values"),  # an amount
    ("The weekly sync is on Mondays at 14:00", "The weekly sync moved to Wednesdays at 11:00", "different values"),
    ("Jordan is vegetarian and eats no meat.", "Jordan eats meat and is not vegetarian.", "negates"),
    ("I prefer window seats on long flights.", "I prefer aisle seats on long flights.", "One detail changed"),
])
def test_one_value_changed_is_a_contradiction(old, new, why):
    assert why in (conflict(old, new) or "")


@pytest.mark.parametrize(("old", "new", "same"), [
    ("Our staging database runs Postgres 14.", "Staging got upgraded; its database is on Postgres 16 since Monday.",
     True),  # a change the rules cannot see, worded afresh: a model may retire the older note
    ("Emre works at Acme", "Emre works at Acme and leads the brand refresh", True),  # a detail added
    ("Remind me Monday at 9 to send Lucia the Q1 revenue report",
     "Remind me Monday at 15 to send Kenji the Q4 churn report", False),
    ("Planning for team Otter is at 10:00", "Demo for team Otter is at 15:30", False),
    ("Pulse 2.0 shipped in February", "Pulse 3.0 ships in September", False),
    ("The train to Milan leaves at 8:05 on Tuesday", "The train back from Milan leaves at 19:10 on Thursday", False),
    ("I live in NYC", "I moved to LA", True),  # the reference's own example: the relation reworded with the value
    ("Meeting Tuesday 2pm", "Meeting moved to Wednesday 3pm", True),
    ("Karim lives in Porto", "Karim moved to Lisbon last spring", True),
    ("Karim lives in Porto", "Lea lives in Lisbon", False),  # another person, unannounced
    ("Karim lives in Porto", "Lea moved to Lisbon", False),  # another person: announced, but three places
])
def test_a_models_retirement_must_be_about_one_subject(old, new, same):
    assert one_subject(old, new) is same


# Issue 60: a change announced in other words is flagged, never retired by these rules; a value that may be another
# instance (two details at once, another weekday, another entry under one label) is flagged, not retired. Worded
# here afresh, not taken from ../shared/bench.
@pytest.mark.parametrize(("old", "new"), [
    ("We heat the flat with the gas boiler", "We switched to heating the flat with a heat pump"),
    ("The dentist appointment is on March 3", "The dentist appointment has been postponed until March 17"),
    ("The Lynx API allows 200 requests a minute", "The Lynx API went from 200 to 100 requests a minute"),
    ("Pia's landline is 030 555 1234", "Pia has a new landline: 030 555 9876"),
    ("The Orca wiki is hosted on Confluence", "The Orca wiki was migrated to Notion"),
    ("Tilo works from the Hamburg office", "Tilo is back in the Munich office"),
    ("We buy our coffee beans at Röstwerk", "No more Röstwerk: we buy our coffee beans online now"),
    ("The bakery opens at 7 on weekdays", "Starting in May the bakery opens at 6:30 on weekdays"),
])
def test_a_change_announced_in_other_words_is_flagged(old, new):
    assert announced(old, new)  # flagged at least (a rule may be sure enough to retire: "No more Röstwerk")


@pytest.mark.parametrize(("old", "new"), [
    ("The picnic is in Volkspark", "If it rains, the picnic moves to the community hall"),  # a case, not a change
    ("The bakery opens at 7 on weekdays", "The bakery opens at 9 on Sundays"),  # no announcement
    ("We moved to Leipzig in 2019", "We moved the sofa to the living room"),  # the cue is in both, about two things
    ("Renew the passport", "The new passport photos are ready"),  # not about the same thing
])
def test_what_announces_no_change_to_the_older_note(old, new):
    assert announced(old, new) is None


@pytest.mark.parametrize(("old", "new"), [
    ("Thursday: lunch with Omar at 12:00", "Thursday: lunch with Priya at 13:30"),  # two details at once
    ("Lena has piano lessons on Monday at 17:00", "Lena has piano lessons on Thursday at 17:00"),  # another weekday
    ("The dojo is open on Tuesdays", "The dojo is open on Saturdays"),
    ("Wi-Fi password: blue-heron-7", "Wi-Fi password: red-fox-22"),  # another entry under one label, or a new value
    ("The new desk top is made of oak", "The new desk top is made of walnut"),  # the object of "of"
])
def test_another_instance_is_flagged_never_retired(old, new):
    assert conflict(old, new) is None and doubt(old, new)


def test_a_weekday_a_thing_is_stays_one_value():
    assert conflict("The deploy window is Friday afternoon.", "The deploy window is Thursday afternoon.")


@pytest.mark.parametrize(("old", "new"), [
    ("The tent pegs must be 25 centimetres long", "The tent pegs must be 25 centimeters long"),  # a spelling
    ("The invoice template is in the shared drive", "The invoice template is in the shraed drive"),  # a typo
])
def test_a_word_spelt_otherwise_is_no_change(old, new):
    assert conflict(old, new) is None and doubt(old, new) is None


def test_a_word_that_denies_by_itself_may_be_what_not_says():
    assert conflict("Ravi is gluten intolerant", "Ravi can't have gluten") is None
    assert doubt("Ravi is gluten intolerant", "Ravi can't have gluten")
    assert conflict("Ravi is vegan", "Ravi is not vegan")  # a plain negation still retires


@pytest.mark.parametrize(("old", "new", "same"), [
    ("Backups of the wiki are kept for 14 days", "Wiki backups: fourteen days", True),  # numbers in words
    ("Maja's train is ICE 1043", "Maja takes the ICE1043", True),  # a code written together
    ("Wiki backups are kept for 30 days", "Wiki backups: 30-day retention", True),  # "for 30" is no code
    ("Kofi thinks we should repaint the hall before May", "Kofi's view: repaint the hall ahead of May", True),
    ("The spare bike lock key is in the kitchen drawer", "Spare bike lock key: kitchen drawer", True),
    ("The bakery opens at 7 on weekdays", "The bakery opens at 8 on weekdays", False),  # another value
    ("The wiki backups run at night", "The wiki search runs on a separate server", False),  # another fact
    ("Nina's son is afraid of dogs", "Nina's son is afraid of the dark", False),  # one more of many
    ("Gift idea for Mum: a silk scarf", "Gift idea for Mum: a cookbook", False),
])
def test_a_restated_fact_keeps_its_values_and_most_of_its_words(old, new, same):
    assert restates_fact(old, new, 0.4) is same


@pytest.mark.parametrize(("old", "new"), [
    ("Tom is allergic to peanuts", "Tom is allergic to shellfish"),  # both true: a second allergy
    ("Mia likes jazz", "Mia likes techno"),
    ("Karin speaks Spanish", "Karin speaks Italian"),
    ("Jonas is scared of spiders", "Jonas is scared of heights"),  # another object of one relation
    ("Gift idea for Mum: a silk scarf", "Gift idea for Mum: a cookbook"),  # ideas gather, one does not undo another
    ("Podcast recommendations from Ada: Hard Fork", "Podcast recommendations from Ada: Acquired"),
])
def test_a_relation_with_many_objects_gains_one_and_says_nothing(old, new):
    """Unannounced, a second object of a relation that takes many, or a second entry under a label that gathers
    proposals, is an addition: neither retired nor flagged for a person."""
    assert conflict(old, new) is None and doubt(old, new) is None and announced(old, new) is None


def test_a_many_objects_relation_still_changes_in_number():
    assert conflict("Karin speaks 3 languages", "Karin speaks 4 languages") or doubt(
        "Karin speaks 3 languages", "Karin speaks 4 languages")


def test_an_announced_change_of_such_a_relation_still_counts():
    assert conflict("Mia likes jazz", "Mia now likes techno instead")
