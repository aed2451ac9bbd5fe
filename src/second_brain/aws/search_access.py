"""Fine-grained access control on the search domain, set up by the stack (the `SearchAccessSetup` custom resource).

With fine-grained access control on, OpenSearch's security plugin decides what a signed request may do once IAM
has let it in: a role ARN reaches nothing until it is mapped to a role inside OpenSearch. This setup runs as the
domain's master user (the one principal the plugin trusts at first) and, on every deploy:

- makes the role `<prefix>_brain`: every index action on the brain's indexes (`<prefix>-*`) and, at cluster level,
  only what the functions' requests need (bulk and multi-get are cluster actions: `cluster_composite_ops`);
- maps the four function roles to it, and nothing else;
- maps the operators' ARNs (who runs `brain replay --aws`, who administers: roles as backend roles, users as
  users) to `all_access` and `security_manager`, beside whoever is mapped there already (the master user's own
  mapping is kept), and takes off the ones the stack mapped before that are no longer named;
- turns the audit log on, without request bodies: a capture's body is memory text, and a forget cannot reach
  CloudWatch Logs.

A deletion removes nothing: the domain outlives the stack (DeletionPolicy Retain), and its roles with it.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping
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
    """What the stack asks for, from the setup function's own environment (set by the template): a request
    that reaches the function some other way cannot name other operators or other roles."""

    prefix: str
    function_roles: tuple[str, ...]
    operators: tuple[str, ...] = ()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Access:
        prefix = environ.get("BRAIN_OPENSEARCH_PREFIX", "").strip()
        roles = tuple(_arns(environ.get("BRAIN_SEARCH_FUNCTION_ROLES", "")))
        if not prefix or not roles:
            raise ValueError("The setup needs BRAIN_OPENSEARCH_PREFIX and BRAIN_SEARCH_FUNCTION_ROLES")
        return cls(prefix, roles, tuple(_arns(environ.get("BRAIN_SEARCH_OPERATORS", ""))))

    @property
    def role(self) -> str:
        return f"{self.prefix}_brain"


def _arns(listed: str) -> list[str]:
    return sorted({arn.strip() for arn in listed.split(",") if arn.strip()})


def _split(arns: Iterable[str]) -> tuple[list[str], list[str]]:
    """IAM roles and IAM users: a request signed by a role carries its ARN as a backend role, one signed by a
    user carries the user's ARN as its user name (OpenSearch Service's mapping of IAM principals)."""
    arns = sorted(set(arns))
    return [a for a in arns if ":user/" not in a], [a for a in arns if ":user/" in a]


def apply(client: OpenSearch, access: Access, *, attempts: int = 10, pause: float = 15.0,
          sleep: Callable[[float], None] = time.sleep) -> None:
    """Make the brain's role and the mappings; retried while a new domain's security plugin is not ready (503,
    a refused connection, or 401/403 for the master role while fine-grained access control is being turned on)."""
    for attempt in range(1, attempts + 1):
        try:
            _apply(client, access)
            return
        except (SearchUnreachable, TransportError) as e:
            status = getattr(e, "status_code", None)
            if attempt == attempts or (isinstance(status, int) and status not in RETRIED):
                raise
            sleep(pause)


RETRIED = (401, 403, 429, 500, 502, 503, 504)


def _apply(client: OpenSearch, access: Access) -> None:
    call = client.transport.perform_request
    call("PUT", f"{SECURITY}/roles/{access.role}", body={
        "description": "Second Brain's functions: the brain's indexes only (made by the stack; a deploy resets it).",
        "cluster_permissions": CLUSTER_ACTIONS,
        "index_permissions": [{"index_patterns": [f"{access.prefix}-*"], "allowed_actions": ["indices_all"]}]})
    # The operators the stack mapped last time are kept in this mapping's description, so one taken out of the
    # parameter loses the operator roles again (and nobody mapped by hand is touched).
    before = _mapping(call, access.role)
    previous = set(_arns(str(before.get("description", "")).partition(OPERATORS)[2]))
    call("PUT", f"{SECURITY}/rolesmapping/{access.role}", body={
        "description": f"The stack's function roles (made by the stack; a deploy resets it){OPERATORS}"
                       f"{','.join(access.operators)}",
        "backend_roles": sorted(access.function_roles), "hosts": [], "users": []})
    for role in OPERATOR_ROLES:
        current = _mapping(call, role)
        roles, users = _split(access.operators)
        gone = previous - set(access.operators)
        backend = sorted((set(current.get("backend_roles", [])) - gone) | set(roles))
        named = sorted((set(current.get("users", [])) - gone) | set(users))
        if (backend, named) != (sorted(current.get("backend_roles", [])), sorted(current.get("users", []))):
            call("PUT", f"{SECURITY}/rolesmapping/{role}", body={
                "backend_roles": backend, "hosts": current.get("hosts", []), "users": named,
                **{k: current[k] for k in ("description", "and_backend_roles") if current.get(k)}})
    call("PATCH", f"{SECURITY}/audit", body=AUDIT)


OPERATORS = "; operators: "


def _mapping(call: Callable[..., Any], role: str) -> dict[str, Any]:
    """A role's mapping as stored, or nothing if it has none yet."""
    try:
        return dict(call("GET", f"{SECURITY}/rolesmapping/{role}").get(role, {}))
    except TransportError as e:
        if e.status_code == 404:
            return {}
        raise


def handle(event: dict[str, Any], client: Callable[[], OpenSearch], environ: Mapping[str, str],
           **retry: Any) -> dict[str, Any]:
    """A CloudFormation custom resource request, answered at its ResponseURL whatever happens: a request left
    unanswered holds the stack until its ServiceTimeout. What to set up comes from `environ`; the request's
    properties only make CloudFormation send an update when the domain, the roles or the operators change."""
    answer: dict[str, Any] = {
        "Status": "SUCCESS", "PhysicalResourceId": event.get("PhysicalResourceId") or "search-access",
        "StackId": event["StackId"], "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"], "Data": {}}
    try:
        if event["RequestType"] in ("Create", "Update"):
            access = Access.from_environment(environ)
            apply(client(), access, **retry)
            answer["Data"] = {"Role": access.role}
    except Exception as e:  # noqa: BLE001 - every failure is told to CloudFormation, which rolls back
        answer |= {"Status": "FAILED", "Reason": f"{type(e).__name__}: {e}"[:1000]}
    respond(event["ResponseURL"], answer)
    return answer


def respond(url: str, answer: dict[str, Any]) -> None:
    body = json.dumps(answer).encode()
    # The presigned URL is signed without a content type: sending one would break its signature.
    request = urllib.request.Request(url, data=body, method="PUT",  # noqa: S310 - CloudFormation's https URL
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - CloudFormation's https URL
        response.read()
