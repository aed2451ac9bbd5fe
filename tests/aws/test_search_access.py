"""The fine-grained access setup (the SearchAccessSetup custom resource) against an HTTP server that answers the
security plugin's REST API as documented (roles, rolesmapping, audit), and a second one standing in for
CloudFormation's response URL. Not a real security plugin: the test node runs without one (it needs TLS
certificates and a security index of its own), so what is checked is the requests the setup makes, what it
keeps of existing mappings, its retries, and that CloudFormation always hears back."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opensearchpy import OpenSearch

from second_brain.aws.search_access import SECURITY, handle

FUNCTIONS = ["arn:aws:iam::111122223333:role/brain-ApiFunctionRole-A",
             "arn:aws:iam::111122223333:role/brain-McpFunctionRole-B"]
MASTER = "arn:aws:iam::111122223333:role/brain-SearchAdminRole-C"


class SecurityApi(BaseHTTPRequestHandler):
    """The documented shapes: PUT answers {"status": "CREATED"|"OK", "message": ...}; GET of a mapping answers
    {name: {"backend_roles": [...], "hosts": [...], "users": [...], "reserved": ..., "hidden": ...}}."""

    server: "Server"

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> object:
        length = int(self.headers.get("content-length") or 0)
        return json.loads(self.rfile.read(length)) if length else None

    def _handle(self) -> None:
        body = self._body()
        self.server.calls.append((self.command, self.path, body))
        if self.server.unavailable > 0 and self.path != "/cfn":
            self.server.unavailable -= 1
            return self._answer(503, {"status": "SERVICE_UNAVAILABLE",
                                      "message": "Security index not initialized"})
        if self.path == "/cfn":  # CloudFormation's presigned response URL
            self.server.responses.append((self.headers.get("content-type"), body))
            return self._answer(200, {})
        kind, _, name = self.path.removeprefix(SECURITY + "/").partition("/")
        if self.command == "GET" and kind == "rolesmapping":
            if name not in self.server.mappings:
                return self._answer(404, {"status": "NOT_FOUND", "message": f"'{name}' not found."})
            return self._answer(200, {name: self.server.mappings[name] | {"reserved": False, "hidden": False}})
        if self.command == "PUT" and kind in ("roles", "rolesmapping"):
            if kind == "rolesmapping" and ({"reserved", "hidden", "static"} & set(body)):
                return self._answer(400, {"status": "error", "reason": "Invalid configuration"})
            store = self.server.roles if kind == "roles" else self.server.mappings
            created = name not in store
            store[name] = body
            said = "created" if created else "updated"
            return self._answer(201 if created else 200, {"status": "CREATED" if created else "OK",
                                                          "message": f"'{name}' {said}."})
        if self.command == "PATCH" and kind == "audit":
            self.server.audit = body
            return self._answer(200, {"status": "OK", "message": "'config' updated."})
        self._answer(400, {"status": "error", "reason": f"no handler for {self.command} {self.path}"})

    do_GET = do_PUT = do_PATCH = _handle  # noqa: N815 - the stdlib's names

    def log_message(self, *args: object) -> None:
        pass


class Server(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), SecurityApi)
        self.calls: list[tuple[str, str, object]] = []
        self.responses: list[tuple[str | None, dict]] = []
        self.roles: dict[str, dict] = {}
        # As a new domain has them: the master user is mapped to both of the operator roles.
        self.mappings: dict[str, dict] = {
            "all_access": {"backend_roles": [MASTER], "hosts": [], "users": []},
            "security_manager": {"backend_roles": [MASTER], "hosts": [], "users": []}}
        self.audit: object = None
        self.unavailable = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def server() -> Iterator[Server]:
    server = Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _event(server: Server, kind: str = "Create", **properties: object) -> dict:
    return {"RequestType": kind, "ResponseURL": f"{server.url}/cfn", "StackId": "arn:aws:cloudformation:stack/brain",
            "RequestId": "r-1", "LogicalResourceId": "SearchAccessSetup", "ResourceType": "Custom::SearchAccess",
            "ResourceProperties": {"ServiceToken": "arn:fn", "Prefix": "brain", "FunctionRoles": FUNCTIONS}
            | properties}


def _environ(operators: list[str] | None = None, roles: list[str] = FUNCTIONS) -> dict[str, str]:
    """The setup function's environment, as the template sets it."""
    return {"BRAIN_OPENSEARCH_PREFIX": "brain", "BRAIN_SEARCH_FUNCTION_ROLES": ",".join(roles),
            "BRAIN_SEARCH_OPERATORS": ",".join(operators or [])}


def _client(server: Server) -> OpenSearch:
    return OpenSearch(server.url, timeout=5, max_retries=2)  # as composition.opensearch_client makes it


def test_the_functions_reach_the_brains_indexes_only_and_the_audit_log_leaves_bodies_out(server):
    answer = handle(_event(server), lambda: _client(server), _environ())
    assert answer["Status"] == "SUCCESS", answer.get("Reason")
    role = server.roles["brain_brain"]
    assert role["index_permissions"] == [{"index_patterns": ["brain-*"], "allowed_actions": ["indices_all"]}]
    assert role["cluster_permissions"] == ["cluster_composite_ops"]  # bulk and mget; no cluster admin
    assert server.mappings["brain_brain"]["backend_roles"] == sorted(FUNCTIONS)
    # the operator roles were not touched: no operator was named
    assert server.mappings["all_access"]["backend_roles"] == [MASTER]
    audit = {change["path"]: change["value"] for change in server.audit}
    assert audit["/config/enabled"] is True and audit["/config/audit/log_request_body"] is False
    # CloudFormation heard back, with no content type (its presigned URL is signed without one)
    [(content_type, body)] = server.responses
    assert content_type in (None, "") and body["Status"] == "SUCCESS" and body["Data"] == {"Role": "brain_brain"}
    assert body["PhysicalResourceId"] == "search-access" and body["LogicalResourceId"] == "SearchAccessSetup"


def test_operators_join_the_master_user_and_leave_when_no_longer_named(server):
    admin, auditor = "arn:aws:iam::111122223333:role/Admin", "arn:aws:iam::111122223333:user/alice"
    server.mappings["all_access"]["backend_roles"].append("arn:aws:iam::111122223333:role/ByHand")
    answer = handle(_event(server), lambda: _client(server), _environ([admin, auditor, " "]))
    assert answer["Status"] == "SUCCESS", answer.get("Reason")
    # a role signs in as a backend role, a user as a user name
    assert server.mappings["security_manager"] == {"backend_roles": sorted([MASTER, admin]), "hosts": [],
                                                   "users": [auditor]}
    assert set(server.mappings["all_access"]["backend_roles"]) == {
        MASTER, admin, "arn:aws:iam::111122223333:role/ByHand"}
    # a redeploy naming only the admin: the user the stack mapped goes; the master and the hand-made stay
    answer = handle(_event(server, "Update"), lambda: _client(server), _environ([admin]))
    assert answer["Status"] == "SUCCESS", answer.get("Reason")
    for role in ("all_access", "security_manager"):
        assert server.mappings[role]["users"] == [] and admin in server.mappings[role]["backend_roles"]
    assert "arn:aws:iam::111122223333:role/ByHand" in server.mappings["all_access"]["backend_roles"]
    puts = [path for method, path, _ in server.calls if method == "PUT" and "all_access" in path]
    handle(_event(server, "Update"), lambda: _client(server), _environ([admin]))  # nothing changed: no write
    assert [path for method, path, _ in server.calls if method == "PUT" and "all_access" in path] == puts


def test_what_is_mapped_comes_from_the_functions_environment_not_the_request(server):
    """Whoever else may invoke the function cannot make themselves an operator by forging a request."""
    forged = _event(server, OperatorArns=["arn:aws:iam::999999999999:role/Intruder"],
                    FunctionRoles=["arn:aws:iam::999999999999:role/Intruder"])
    answer = handle(forged, lambda: _client(server), _environ())
    assert answer["Status"] == "SUCCESS", answer.get("Reason")
    assert "Intruder" not in json.dumps(server.mappings)
    refused = handle(_event(server), lambda: _client(server), _environ(roles=[]))
    assert refused["Status"] == "FAILED" and "BRAIN_SEARCH_FUNCTION_ROLES" in refused["Reason"]


def test_a_domain_whose_security_index_is_not_ready_is_waited_for(server):
    server.unavailable = 7  # the client's own 3 tries of a request, twice; then the domain is ready
    slept: list[float] = []
    answer = handle(_event(server), lambda: _client(server), _environ(), pause=0.01, sleep=slept.append)
    assert answer["Status"] == "SUCCESS", answer.get("Reason")
    assert slept == [0.01, 0.01] and "brain_brain" in server.roles


def test_a_failure_is_told_to_cloudformation_not_left_hanging(server):
    server.unavailable = 50
    answer = handle(_event(server), lambda: _client(server), _environ(), attempts=2, pause=0,
                    sleep=lambda _: None)
    assert answer["Status"] == "FAILED" and "503" in answer["Reason"]
    assert [body["Status"] for _, body in server.responses] == ["FAILED"]


def test_a_deletion_removes_nothing_and_succeeds(server):
    event = _event(server, "Delete") | {"PhysicalResourceId": "search-access"}
    answer = handle(event, lambda: pytest.fail("a deletion calls the domain"), _environ())
    assert answer["Status"] == "SUCCESS"
    assert [(m, p) for m, p, _ in server.calls] == [("PUT", "/cfn")]
