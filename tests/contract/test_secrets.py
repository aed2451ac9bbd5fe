"""The secret store (an integration's password or token) on each adapter: in memory, sealed files beside a local
brain, and Secrets Manager through moto. The same promises on each: put replaces, get gives back what was put or
None, delete erases and may be repeated; and, where they are kept on disk, never in the clear."""

import os
import stat

import boto3
import pytest
from moto import mock_aws

from second_brain.adapters.secrets.memory import InMemorySecrets
from second_brain.adapters.secrets.sealed import SealedFileSecrets
from second_brain.adapters.secrets.secretsmanager import SecretsManagerSecrets

PASSWORD = "correct horse battery staple"


@pytest.fixture(params=["memory", "sealed", "secretsmanager"])
def secrets(request, tmp_path, monkeypatch):
    if request.param == "memory":
        yield InMemorySecrets()
    elif request.param == "sealed":
        yield SealedFileSecrets(tmp_path / "secrets", b"k" * 32)
    else:
        for key, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
            monkeypatch.setenv(key, value)
        with mock_aws():
            kms = boto3.client("kms", region_name="us-east-1")
            key_id = kms.create_key()["KeyMetadata"]["Arn"]
            yield SecretsManagerSecrets(boto3.client("secretsmanager", region_name="us-east-1"), "brain-stack",
                                        key_id)


def test_what_is_put_is_given_back_replaced_and_erased(secrets):
    assert secrets.get("0b8f4a52-0000-4000-8000-000000000001") is None
    secrets.put("0b8f4a52-0000-4000-8000-000000000001", {"password": PASSWORD})
    secrets.put("0b8f4a52-0000-4000-8000-000000000002", {"token": "secret_abc"})
    assert secrets.get("0b8f4a52-0000-4000-8000-000000000001") == {"password": PASSWORD}
    secrets.put("0b8f4a52-0000-4000-8000-000000000001", {"password": "new one", "username": "alice"})
    assert secrets.get("0b8f4a52-0000-4000-8000-000000000001") == {"password": "new one", "username": "alice"}
    secrets.delete("0b8f4a52-0000-4000-8000-000000000001")
    assert secrets.get("0b8f4a52-0000-4000-8000-000000000001") is None
    secrets.delete("0b8f4a52-0000-4000-8000-000000000001")  # again: nothing happens
    assert secrets.get("0b8f4a52-0000-4000-8000-000000000002") == {"token": "secret_abc"}  # the other one stays


def test_sealed_files_are_the_owners_alone_never_in_the_clear_and_bound_to_their_name(tmp_path):
    folder = tmp_path / "secrets"
    secrets = SealedFileSecrets(folder, b"k" * 32)
    secrets.put("a", {"password": PASSWORD})
    secrets.put("b", {"password": "other"})
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["a.sealed", "b.sealed"]
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert all(PASSWORD.encode() not in f.read_bytes() and b"password" not in f.read_bytes() for f in files)
    # another brain's key opens nothing; a file copied under another name opens nothing
    assert SealedFileSecrets(folder, b"x" * 32).get("a") is None
    os.replace(folder / "b.sealed", folder / "a.sealed")
    assert secrets.get("a") is None
    with pytest.raises(ValueError):
        secrets.put("../escape", {"password": PASSWORD})


def test_secrets_manager_keeps_each_under_the_stacks_prefix_and_deletes_at_once(monkeypatch):
    for key, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        client = boto3.client("secretsmanager", region_name="us-east-1")
        secrets = SecretsManagerSecrets(client, "brain-stack")
        secrets.put("abc", {"token": "secret_abc"})
        assert [s["Name"] for s in client.list_secrets()["SecretList"]] == ["brain-stack/integrations/abc"]
        secrets.delete("abc")
        # no recovery window: the name is free again at once, and a connect under it works
        assert client.list_secrets()["SecretList"] == []
        secrets.put("abc", {"token": "again"})
        assert secrets.get("abc") == {"token": "again"}
