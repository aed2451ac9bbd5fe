"""The blob store (backups past Lambda's 6 MB) on S3 through moto: what the API hands a client works from the
client's side, over HTTP, as the browser and curl use it."""

import base64
import json

import boto3
import pytest
import requests
from moto import mock_aws

from second_brain.adapters.blobs.s3 import S3BlobStore

BUCKET = "brain-transfers"


@pytest.fixture
def blobs(monkeypatch):
    for key, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield S3BlobStore(client, BUCKET)


def test_an_object_is_put_read_measured_and_downloaded(blobs):
    blobs.put("exports/a.json", b'{"entries": []}')
    size, tag = blobs.stat("exports/a.json")
    assert blobs.get("exports/a.json") == b'{"entries": []}' and size == 15 and tag
    assert requests.get(blobs.download_url("exports/a.json", 60)).content == b'{"entries": []}'
    blobs.put("exports/a.json", b'{"entries": [2]}')
    assert blobs.stat("exports/a.json")[1] != tag  # another upload to the key: another version
    for read in (blobs.get, blobs.stat):
        with pytest.raises(KeyError):
            read("exports/none.json")


def test_the_upload_form_takes_one_json_file_of_bounded_size_to_its_key(blobs):
    form = blobs.upload_form("imports/b.json", 60, max_bytes=1_000)
    policy = json.loads(base64.b64decode(form["fields"]["policy"]))
    # S3 enforces these (moto does not): the size, the type, the key
    assert ["content-length-range", 1, 1_000] in policy["conditions"]
    assert {"Content-Type": "application/json"} in policy["conditions"]
    assert {"key": "imports/b.json"} in policy["conditions"] and {"bucket": BUCKET} in policy["conditions"]
    sent = requests.post(form["url"], data=form["fields"],
                         files={"file": ("backup.json", b'{"entries": [1]}', "application/json")})
    assert sent.status_code in (200, 204) and blobs.get("imports/b.json") == b'{"entries": [1]}'
