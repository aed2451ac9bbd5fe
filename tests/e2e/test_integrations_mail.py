"""A mailbox over IMAP, against a real IMAP server (GreenMail, tests/support/greenmail.py) and a served brain: each
message a mirror (its own words, without quoted history or signature; attachments named; replies linked to what
they answer), a message replaced upstream updated in place, one deleted removed, the 409 on a mirror, disconnect,
TLS with the password sealed outside the log and never shown, and a sync killed halfway that the next finishes."""

from pathlib import Path

import httpx
import pytest

from tests.support.greenmail import PASSWORD, message

from .conftest import Server
from .killed import kill_mid_sync, resume

# Loopback allowed (GreenMail is on 127.0.0.1); folders not watched.
pytestmark = pytest.mark.server_env(BRAIN_PUSH_ALLOW_LOOPBACK="true", BRAIN_WATCH_FOLDERS="false")


QUOTED = """Let's keep the launch on Thursday, the venue is booked.

On Mon, 30 Nov 2026 at 09:00, Carol <carol@example.org> wrote:
> Should we move the launch to Friday?
> The venue might be double-booked.

--
Bob Stone
Head of Events, Example Org
"""


def mirrors(api) -> dict[str, dict]:
    rows = api.get("/list", params={"n": 100}).json()
    return {row["content"].split("\n")[0]: row for row in rows if row["source"].startswith("email-")}


def connect(api, settings: dict) -> httpx.Response:
    return api.post("/integrations", json={"kind": "imap", "name": "Brain label", "settings": settings})


def test_a_mailbox_is_mirrored_followed_and_disconnected(api, greenmail, mailbox):
    greenmail.append(message("Launch date", QUOTED, message_id="launch@example.org",
                             attachments={"venue-contract.pdf": b"%PDF-1.4 not read"}), mailbox)
    greenmail.append(message("Re: Launch date", "Thursday works for me.", sender="Carol <carol@example.org>",
                             message_id="reply@example.org", replying_to="launch@example.org"), mailbox)
    html_only = message("Invoice 118", "", message_id="invoice@example.org")
    html_only.set_content("<html><body><p>Invoice <b>118</b> is due on 15 December.</p>"
                          "<blockquote>older thread text</blockquote></body></html>", subtype="html")
    greenmail.append(html_only, mailbox)
    flags_before = greenmail.flags(mailbox)

    connected = connect(api, greenmail.settings(mailbox))
    assert connected.status_code == 200, connected.text
    integration = connected.json()["integration"]
    assert connected.json()["sync"]["created"] == 3 and connected.json()["sync"]["complete"] is True
    assert integration["source"] == "email-imap" and integration["mirrors"] == 3
    assert integration["settings"]["password"] == "(secret, kept sealed)"
    assert PASSWORD not in api.get("/integrations").text
    found = mirrors(api)
    assert set(found) == {"Launch date", "Re: Launch date", "Invoice 118"}
    launch = found["Launch date"]
    assert "From: Bob Stone <bob@example.org>" in launch["content"]
    assert "Date: 2026-11-30 09:30" in launch["content"]
    assert "Attachments: venue-contract.pdf" in launch["content"] and "PDF-1.4" not in launch["content"]
    assert "venue is booked" in launch["content"]
    # the quoted history and the signature are not the message's own words
    assert "double-booked" not in launch["content"] and "Head of Events" not in launch["content"]
    assert "due on 15 December" in found["Invoice 118"]["content"]
    assert "older thread text" not in found["Invoice 118"]["content"]
    assert "email" in launch["tags"]
    # the reply is linked to what it answers (the brain may infer other links by likeness: provenance inferred)
    linked = api.get("/connections", params={"id": launch["id"]}).json()["connections"]
    assert [c["id"] for c in linked if c["provenance"] == "system"] == [found["Re: Launch date"]["id"]]
    # read only: no message was marked read
    assert greenmail.flags(mailbox) == flags_before

    managed = api.get("/entry", params={"id": launch["id"]}).json()["entry"]["managed_by"]
    assert managed["source"] == "email-imap" and managed["url"].startswith("imap://alice%40example.com@127.0.0.1:")
    # a mirror cannot be edited or forgotten here: 409, saying where
    for path, body in (("/update", {"id": launch["id"], "content": "moved"}), ("/forget", {"id": launch["id"]})):
        refused = api.post(path, json=body)
        assert refused.status_code == 409, refused.text
        assert "managed mirror of email-imap" in refused.json()["error"] and "imap://" in refused.json()["error"]

    # nothing new: nothing fetched again, nothing written
    again = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert (again["created"], again["updated"], again["removed"], again["unchanged"]) == (0, 0, 0, 3)

    # replaced upstream (a client saving a draft again: the same Message-ID, a new message): updated in place
    greenmail.append(message("Launch date", "Launch moved to Friday, same venue.", message_id="launch@example.org"),
                     mailbox)
    greenmail.delete_oldest("launch@example.org", mailbox)
    sync = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert (sync["created"], sync["updated"], sync["removed"]) == (0, 1, 0), sync
    entry = api.get("/entry", params={"id": launch["id"]}).json()["entry"]
    assert "moved to Friday" in entry["content"]
    timeline = api.get("/timeline", params={"id": launch["id"]}).json()["timeline"]
    assert [e["type"] for e in timeline].count("synced") == 2, timeline

    # deleted upstream: the mirror goes
    greenmail.delete("invoice@example.org", mailbox)
    sync = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert sync["removed"] == 1
    assert api.get("/entry", params={"id": found["Invoice 118"]["id"]}).status_code == 404

    # disconnect, forgetting the mirrors
    gone = api.post("/integrations/disconnect", json={"id": integration["id"], "forget_mirrors": True}).json()
    assert gone == {"ok": True, "id": integration["id"], "disconnected": True, "forgotten": 2}
    assert mirrors(api) == {}


def test_wrong_credentials_or_a_plain_connection_are_refused_before_connecting(api, greenmail, mailbox):
    greenmail.append(message("Hello", "hi"), mailbox)
    wrong = connect(api, greenmail.settings(mailbox) | {"password": "not it"})
    assert wrong.status_code == 400 and "refused the user name or password" in wrong.json()["error"], wrong.text
    missing = connect(api, greenmail.settings("no-such-folder"))
    assert missing.status_code == 400 and "no folder 'no-such-folder'" in missing.json()["error"]
    plain = connect(api, greenmail.settings(mailbox) | {"host": "imap.example.org"})
    assert plain.status_code == 400 and "over TLS only" in plain.json()["error"]
    assert api.get("/integrations").json()["integrations"] == []


def test_a_folder_in_any_script_and_a_malformed_message_are_read_and_odd_settings_refused(api, greenmail):
    folder = "Büro ✓ 日本"  # IMAP names it in modified UTF-7
    broken = (b"Subject: Quarterly report\r\nTo: bob@\r\nFrom: Carol <carol@example.org>\r\n"
              b"Message-ID: <broken@example.org>\r\nContent-Type: text/plain; charset=no-such-charset\r\n\r\n"
              b"Revenue grew 12 percent.\r\n")
    greenmail.append(broken, folder)
    connected = connect(api, greenmail.settings(folder))
    assert connected.status_code == 200, connected.text
    assert connected.json()["sync"]["created"] == 1 and connected.json()["sync"]["error"] is None
    [row] = mirrors(api).values()
    assert row["content"].startswith("Quarterly report") and "Revenue grew 12 percent." in row["content"]
    # a line break in a setting would be another IMAP command; a setting the mailbox does not read is refused
    injected = connect(api, greenmail.settings("INBOX\r\nA1 DELETE INBOX"))
    assert injected.status_code == 400 and "control characters" in injected.json()["error"]
    stray = connect(api, greenmail.settings(folder) | {"token": "kept in clear otherwise"})
    assert stray.status_code == 400 and "takes no token" in stray.json()["error"]
    assert len(api.get("/integrations").json()["integrations"]) == 1


def test_over_tls_the_password_is_sealed_and_erased_at_disconnect(tmp_path, greenmail, mailbox):
    greenmail.append(message("Quarterly numbers", "Revenue grew 12 percent."), mailbox)
    # a `brain serve` process that trusts the test CA (Python's default context reads SSL_CERT_FILE)
    server = Server(tmp_path / "brain", in_process=False,
                    env={"BRAIN_PUSH_ALLOW_LOOPBACK": "true", "BRAIN_WATCH_FOLDERS": "false",
                         "SSL_CERT_FILE": str(greenmail.ca_file)}).start()
    try:
        with server.client() as api:
            settings = greenmail.settings(mailbox) | {"security": "tls", "port": str(greenmail.imaps_port)}
            connected = connect(api, settings)
            assert connected.status_code == 200, connected.text
            assert connected.json()["sync"]["created"] == 1
            integration = connected.json()["integration"]["id"]
            # in no file of the brain in the clear: not the log, not the secrets folder
            assert not any(PASSWORD.encode() in path.read_bytes() for path in files(tmp_path / "brain"))
            assert list((tmp_path / "brain" / "secrets").iterdir())
            gone = api.post("/integrations/disconnect", json={"id": integration})
            assert gone.status_code == 200
            assert list((tmp_path / "brain" / "secrets").iterdir()) == []
    finally:
        server.stop()


def files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()]


def test_a_sync_killed_halfway_is_finished_by_the_next_without_a_duplicate(tmp_path, greenmail, mailbox):
    total = 300
    greenmail.append_all([message(f"Standup notes {n:03}", f"Item {n}: shipped the {n}th fix.")
                          for n in range(total)], mailbox)
    env = {"BRAIN_PUSH_ALLOW_LOOPBACK": "true", "BRAIN_WATCH_FOLDERS": "false"}
    kill_mid_sync(tmp_path / "brain", env, lambda api: connect(api, greenmail.settings(mailbox)))
    subjects = resume(tmp_path / "brain", env, total, "email-imap")
    assert sorted(subjects) == [f"Standup notes {n:03}" for n in range(total)]  # each once
