"""Backups past Lambda's payload limit, in an S3 bucket reached through presigned URLs."""

from typing import Any

from botocore.exceptions import ClientError


class S3BlobStore:
    def __init__(self, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType="application/json")

    def get(self, key: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                raise KeyError(key) from exc
            raise

    def discard(self, prefix: str) -> None:
        """Delete every object whose key begins with `prefix` (an upload and the parts laid out beside it)."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        for page in pages:
            keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
            if keys:
                self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})

    def download_url(self, key: str, seconds: int) -> str:
        return self.client.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=seconds)

    def upload_form(self, key: str, seconds: int, max_bytes: int) -> dict[str, Any]:
        """A presigned POST (`url`, and the form `fields` to send before the file): S3 itself refuses a file past
        `max_bytes`, or empty, or of another type, or to another key."""
        return self.client.generate_presigned_post(
            self.bucket, key, Fields={"Content-Type": "application/json"},
            Conditions=[{"Content-Type": "application/json"}, ["content-length-range", 1, max_bytes]],
            ExpiresIn=seconds)

    def stat(self, key: str) -> tuple[int, str]:
        """The stored object's size and its version (the ETag: another upload to the key changes it)."""
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                raise KeyError(key) from exc
            raise
        return int(head["ContentLength"]), head["ETag"].strip('"')
