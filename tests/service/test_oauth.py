"""OAuth bookkeeping over the in-memory event store: races forced by a store that lets a rival in just before an
append, and lifetimes judged by a clock held still."""

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.oauth import OAuthIdentities, OAuthService
from second_brain.app.team import TeamService
from second_brain.domain import oauth as o
from second_brain.domain.errors import ConcurrencyConflict, NotFound, Unauthorized
from second_brain.domain.identity import owner

OWNER_TOKEN = "owner-secret"


class RivalStore(InMemoryEventStore):
    """Runs `rival()` once, just before the next append, as a request racing this one would."""

    def __init__(self) -> None:
        super().__init__()
        self.rival = lambda: None

    def append(self, events):
        rival, self.rival = self.rival, lambda: None
        rival()
        return super().append(events)


@pytest.fixture
def store() -> RivalStore:
    return RivalStore()


@pytest.fixture
def oauth(store, clock) -> OAuthService:
    def sign_in(token: str):
        if token != OWNER_TOKEN:
            raise Unauthorized()
        return owner("Ada")

    return OAuthService(store, clock, sign_in)


@pytest.fixture
def identities(store, clock, oauth) -> OAuthIdentities:
    return OAuthIdentities(oauth, TeamService(store, clock, owner("Ada")), OWNER_TOKEN)


def sign_in_request(clock) -> o.SignInRequested:
    return o.SignInRequested("client-1", "http://localhost/cb", True, "challenge", (o.SCOPE,), "st", None,
                             clock.now_ms() + o.SIGN_IN_TTL_MS)


def code_from(oauth: OAuthService, clock) -> str:
    redirect = oauth.approve(oauth.request_sign_in(sign_in_request(clock)), OWNER_TOKEN)
    return redirect.split("code=")[1].split("&")[0]


def test_two_redemptions_racing_for_one_code_issue_one_pair(store, oauth, clock):
    code = code_from(oauth, clock)
    rival: list[tuple[str, str, o.TokenIssued]] = []
    store.rival = lambda: rival.append(oauth.redeem(code))
    with pytest.raises(ConcurrencyConflict):
        oauth.redeem(code)  # it read the code unredeemed; the rival redeemed it before this append
    assert len(rival) == 1 and oauth.token(rival[0][0], o.ACCESS) is not None
    with pytest.raises(NotFound):
        oauth.redeem(code)


def test_two_rotations_racing_for_one_refresh_token_issue_one_pair(store, oauth, clock):
    _, refresh, _ = oauth.redeem(code_from(oauth, clock))
    rival: list[tuple[str, str, o.TokenIssued]] = []
    store.rival = lambda: rival.append(oauth.rotate(refresh, (o.SCOPE,)))
    with pytest.raises(ConcurrencyConflict):
        oauth.rotate(refresh, (o.SCOPE,))
    assert oauth.token(rival[0][1], o.REFRESH) is not None and oauth.token(refresh, o.REFRESH) is None


def test_a_sign_in_is_decided_once(store, oauth, clock):
    request_id = oauth.request_sign_in(sign_in_request(clock))
    store.rival = lambda: oauth.deny(request_id)
    with pytest.raises(NotFound):
        oauth.approve(request_id, OWNER_TOKEN)  # denied in another tab meanwhile: no code
    assert not any(e.stream_id.startswith("oauth-code-") for e in store.read_all())


def test_sign_ins_codes_and_tokens_expire(oauth, identities, clock):
    request_id = oauth.request_sign_in(sign_in_request(clock))
    clock.now += o.SIGN_IN_TTL_MS
    with pytest.raises(NotFound):
        oauth.approve(request_id, OWNER_TOKEN)
    access, refresh, _ = oauth.redeem(code_from(oauth, clock))
    assert identities(access).owner
    clock.now += o.ACCESS_TTL_MS
    with pytest.raises(Unauthorized):
        identities(access)
    clock.now += o.REFRESH_TTL_MS - o.ACCESS_TTL_MS
    assert oauth.token(refresh, o.REFRESH) is None


def test_a_grant_ends_when_the_owner_token_it_was_signed_in_with_changes(store, clock, oauth):
    access, _, _ = oauth.redeem(code_from(oauth, clock))
    team = TeamService(store, clock, owner("Ada"))
    assert OAuthIdentities(oauth, team, OWNER_TOKEN)(access).owner
    with pytest.raises(Unauthorized):
        OAuthIdentities(oauth, team, "rotated-owner-secret")(access)


def test_only_hashes_of_codes_and_tokens_are_stored(store, oauth, clock):
    code = code_from(oauth, clock)
    access, refresh, _ = oauth.redeem(code)
    stored = repr([(e.stream_id, e.event) for e in store.read_all()])
    assert code not in stored and access not in stored and refresh not in stored
    assert o.digest(access) in stored
