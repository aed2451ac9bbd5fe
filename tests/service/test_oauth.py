"""OAuth bookkeeping over the in-memory event store: races forced by a store that lets a rival in just before an
append, and lifetimes judged by a clock held still."""

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.team.oauth import OAuthIdentities, OAuthService, Standing
from second_brain.app.team.service import TeamService
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


def service(store, clock, owner_token: str = OWNER_TOKEN) -> OAuthService:
    def sign_in(token: str):
        if token != owner_token:
            raise Unauthorized()
        return owner("Ada")

    return OAuthService(store, clock, sign_in, Standing(TeamService(store, clock, owner("Ada")), owner_token))


@pytest.fixture
def oauth(store, clock) -> OAuthService:
    return service(store, clock)


@pytest.fixture
def identities(oauth) -> OAuthIdentities:
    return OAuthIdentities(oauth)


def sign_in_request(clock) -> o.SignInRequested:
    return o.SignInRequested("client-1", "http://localhost/cb", True, "challenge", (o.SCOPE,), "st", None,
                             clock.now_ms() + o.SIGN_IN_TTL_MS)


def code_from(oauth: OAuthService, clock) -> str:
    redirect = oauth.approve(oauth.request_sign_in(sign_in_request(clock)), OWNER_TOKEN)
    return redirect.split("code=")[1].split("&")[0]


def test_two_redemptions_racing_for_one_code_issue_one_pair_and_end_the_grant(store, oauth, clock):
    code = code_from(oauth, clock)
    rival: list[tuple[str, str, o.TokenIssued]] = []
    store.rival = lambda: rival.append(oauth.redeem(code))
    with pytest.raises(ConcurrencyConflict):
        oauth.redeem(code)  # it read the code unredeemed; the rival redeemed it before this append
    assert len(rival) == 1 and len([e for e in store.read_all() if isinstance(e.event, o.TokenIssued)]) == 2
    # A code used twice: one of the two users is not the client it was issued to, so neither keeps the grant.
    assert oauth.token(rival[0][0], o.ACCESS) is None and oauth.token(rival[0][1], o.REFRESH) is None
    with pytest.raises(NotFound):
        oauth.redeem(code)


def test_two_rotations_racing_for_one_refresh_token_issue_one_pair_and_end_the_grant(store, oauth, clock):
    _, refresh, _ = oauth.redeem(code_from(oauth, clock))
    rival: list[tuple[str, str, o.TokenIssued]] = []
    store.rival = lambda: rival.append(oauth.rotate(refresh, (o.SCOPE,)))
    with pytest.raises(ConcurrencyConflict):
        oauth.rotate(refresh, (o.SCOPE,))
    assert len(rival) == 1 and len([e for e in store.read_all() if isinstance(e.event, o.TokenIssued)]) == 4
    assert oauth.token(rival[0][1], o.REFRESH) is None and oauth.token(refresh, o.REFRESH) is None


def test_a_code_presented_again_revokes_every_token_it_led_to(oauth, identities, clock):
    code = code_from(oauth, clock)
    access, refresh, _ = oauth.redeem(code)
    access, refresh, _ = oauth.rotate(refresh, (o.SCOPE,))  # the grant's newest pair
    assert identities(access).owner
    assert oauth.presented_code(code) is None
    with pytest.raises(Unauthorized):
        identities(access)
    assert oauth.token(refresh, o.REFRESH) is None
    with pytest.raises(NotFound):
        oauth.rotate(refresh, (o.SCOPE,))


def test_a_refresh_token_used_again_after_its_rotation_revokes_the_grant(oauth, identities, clock):
    first_access, first_refresh, _ = oauth.redeem(code_from(oauth, clock))
    access, refresh, _ = oauth.rotate(first_refresh, (o.SCOPE,))
    assert oauth.presented_refresh(refresh) is not None  # the live one, presented: nothing happens
    assert identities(access).owner
    assert oauth.presented_refresh(first_refresh) is None  # the spent one: a thief or the client replaying it
    with pytest.raises(Unauthorized):
        identities(access)
    assert oauth.presented_refresh(refresh) is None


def test_another_grant_of_the_same_person_is_left_alone(oauth, identities, clock):
    code = code_from(oauth, clock)
    oauth.redeem(code)
    other, _, _ = oauth.redeem(code_from(oauth, clock))
    oauth.presented_code(code)
    assert identities(other).owner


def test_registering_and_sending_someone_to_sign_in_write_nothing_but_the_key(store, oauth, clock):
    ids = {oauth.register({"redirect_uris": [f"http://localhost:{3000 + n}/cb"], "client_name": f"App {n}"})
           for n in range(20)}
    for _ in range(20):
        oauth.request_sign_in(sign_in_request(clock))
    assert [type(e.event) for e in store.read_all()] == [o.SigningKeyMade]
    assert len(ids) == 20 and all(oauth.client(i)["client_name"].startswith("App ") for i in ids)


def test_a_client_id_or_sign_in_request_not_sealed_by_this_brain_is_unknown(store, oauth, clock):
    client_id = oauth.register({"redirect_uris": ["http://localhost/cb"], "client_name": "Real"})
    request_id = oauth.request_sign_in(sign_in_request(clock))
    body, mac = client_id.rsplit(".", 1)
    forged = o.seal(b"another key", o.CLIENT_PREFIX, {"redirect_uris": ["https://evil.example/cb"]})
    for wrong in (forged, f"{body}x.{mac}", f"{body}.{mac[:-2]}", o.REQUEST_PREFIX + client_id[3:], "sbc_", "."):
        assert oauth.client(wrong) is None
    assert oauth.client(client_id)["client_name"] == "Real"
    for wrong in (client_id, request_id[:-1], o.seal(b"another key", o.REQUEST_PREFIX, {"client_id": "x"})):
        with pytest.raises(NotFound):
            oauth.pending(wrong)
    assert oauth.pending(request_id).client_id == "client-1"


def test_a_sign_in_is_decided_once(store, oauth, clock):
    request_id = oauth.request_sign_in(sign_in_request(clock))
    store.rival = lambda: oauth.approve(request_id, OWNER_TOKEN)
    with pytest.raises(NotFound):
        oauth.approve(request_id, OWNER_TOKEN)  # allowed in another tab meanwhile: that tab's code only
    assert len([e for e in store.read_all() if e.stream_id.startswith("oauth-code-")]) == 1
    with pytest.raises(NotFound):
        oauth.deny(request_id)


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
    access, refresh, _ = oauth.redeem(code_from(oauth, clock))
    assert OAuthIdentities(oauth)(access).owner
    rotated = service(store, clock, "rotated-owner-secret")
    with pytest.raises(Unauthorized):
        OAuthIdentities(rotated)(access)
    with pytest.raises(Unauthorized):
        rotated.rotate(refresh, (o.SCOPE,))  # nor does it refresh
    assert oauth.token(refresh, o.REFRESH) is not None  # refused, not spent


def test_only_hashes_of_codes_and_tokens_are_stored(store, oauth, clock):
    code = code_from(oauth, clock)
    access, refresh, _ = oauth.redeem(code)
    stored = repr([(e.stream_id, e.event) for e in store.read_all()])
    assert code not in stored and access not in stored and refresh not in stored
    assert o.digest(access) in stored


@pytest.mark.parametrize(("public_url", "served"), [
    ("https://brain.example.com", True), ("http://127.0.0.1:8787", True), ("http://localhost:8787", True),
    ("http://[::1]:8787", True), ("http://brain.example.com", False), ("http://0.0.0.0:8787", False),
    ("http://127.0.0.2:8787", False),  # loopback, but not a host the `mcp` package's issuer check accepts
])
def test_oauth_is_served_where_the_issuer_is_https_or_a_loopback_host_and_its_routes_then_build(
        store, clock, public_url, served):
    from second_brain.entrypoints.api.oauth import issuer_of, oauth_app
    from second_brain.settings import Settings

    issuer = issuer_of(Settings(public_url=public_url), public_url)
    assert (issuer is not None) == served
    if issuer:  # the routes are made at the first OAuth request: the rule must be the one they are built with
        assert oauth_app(service(store, clock), issuer).routes
