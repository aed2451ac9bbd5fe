"""Fine-grained access control on the search domain, set up by the stack (the `SearchAccessSetup` custom resource).

With fine-grained access control on, OpenSearch's security plugin decides what a signed request may do once IAM
has let it in: a role ARN reaches nothing until it is mapped to a role inside OpenSearch. This setup runs as the
domain's master user (the one principal the plugin trusts at first) and, on every deploy:

- makes the role `<prefix>_brain`: every index action on the brain's indexes (`<prefix>-*`) and, at cluster level,
  only what the functions' requests need (bulk and multi-get are cluster actions: `cluster_composite_ops`);
- maps the four function roles to it, and nothing else;
- maps the operators' ARNs (who runs `brain replay --aws`, who administers) to `all_access` and `security_manager`,
  beside whoever is mapped there already (the master user's own mapping is kept);
- turns the audit log on, without request bodies: a capture's body is memory text, and a forget cannot reach
  CloudWatch Logs.

A deletion removes nothing: the domain outlives the stack (DeletionPolicy Retain), and its roles with it.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as SearchUnreachable
from opensearchpy.exceptions import TransportError

SECURITY = "/_plugins/_security/api"
# What the functions' requests need outside their indexes: `_bulk`, `_mget` and `_msearch` are authorised as
# cluster actions (indices:data/write/bulk, indices:data/read/mget) before each item is checked on its index.
CLUSTER_ACTIONS = ["cluster_composite_ops"]
OPERATOR_ROLES = ("all_access", "security_manager")
# The audit log's categories are the plugin's defaults; the request body is left out.
AUDIT = [{"op": "add", "path": "/config/enabled", "value": True},
         {"op": "add", "path": "/config/audit/log_request_body", "value": False},
         {"op": "add", "path": "/config/audit/enable_rest", "value": True},
         {"op": "add", "path": "/config/audit/disabled_rest_categories",
          "value": ["AUTHENTICATED", "GRANTED_PRIVILEGES"]}]


@dataclass(frozen=True)
class Access:
    """What the custom resource's properties ask for."""

    prefix: str
    function_roles: tuple[str, ...]
    operators: tuple[str, ...] = ()

    @classmethod
    def of(cls, properties: dict[str, Any]) -> Access:
        prefix = str(properties.get("Prefix", ""))
        roles = tuple(_arns(properties.get("FunctionRoles")))
        if not prefix or not roles:
            raise ValueError("SearchAccessSetup needs Prefix and FunctionRoles")
        return cls(prefix, roles, tuple(_arns(properties.get("OperatorArns"))))

    @property
    def role(self) -> str:
        return f"{self.prefix}_brain"


def _arns(value: object) -> Iterable[str]:
    listed = value if isinstance(value, list) else [value] if value else []
    return (str(arn).strip() for arn in listed if str(arn).strip())


def apply(client: OpenSearch, access: Access, *, attempts: int = 10, pause: float = 15.0,
          sleep: Callable[[float], None] = time.sleep) -> None:
    """Make the brain's role and the mappings; retried while a new domain's security index is not ready (it
    answers 503, or refuses the connection, for a few minutes after the domain says it is active)."""
    for attempt in range(1, attempts + 1):
        try:
            _apply(client, access)
            return
        except (SearchUnreachable, TransportError) as e:
            status = getattr(e, "status_code", None)
            if attempt == attempts or (isinstance(status, int) and status not in (429, 500, 502, 503, 504)):
                raise
            sleep(pause)


def _apply(client: OpenSearch, access: Access) -> None:
    call = client.transport.perform_request
    call("PUT", f"{SECURITY}/roles/{access.role}", body={
        "description": "Second Brain's functions: the brain's indexes only (made by the stack; a deploy resets it).",
        "cluster_permissions": CLUSTER_ACTIONS,
        "index_permissions": [{"index_patterns": [f"{access.prefix}-*"], "allowed_actions": ["indices_all"]}]})
    call("PUT", f"{SECURITY}/rolesmapping/{access.role}", body={
        "description": "The stack's function roles (made by the stack; a deploy resets it).",
        "backend_roles": sorted(access.function_roles), "hosts": [], "users": []})
    for role in OPERATOR_ROLES if access.operators else ():
        current = call("GET", f"{SECURITY}/rolesmapping/{role}").get(role, {})
        backend = sorted(set(current.get("backend_roles", [])) | set(access.operators))
        call("PUT", f"{SECURITY}/rolesmapping/{role}", body={
            "backend_roles": backend, "hosts": current.get("hosts", []), "users": current.get("users", [])})
    call("PATCH", f"{SECURITY}/audit", body=AUDIT)


def handle(event: dict[str, Any], client: Callable[[], OpenSearch], **retry: Any) -> dict[str, Any]:
    """A CloudFormation custom resource request, answered at its ResponseURL whatever happens: a request left
    unanswered holds the stack for an hour."""
    answer: dict[str, Any] = {
        "Status": "SUCCESS", "PhysicalResourceId": event.get("PhysicalResourceId") or "search-access",
        "StackId": event["StackId"], "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"], "Data": {}}
    try:
        if event["RequestType"] in ("Create", "Update"):
            access = Access.of(event.get("ResourceProperties", {}))
            apply(client(), access, **retry)
            answer["Data"] = {"Role": access.role}
    except Exception as e:  # noqa: BLE001 - every failure is told to CloudFormation, which rolls back
        answer |= {"Status": "FAILED", "Reason": f"{type(e).__name__}: {e}"[:1000]}
    respond(event["ResponseURL"], answer)
    return answer


def respond(url: str, answer: dict[str, Any]) -> None:
    body = json.dumps(answer).encode()
    # The presigned URL is signed without a content type: sending one would break its signature.
    request = urllib.request.Request(url, data=body, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - CloudFormation's https URL
        response.read()
