"""The team's fold: who holds which token, in which teams, suspended or removed."""

from functools import reduce

import pytest

from second_brain.domain import team as t
from second_brain.domain.errors import InvalidInput, NotFound


def folded(*events: object) -> t.Team:
    return reduce(lambda team, event: t.evolve(team, event, 1_000), events, t.Team())


def test_a_member_is_found_by_the_hash_of_their_current_token_only():
    team = folded(t.MemberAdded("m-1", "Bob", "", "member", t.token_hash("old")),
                  t.MemberTokenRotated("m-1", t.token_hash("new")))
    assert team.by_token_hash(t.token_hash("old")) is None
    assert team.by_token_hash(t.token_hash("new")).name == "Bob"
    assert team.version == 2


def test_suspension_and_removal_keep_the_member_in_the_fold_without_data():
    team = folded(t.MemberAdded("m-1", "Bob", "bob@example.com", "member", "h"), t.MemberSuspended("m-1", True),
                  t.MemberRemoved("m-1", 3))
    member = team.members["m-1"]
    assert (member.suspended, member.removed, member.email, member.name) == (True, True, "", "Bob")
    assert team.active() == [] and team.home_of("m-1") is None and team.name_of("m-1") == "Bob"
    with pytest.raises(NotFound):
        team.member("m-1")


def test_teams_memberships_and_names():
    team = folded(t.MemberAdded("m-1", "Bob", "", "member", "h"), t.TeamCreated("company-ops", "Ops"),
                  t.MembershipChanged("company-ops", "m-1", True), t.MembershipChanged(t.COMPANY, "m-1", False),
                  t.WorkspaceRenamed("company-ops", "Operations"))
    assert team.workspaces == {t.COMPANY: "Company", "company-ops": "Operations"}
    identity = t.identity_of(team.members["m-1"], team)
    assert identity.company_workspaces == ("company-ops",)
    assert identity.readable == ("personal-m-1", "company-ops")
    with pytest.raises(NotFound):
        team.workspace("company-elsewhere")


def test_defaults_and_checks():
    team = folded(t.MemberAdded("m-1", "Bob", "", "member", "h"), t.DefaultShareSet("m-1", "company"),
                  t.DefaultShareSet(t.OWNER_ID, "personal"))
    assert (team.members["m-1"].default_share, team.owner_default) == ("company", "personal")
    for check, bad in ((t.check_share, "everyone"), (t.check_role, "owner"), (t.check_name, " "),
                       (t.check_email, "not-an-address"), (t.check_name, "x" * 121)):
        with pytest.raises(InvalidInput):
            check(bad)
    assert t.check_email(None) == "" and t.check_name("  Bob ") == "Bob"
