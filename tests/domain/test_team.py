"""The team's fold: who holds which token, in which teams, suspended or removed."""

from functools import reduce

import pytest

from second_brain.domain import team as t
from second_brain.domain.errors import AlreadyExists, InvalidInput, NotFound


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


def test_the_fold_knows_who_made_each_token_and_whether_someone_else_replaced_it():
    team = reduce(lambda team, step: t.evolve(team, step[0], step[1], step[2]), [
        (t.MemberAdded("m-1", "Bob", "", "member", "h1"), 1_000, "owner"),
        (t.MemberTokenRotated("m-1", "h2"), 1_000, "m-ann"),
    ], t.Team())
    bob = team.members["m-1"]
    assert (bob.token_set_by, bob.token_known_to_another, bob.token_replaced_by_another) == ("m-ann", True, True)
    added = t.evolve(t.Team(), t.MemberAdded("m-1", "Bob", "", "member", "h1"), 1_000, "owner").members["m-1"]
    assert (added.token_known_to_another, added.token_replaced_by_another) == (True, False)
    mine = t.evolve(team, t.MemberTokenRotated("m-1", "h3"), 2_000, "m-1").members["m-1"]
    assert (mine.token_known_to_another, mine.token_replaced_by_another, mine.token_set_at) == (False, False, 2_000)


def test_the_owner_never_inherits_the_organisations_default():
    assert t.Team().owner_default == "personal"
    assert folded(t.DefaultShareSet(t.OWNER_ID, "inherit")).owner_default == "personal"  # written by an old release
    assert folded(t.DefaultShareSet(t.OWNER_ID, "company")).owner_default == "company"


@pytest.mark.parametrize("name", ["B\u200bob", "\u202eboB", "Bo\x00b", "Cat\u2066", "Ann\u2028", "Dan\u00ad",
                                  # issue 62: marks and fillers that render as nothing or as a blank
                                  "Owner\u034f\u034f", "Owner\ufe0f", "Owner\u3164", "Owner\u2800", "\u115fOwner"])
def test_a_name_with_hidden_characters_is_refused(name):
    with pytest.raises(InvalidInput):
        t.check_name(name)


def test_names_are_unique_and_some_are_reserved():
    team = folded(t.MemberAdded("m-1", "Zoë", "", "member", "h"), t.MemberRemoved("m-1", 0))
    for taken in ("zoë", "ZOË", "Ｚｏë"):
        with pytest.raises(AlreadyExists):
            team.check_unique_name(taken, "m-2", owner_name="Ada")
    for reserved in ("Owner", "second brain", "ME", "Ada"):
        with pytest.raises(InvalidInput):
            team.check_unique_name(reserved, "m-2", owner_name="Ada")
    assert team.check_unique_name("Zoë", "m-1", owner_name="Ada") == "Zoë"  # one's own name
    assert team.check_unique_name("Zoe", "m-2", owner_name="Ada") == "Zoe"
    assert t.check_name("Ana María 🌱") == "Ana María 🌱"


# A Cyrillic О, a Greek Ο, a Cyrillic а among Latin letters.
@pytest.mark.parametrize("name", ["\u041ewner", "\u039fwner", "Second Br\u0430in", "P\u0430ul"])
def test_a_name_mixing_scripts_is_refused(name):
    with pytest.raises(InvalidInput, match="mixes scripts"):
        t.check_name(name)


@pytest.mark.parametrize("name", ["Иван Петров", "山田 太郎", "やまだ たろう", "Kim 민준", "José Ñúñez", "Ζωή", "محمد"])
def test_names_in_one_script_or_written_together_are_fine(name):
    assert t.check_name(name) == name


def test_names_are_compared_by_what_they_look_like():
    """A name written wholly in Cyrillic letters drawn as Latin ones is not mixed, so its skeleton decides: the
    same as the Latin name's."""
    assert t.name_key("\u041e\u0412\u0415\u0420") == t.name_key("OBEP")  # all Cyrillic, drawn as Latin
    team = folded(t.MemberAdded("m-1", "COPE", "", "member", "h"))
    with pytest.raises(AlreadyExists):
        team.check_unique_name("\u0421\u041e\u0420\u0415", "m-2", owner_name="Ada")  # СОРЕ in Cyrillic
    with pytest.raises(InvalidInput, match="reserved"):
        team.check_unique_name("\u041c\u0415", "m-2", owner_name="Ada")  # МЕ in Cyrillic: "me"


@pytest.mark.parametrize(("name", "looks_like"), [
    ("\u13df\u13aa\u13a2", "Cat"),  # ᏟᎪᎢ in Cherokee letters
    ("\u0391\u039d\u039d", "ANN"),  # ΑΝΝ in Greek capitals
    ("0wner", "Owner"),  # a zero for the O
    ("BiII", "Bill"),  # capital I's for the l's
    ("\uff22\uff4f\uff42", "Bob"),  # full-width
])
def test_every_script_s_look_alikes_share_the_latin_names_skeleton(name, looks_like):
    """Unicode TS #39's confusables (all of them, not a table of a few scripts): a name drawn like another is that
    name, in any script and with digits for letters."""
    assert t.name_key(name) == t.name_key(looks_like)
    team = folded(t.MemberAdded("m-1", looks_like, "", "member", "h"))
    with pytest.raises(InvalidInput if looks_like == "Owner" else AlreadyExists):
        team.check_unique_name(name, "m-2", owner_name="Ada")


def test_names_that_only_share_letters_stay_apart():
    assert len({t.name_key(n) for n in ("Zoë", "Zoe", "José", "Jose", "Łukasz", "Lukasz", "田中", "Ann", "Anna")}) == 9
