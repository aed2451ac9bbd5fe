"""Schemathesis against a real server, through its own command line: every operation in /openapi.json with valid
and invalid input (its coverage and fuzzing phases), then sequences that follow the schema's links from one answer's
ids into the next request (its stateful phase). The schema must tell the truth: no server error, every answer as
documented, and no operation whose valid examples the API mostly refuses (schemathesis's "schema validation
mismatch", read from its JSON report, where the command line reports it)."""

import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import TOKEN, Server

# A device's keys as a browser sends them: a point on P-256 (its generator, uncompressed) and a 16-byte secret.
P256_POINT = b"\x04" + bytes.fromhex("6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296"
                                     "4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5")
AUTH_SECRET = bytes(range(16))
NEVER_A_SOURCE = "00000000-0000-4000-8000-000000000000"
# Bounded and repeatable: the same cases every run, about 45 s on two cores. The coverage phase sends each
# operation's boundary values, valid and not; the fuzzing phase `max-examples` drawn ones per operation and mode; the
# stateful phase short sequences along the links. One worker: two raced Hypothesis's parsing of source code into
# Python 3.11's ast module, which is not thread-safe, and the run errored.
CONFIG = """\
workers = 1
headers = {{ Authorization = "Bearer {owner}" }}

[generation]
deterministic = true
max-examples = 20

[checks]
enabled = false
[checks.not_a_server_error]
enabled = true
[checks.status_code_conformance]
enabled = true
[checks.content_type_conformance]
enabled = true
[checks.response_headers_conformance]
enabled = true
[checks.response_schema_conformance]
enabled = true
[checks.unsupported_method]
enabled = true

[phases.stateful]
# Sequences are drawn deterministically from the schema, so a new operation or field reshuffles them: at 10 steps the
# review list's two routes and capture's `force` left the links reaching 5 memory operations; 20 reach them again.
max-steps = 20
[phases.stateful.generation]
max-examples = 60

# POST /team/me/token is a member's (the owner's token comes from the deployment): a member calls it, once, since the
# token it was given is then replaced.
[[operations]]
include-path = "/team/me/token"
headers = {{ Authorization = "Bearer {member_token}" }}

# A backup keeps its own ids, drawn here from the same pattern as every memory id the fuzzer sends, so restored into
# the owner's layer they would turn the fuzzer's ids for other operations from unknown memories (404) into stored
# ones whose state those operations refuse: "not an open loop", "no time anchor to clear". Another member restores
# them, into a layer the owner does not read.
[[operations]]
include-path = "/import"
headers = {{ Authorization = "Bearer {importer_token}" }}

# Every time zone is a valid TIMEZONE, and the coverage phase would send each (some 900 settings changes, each one
# more event that every later request folds): PATCH /config is fuzzed in the fuzzing phase alone.
[[operations]]
include-path = "/config"
phases.coverage.enabled = false

# The one documented 5xx: without a configured model POST /chat answers 503 in the envelope. (Each filter of an
# entry selects operations on its own: a path alone names the one operation at it.)
[[operations]]
include-path = "/chat"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]

# What a schema can say but the fuzzer cannot draw, given instead: JSON Schema cannot say that two fields differ,
# and the fuzzer's ids are often twins, which /link refuses before it looks them up (links between real memories
# come in the stateful phase); the owner's name comes from the deployment, so the owner edits a member's profile,
# never their own; a device's key must be a point on the curve, its push service on this machine's loopback (which
# the test-only setting lets in: nothing leaves the machine). The coverage phase does not apply given values, so it
# skips these three.
[[operations]]
include-path = ["/link", "/team/profile", "/push/subscribe"]
phases.coverage.enabled = false
[operations.parameters]
"body.target_id" = "{never_a_source}"
"body.id" = "{member}"
"body.subscription.endpoint" = "https://localhost:9/push"
"body.subscription.keys.p256dh" = "{p256dh}"
"body.subscription.keys.auth" = "{auth}"

# Connecting reaches the system named: here a notes folder, which must exist on this machine (an empty one is
# given; each connect syncs it at once). The other kinds need their servers (the e2e tests start them), and a
# connector takes its own settings only, so the fuzzer connects the folder.
[[operations]]
include-path = "/integrations"
phases.coverage.enabled = false
[operations.parameters]
"body.kind" = "notes"
"body.settings" = {{ path = "{vault}" }}
"""
def _folder(path: Path) -> Path:
    path.mkdir()
    return path


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    server = Server(tmp_path / "brain", env={"BRAIN_PUSH_ALLOW_LOOPBACK": "true"}).start()
    yield server
    if server.running:
        server.stop()


def test_no_server_error_every_answer_documented_and_valid_input_accepted(server: Server, tmp_path: Path) -> None:
    with server.client() as api:
        member, importer = (api.post("/team/members", json={"name": name}).json() for name in ("Fuzzed", "Importer"))
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.format(owner=TOKEN, member=member["member"]["id"], member_token=member["token"],
                                    importer_token=importer["token"], never_a_source=NEVER_A_SOURCE,
                                    p256dh=base64url(P256_POINT), auth=base64url(AUTH_SECRET),
                                    vault=_folder(tmp_path / "vault")))
    report, requests = tmp_path / "report.json", tmp_path / "requests.har"
    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run", server.url + "/openapi.json",
         "--report", "json,har", "--report-json-path", str(report),
         "--report-har-path", str(requests), "--no-color"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)  # its cache goes there too
    summary = json.loads(report.read_text())
    assert summary["operations"]["tested"] >= 50, run.stdout[-2000:]
    assert not summary["failures"], section(run.stdout, "FAILURES")
    assert not summary["errors"], section(run.stdout, "ERRORS")
    mismatched = set(summary["warnings"]["validation_mismatch"])
    assert not mismatched, f"valid examples mostly refused by {mismatched}:\n" + section(run.stdout, "WARNINGS")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    # The links took the stateful phase from captures to real memories, where the fuzzer's own ids find none.
    reached = memory_operations_reached(json.loads(requests.read_text()))
    assert len(reached) >= 6, reached  # 11 of the 14 in the last runs


def base64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def section(output: str, title: str) -> str:
    """One titled section of the command line's report (FAILURES, WARNINGS), cut to a readable length."""
    start = output.find(f" {title} ")
    return output[start:start + 6000] if start >= 0 else output[-6000:]


def memory_operations_reached(har: dict) -> set[str]:
    """The operations that answered 2xx to a request naming a memory a capture had just answered with."""
    entries = har["log"]["entries"]
    captured = {match for entry in entries if entry["request"]["method"] == "POST"
                and entry["request"]["url"].split("?")[0].endswith("/capture") and entry["response"]["status"] == 200
                for match in UUID.findall(entry["response"]["content"].get("text", ""))}
    reached = set()
    for entry in entries:
        request = entry["request"]
        path = "/" + request["url"].split("?")[0].split("/", 3)[3]
        named = UUID.findall(request["url"] + request.get("postData", {}).get("text", ""))
        if path != "/capture" and set(named) & captured and 200 <= entry["response"]["status"] < 300:
            reached.add(f"{request['method']} {path}")
    return reached
