"""A refused bearer token is remembered briefly (issue 46, item 3): a stranger repeating a wrong token at the public
MCP URL costs one lookup of the team's log, not one per request; a right token is never held back by it."""

import pytest

from second_brain.domain.errors import Unauthorized
from second_brain.domain.identity import owner
from second_brain.entrypoints.api.auth import REFUSAL_SECONDS, BearerAuth


class Team:
    """The team's side of a token check, counting the lookups the event log would answer."""

    def __init__(self) -> None:
        self.lookups = 0
        self.known: dict[str, str] = {}  # token hash → why refused ("" for a valid member)

    def owner_identity(self):
        return owner()

    def member_identity(self, digest: str):
        self.lookups += 1
        if self.known.get(digest, "missing"):
            raise Unauthorized("This member's access is suspended", code="suspended") \
                if self.known.get(digest) == "suspended" else Unauthorized()
        return owner()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def team():
    return Team()


@pytest.fixture
def clock():
    return Clock()


def test_a_wrong_token_repeated_is_looked_up_once_while_its_refusal_is_remembered(team, clock):
    auth = BearerAuth("owner-token", team, now=clock)
    for _ in range(50):
        with pytest.raises(Unauthorized):
            auth.check("Bearer not-a-token")
    assert team.lookups == 1
    clock.now += REFUSAL_SECONDS + 1  # remembered briefly: then asked again
    with pytest.raises(Unauthorized):
        auth.check("Bearer not-a-token")
    assert team.lookups == 2


def test_a_suspended_member_is_asked_about_each_time_and_gets_in_at_once_when_restored(team, clock):
    from second_brain.domain.team import token_hash

    auth = BearerAuth("owner-token", team, now=clock)
    team.known[token_hash("bobs-token")] = "suspended"
    for _ in range(3):
        with pytest.raises(Unauthorized) as refused:
            auth.check("Bearer bobs-token")
        assert (refused.value.message, refused.value.details) == ("This member's access is suspended",
                                                                  {"code": "suspended"})
    assert team.lookups == 3  # a known token's refusal is not remembered
    team.known[token_hash("bobs-token")] = ""  # restored
    assert auth.check("Bearer bobs-token") == owner()


def test_a_remembered_refusal_says_what_the_first_said(team, clock):
    auth = BearerAuth("owner-token", team, now=clock)
    answers = []
    for _ in range(2):
        with pytest.raises(Unauthorized) as refused:
            auth.check("Bearer stranger")
        answers.append((refused.value.message, refused.value.details))
    assert answers == [("Unauthorized", {"code": "invalid_token"})] * 2 and team.lookups == 1


def test_right_tokens_are_never_remembered_and_many_wrong_ones_stay_bounded(team, clock):
    from second_brain.domain.team import token_hash

    auth = BearerAuth("owner-token", team, now=clock)
    team.known[token_hash("good")] = ""
    for _ in range(3):
        auth.check("Bearer good")
    assert team.lookups == 3  # a valid member is asked every time: a suspension applies at once
    for n in range(5000):
        with pytest.raises(Unauthorized):
            auth.check(f"Bearer wrong-{n}")
    assert len(auth._refused) <= 1024
