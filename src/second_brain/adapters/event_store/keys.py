"""Per-memory data keys for the DynamoDB log: envelope encryption under a customer-managed KMS key, so that a forget
is an erasure of every copy.

Each memory's events are sealed (AES-256-GCM) with a data key of its own. The key is made by KMS
(GenerateDataKey) and kept only wrapped, in a table of its own that is not backed up beyond a short window (the
template's KeysTable: point-in-time recovery of one day, no stream). Forget deletes the memory's key: its events in
a point-in-time restore of the log table, in the log's stream, in an export of the table, all become ciphertext
nobody can open. (The entry stays, marked destroyed, so a writer that read the memory before its forget cannot
make it a new key.) Keys are unwrapped once per process and kept a few minutes (KEY_CACHE_SECONDS): a forgotten
memory's events are erased from the live table as well, so a key still held elsewhere opens nothing there.
"""

import os
import threading
import time
from collections import OrderedDict
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ...domain.errors import ConcurrencyConflict, StoreUnavailable

KEY_CACHE_SECONDS = 300.0
KEY_CACHE_SIZE = 10_000
NONCE_BYTES = 12


class KmsKeyring:
    def __init__(self, kms: Any, dynamodb: Any, table: str, key_id: str) -> None:
        self.kms, self.dynamodb, self.table, self.key_id = kms, dynamodb, table, key_id
        self._keys: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._lock = threading.Lock()

    def seal(self, scope: str, plaintext: bytes, bound_to: str) -> bytes:
        """`plaintext` sealed with the scope's key (made on first use); `bound_to` names the item, so a sealed
        payload copied onto another item does not open."""
        key = self._key(scope, make=True)
        if key is None:  # made, or read back: only a key store failing on the way says nothing
            raise StoreUnavailable(f"no key could be made for {scope}")
        nonce = os.urandom(NONCE_BYTES)
        return nonce + AESGCM(key).encrypt(nonce, plaintext, bound_to.encode())

    def open(self, scope: str, sealed: bytes, bound_to: str) -> bytes | None:
        """The plaintext, or None when the scope's key was destroyed (the memory was forgotten)."""
        key = self._key(scope, make=False)
        if key is None:
            return None
        return AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], bound_to.encode())

    def secret(self, name: str) -> bytes:
        """A key that seals nothing and is never destroyed, made at first use (`name` is no memory's id): the
        brain's secret for keyed hashes, kept as the memories' keys are."""
        key = self._key(name, make=True)
        if key is None:
            raise StoreUnavailable(f"no key could be made for {name}")
        return key

    def destroy(self, scope: str) -> None:
        """Destroy the scope's key for good: whatever it sealed, wherever a copy lies, stays sealed. The entry
        stays, marked destroyed, so no writer that read the memory before its forget can make it a new key."""
        with self._lock:
            self._keys.pop(scope, None)
        self._call(self.dynamodb.update_item, TableName=self.table, Key={"scope": {"S": scope}},
                   UpdateExpression="SET destroyed = :yes REMOVE #w", ExpressionAttributeNames={"#w": "wrapped"},
                   ExpressionAttributeValues={":yes": {"BOOL": True}})

    def _key(self, scope: str, make: bool) -> bytes | None:
        with self._lock:
            cached = self._keys.get(scope)
            if cached and cached[1] > time.monotonic():
                self._keys.move_to_end(scope)
                return cached[0]
        item = self._call(self.dynamodb.get_item, TableName=self.table, Key={"scope": {"S": scope}},
                          ConsistentRead=True).get("Item")
        if item is not None and "destroyed" in item:
            if make:  # a writer that read the memory before its forget: it must read it again, and find it gone
                raise ConcurrencyConflict(f"{scope} was forgotten: its key is destroyed")
            return None
        if item is not None:
            # A key wrapped by a build before the context (no `bound`) opens without one.
            bound = {"EncryptionContext": context(scope)} if item.get("bound", {}).get("BOOL") else {}
            key = self._call(self.kms.decrypt, CiphertextBlob=item["wrapped"]["B"], KeyId=self.key_id,
                             **bound)["Plaintext"]
        elif not make:
            return None
        else:
            made = self._call(self.kms.generate_data_key, KeyId=self.key_id, KeySpec="AES_256",
                              EncryptionContext=context(scope))
            try:
                self.dynamodb.put_item(TableName=self.table, ConditionExpression="attribute_not_exists(#s)",
                                       ExpressionAttributeNames={"#s": "scope"},
                                       Item={"scope": {"S": scope}, "wrapped": {"B": made["CiphertextBlob"]},
                                             "bound": {"BOOL": True}})
                key = made["Plaintext"]
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise StoreUnavailable(f"the key store failed: {exc}") from exc
                return self._key(scope, make=False)  # another writer made it first: theirs seals this memory
        with self._lock:
            self._keys[scope] = (key, time.monotonic() + KEY_CACHE_SECONDS)
            while len(self._keys) > KEY_CACHE_SIZE:
                self._keys.popitem(last=False)
        return key

    @staticmethod
    def _call(method: Any, **kwargs: Any) -> dict[str, Any]:
        return aws_call("the key store", method, **kwargs)


def context(scope: str) -> dict[str, str]:
    """The KMS encryption context a scope's key is wrapped and unwrapped with: CloudTrail records which memory each
    call was for, and a wrapped key copied onto another memory's entry does not open there."""
    return {"second-brain:key": scope}


def aws_call(what: str, method: Any, **kwargs: Any) -> dict[str, Any]:
    """A client call, its failure said as the store being unavailable (503 in the envelope, never a 500)."""
    try:
        result: dict[str, Any] = method(**kwargs)
        return result
    except (ClientError, BotoCoreError) as exc:
        raise StoreUnavailable(f"{what} failed: {exc}") from exc


def keys_table_definition(table_name: str) -> dict[str, Any]:
    """The key table this keyring expects (the SAM template declares the same, with a short recovery window)."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "scope", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "scope", "KeyType": "HASH"}],
    }
