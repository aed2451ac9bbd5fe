"""Importance, kind and volatility judged at capture from the note's words."""

import pytest

from second_brain.domain.classification import classify


@pytest.mark.parametrize(("content", "tags", "importance", "kind", "volatility"), [
    ("ok", (), 1, "semantic", ""),
    ("Buy milk on the way home", (), 3, "semantic", ""),  # length says nothing about importance
    ("Maya is allergic to peanuts and carries an epipen with her everywhere", (), 4, "semantic", "durable"),
    ("Important: the deploy key password is in the vault", (), 5, "semantic", ""),
    ("It's important to me that we take care of ourselves", (), 3, "semantic", ""),  # a figure of speech
    ("Critical: we decided to freeze deploys before the audit next month", (), 4, "episodic", ""),
    ("Met Priya yesterday to plan the offsite agenda for the spring", (), 3, "episodic", ""),
    ("The dentist appointment is at 3pm on Thursday", (), 3, "episodic", "volatile"),
    ("Alex works at Acme Corp on the payments team in Berlin", (), 3, "semantic", "state"),
    ("Send the quarterly report to finance before Friday", ("task",), 3, "semantic", "volatile"),
])
def test_classification(content, tags, importance, kind, volatility):
    judged = classify(content, tags)
    assert (judged.importance, judged.kind, judged.volatility) == (importance, kind, volatility)
