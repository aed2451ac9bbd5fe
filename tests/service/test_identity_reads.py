"""Where a capture lands is known from the team as read when the caller was identified (issue 46, item 7: on AWS
each read of the team is a DynamoDB query, and a capture read it twice)."""

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.handling import Context
from second_brain.app.team.service import TeamService
from second_brain.domain import team as t
from second_brain.domain.identity import owner
from second_brain.domain.team import token_hash


class Counting(InMemoryEventStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def read_stream(self, stream_id: str):
        self.reads += stream_id == t.STREAM
        return super().read_stream(stream_id)


def test_a_callers_default_share_comes_with_their_identity(clock):
    store = Counting()
    team = TeamService(store, clock, owner("Ada"), lambda: "company")
    admin = Context(team.owner_identity(), "owner")
    token = team.add_member(admin, "Bo")["token"]
    bo = Context(team.member_identity(token_hash(token)), "bo")
    reads = store.reads
    assert team.default_layer(bo) == "company" and store.reads == reads  # inherited, without reading again
    team.set_own_default(bo, "personal")
    assert team.default_layer(bo) == "company"  # this request's identity keeps what the team said when it began
    again = Context(team.member_identity(token_hash(token)), "bo-again")  # the next request
    assert again.identity.default_share == "personal" and team.default_layer(again) == "personal"
    unknown = Context(owner("Ada"), "built-elsewhere")  # an identity nobody resolved against the team
    team.default_layer(unknown)
    assert store.reads > reads  # then the team is read, as before
