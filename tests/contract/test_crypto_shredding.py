"""Forget is erasure across copies on AWS (issue 46, item 2): each memory's events are sealed with a key of its own,
and its forget destroys the key, so a copy of the log taken before the forget (a point-in-time restore, the
stream, an export of the table) holds nothing of the memory anyone can read. DynamoDB and KMS through moto."""

import json

import boto3
import pytest
from moto import mock_aws

from second_brain.adapters.event_store.dynamodb import DynamoDBEventStore, table_definition
from second_brain.adapters.event_store.keys import KmsKeyring, keys_table_definition
from second_brain.domain.errors import ConcurrencyConflict, StoreUnavailable
from second_brain.domain.events import Erased, MemoryCaptured, MemoryForgotten, MemoryRevised
from tests.conftest import envelope

SECRET = "SECRET-KESTREL-5521"


@pytest.fixture
def aws():
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        kms = boto3.client("kms", region_name="us-east-1")
        dynamodb.create_table(**table_definition("events"))
        dynamodb.create_table(**keys_table_definition("keys"))
        key_id = kms.create_key(Description="brain")["KeyMetadata"]["KeyId"]
        yield dynamodb, kms, key_id


def store(aws, table: str = "events") -> DynamoDBEventStore:
    """A store as a fresh process builds it: nothing unwrapped yet."""
    dynamodb, kms, key_id = aws
    return DynamoDBEventStore(dynamodb, table, settle_ms=0, keyring=KmsKeyring(kms, dynamodb, "keys", key_id))


def captured(text: str) -> MemoryCaptured:
    return MemoryCaptured(text, ("work",), "api", "personal-owner")


def restore(dynamodb, items: list[dict], table: str) -> None:
    dynamodb.create_table(**table_definition(table))
    for item in items:
        dynamodb.put_item(TableName=table, Item=item)


def test_a_restored_backup_from_before_a_forget_holds_no_readable_text(aws):
    dynamodb = aws[0]
    log = store(aws)
    log.append([envelope("memory-gone", 1, captured(f"The door code is {SECRET}"))])
    log.append([envelope("memory-gone", 2, MemoryRevised(f"The door code is still {SECRET}, 2 times"))])
    log.append([envelope("memory-kept", 1, captured("The plant needs water on Sundays"))])
    assert log.read_stream("memory-gone")[1].event == MemoryRevised(f"The door code is still {SECRET}, 2 times")
    backup = dynamodb.scan(TableName="events")["Items"]  # the copy point-in-time recovery keeps for 35 days
    assert SECRET not in json.dumps(backup, default=str)  # sealed at rest: no plaintext in any item

    log.append([envelope("memory-gone", 3, MemoryForgotten())])
    keys = {i["scope"]["S"]: i for i in dynamodb.scan(TableName="keys")["Items"]}
    assert "wrapped" not in keys["gone"] and "wrapped" in keys["kept"]  # only the kept memory's key is left

    restore(dynamodb, backup, "restored")
    for reader in (store(aws, "restored"), log):  # a fresh process on the restored copy, and this one
        events = reader.read_stream("memory-gone")
        assert [e.version for e in events][:2] == [1, 2] and all(isinstance(e.event, Erased) for e in events[:2])
        if reader is log:  # the tombstone is not sealed: it reads as itself once its key is gone
            assert events[-1].event == MemoryForgotten()
        assert reader.read_stream("memory-kept")[0].event == captured("The plant needs water on Sundays")
    assert all(SECRET not in json.dumps(e.event.__dict__) for e in store(aws, "restored").read_all(0))


def test_a_store_without_the_keyring_refuses_sealed_events_instead_of_misreading_them(aws):
    store(aws).append([envelope("memory-a", 1, captured(SECRET))])
    with pytest.raises(Exception, match="sealed"):
        DynamoDBEventStore(aws[0], "events").read_stream("memory-a")


def test_a_writer_that_read_a_memory_before_its_forget_cannot_make_it_a_new_key(aws):
    """Its append conflicts (it must read the stream again, and find the memory forgotten) instead of sealing
    under a second key that a restored copy of the first key's events would then fail to open."""
    log = store(aws)
    log.append([envelope("memory-a", 1, captured(f"The alarm code is {SECRET}"))])
    log.append([envelope("memory-a", 2, MemoryForgotten())])
    late = store(aws)  # another process, which read version 1 before the forget
    with pytest.raises(ConcurrencyConflict):
        late.append([envelope("memory-a", 2, MemoryRevised("an edit made too late"))])
    assert "wrapped" not in aws[0].get_item(TableName="keys", Key={"scope": {"S": "a"}})["Item"]


def test_a_sealed_log_refuses_a_writer_without_the_keyring(aws):
    store(aws).append([envelope("memory-a", 1, captured("sealed"))])
    with pytest.raises(Exception, match="seals its memories"):
        DynamoDBEventStore(aws[0], "events").append([envelope("memory-b", 1, captured("in the clear"))])


def test_each_memorys_key_is_wrapped_for_that_memory_alone(aws):
    """Issue 66 item 3: every KMS call names the memory whose key it wraps or unwraps (its EncryptionContext, kept
    in CloudTrail beside the call): a wrapped key copied onto another memory's entry does not open there."""
    dynamodb, kms, key_id = aws
    log = store(aws)
    log.append([envelope("memory-one", 1, captured(f"First note {SECRET}"))])
    log.append([envelope("memory-two", 1, captured("Second note"))])
    keys = {i["scope"]["S"]: i for i in dynamodb.scan(TableName="keys")["Items"]}
    assert kms.decrypt(CiphertextBlob=keys["one"]["wrapped"]["B"], KeyId=key_id,
                       EncryptionContext={"second-brain:key": "one"})["Plaintext"]
    with pytest.raises(kms.exceptions.InvalidCiphertextException):  # not without the memory it is for
        kms.decrypt(CiphertextBlob=keys["one"]["wrapped"]["B"], KeyId=key_id)
    dynamodb.put_item(TableName="keys", Item={**keys["two"], "wrapped": keys["one"]["wrapped"]})
    with pytest.raises(StoreUnavailable):
        store(aws).read_stream("memory-two")
    assert store(aws).read_stream("memory-one")[0].event == captured(f"First note {SECRET}")


def test_a_key_wrapped_by_an_earlier_build_without_a_context_still_opens(aws):
    dynamodb, kms, key_id = aws
    log = store(aws)
    log.append([envelope("memory-old", 1, captured("Written before keys were wrapped for their memory"))])
    [item] = dynamodb.scan(TableName="keys")["Items"]
    plaintext = kms.decrypt(CiphertextBlob=item["wrapped"]["B"], KeyId=key_id,
                            EncryptionContext={"second-brain:key": "old"})["Plaintext"]
    legacy = kms.encrypt(KeyId=key_id, Plaintext=plaintext)["CiphertextBlob"]  # as generate_data_key gave it then
    dynamodb.put_item(TableName="keys", Item={"scope": {"S": "old"}, "wrapped": {"B": legacy}})
    assert store(aws).read_stream("memory-old")[0].event == captured(
        "Written before keys were wrapped for their memory")
