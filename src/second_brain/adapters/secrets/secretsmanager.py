"""Secrets on AWS: one Secrets Manager secret each, `<prefix>/integrations/<name>`, encrypted under the stack's
data key; a delete is immediate (no recovery window: a disconnected integration's password is gone at once)."""

import json
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from ...domain.errors import StoreUnavailable


class SecretsManagerSecrets:
    def __init__(self, client: Any, prefix: str, kms_key_id: str | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.kms_key_id = kms_key_id

    def put(self, name: str, values: Mapping[str, str]) -> None:
        body = json.dumps(dict(values))
        try:
            self.client.put_secret_value(SecretId=self._id(name), SecretString=body)
        except ClientError as e:
            if _code(e) != "ResourceNotFoundException":
                raise StoreUnavailable(f"Secrets Manager refused to keep the integration's secret ({_code(e)})") from e
            made = {"Name": self._id(name), "SecretString": body,
                    "Description": "A Second Brain integration's secret settings"}
            try:
                self.client.create_secret(**made, **({"KmsKeyId": self.kms_key_id} if self.kms_key_id else {}))
            except ClientError as refused:
                raise StoreUnavailable(f"Secrets Manager refused to keep the integration's secret "
                                       f"({_code(refused)})") from refused

    def get(self, name: str) -> dict[str, str] | None:
        try:
            answer = self.client.get_secret_value(SecretId=self._id(name))
        except ClientError as e:
            if _code(e) in ("ResourceNotFoundException", "InvalidRequestException"):  # none, or being deleted
                return None
            raise StoreUnavailable(f"Secrets Manager cannot be read ({_code(e)})") from e
        return {str(k): str(v) for k, v in json.loads(answer["SecretString"]).items()}

    def delete(self, name: str) -> None:
        try:
            self.client.delete_secret(SecretId=self._id(name), ForceDeleteWithoutRecovery=True)
        except ClientError as e:
            if _code(e) != "ResourceNotFoundException":
                raise StoreUnavailable(f"Secrets Manager did not delete the integration's secret ({_code(e)}): "
                                       "nothing was disconnected; try again") from e

    def _id(self, name: str) -> str:
        return f"{self.prefix}/integrations/{name}"


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))
