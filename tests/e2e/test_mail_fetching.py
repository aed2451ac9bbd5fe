"""How the mailbox connector asks an IMAP server for messages (adapters/integrations/mail.py), against GreenMail:
each command costs a server a pass over the folder (GreenMail: 1.35 s a command at 10,000 messages, whether it asks
for one message or 500) and a round trip over the internet, so the messages a run reads come in as few FETCH
commands as their sizes allow, the sizes the listing gave; a command never asks for more than FETCH_BYTES."""

import re

import pytest

from second_brain.adapters.integrations import mail
from second_brain.ports.integrations import Synced
from tests.support.greenmail import message


@pytest.fixture
def commands(monkeypatch) -> list[str]:
    """The UID FETCH commands the connector sends for whole messages: their UID sets."""
    sent: list[str] = []
    uid = mail.imaplib.IMAP4.uid

    def recording(imap, command, *args):
        if command == "FETCH" and "BODY.PEEK[]" in args[1]:
            sent.append(args[0])
        return uid(imap, command, *args)

    monkeypatch.setattr(mail.imaplib.IMAP4, "uid", recording)
    return sent


def uids(uid_set: str) -> list[int]:
    found: list[int] = []
    for part in uid_set.split(","):
        first, _, last = part.partition(":")
        found += range(int(first), int(last or first) + 1)
    return found


def read(greenmail, mailbox: str) -> list:
    return list(mail.Mailbox(allow_loopback=True).items(greenmail.settings(mailbox), Synced()))


def test_small_messages_come_in_one_command(greenmail, mailbox, commands):
    greenmail.append_all([message(f"Note {n}", f"Short message number {n}.") for n in range(120)], mailbox)
    items = read(greenmail, mailbox)
    assert len(items) == 120 and all(item.content for item in items)
    assert len(commands) == 1 and len(uids(commands[0])) == 120  # it took three commands of 50


def test_a_command_asks_for_no_more_bytes_than_its_bound(greenmail, mailbox, commands, monkeypatch):
    monkeypatch.setattr(mail, "FETCH_BYTES", 100_000)
    body = "A long report paragraph about the harbour crane budget. " * 700  # about 40 KB a message
    greenmail.append_all([message(f"Report {n}", f"{n} {body}") for n in range(10)], mailbox)
    items = read(greenmail, mailbox)
    assert [item.content.split("\n")[0] for item in items] == [f"Report {n}" for n in range(10)]
    sizes = _sizes(greenmail, mailbox)
    asked = [sum(sizes[uid] for uid in uids(uid_set)) for uid_set in commands]
    assert len(commands) == 5 and all(total <= 100_000 for total in asked), asked  # two messages a command
    assert sorted(uid for uid_set in commands for uid in uids(uid_set)) == sorted(sizes)


def test_a_message_larger_than_the_bound_is_still_read_alone(greenmail, mailbox, commands, monkeypatch):
    monkeypatch.setattr(mail, "FETCH_BYTES", 10_000)
    greenmail.append_all([message("Big one", "Words. " * 3000), message("Small one", "A line.")], mailbox)
    items = read(greenmail, mailbox)
    assert [item.content.split("\n")[0] for item in items] == ["Big one", "Small one"]
    assert [len(uids(uid_set)) for uid_set in commands] == [1, 1]


def _sizes(greenmail, mailbox: str) -> dict[int, int]:
    """Each message's size by UID, as the server says them."""
    imap = greenmail.client()
    try:
        imap.select(mail.imap_folder(mailbox), readonly=True)
        status, answer = imap.uid("FETCH", "1:*", "(UID RFC822.SIZE)")
        lines = [line.decode() for line in answer if isinstance(line, bytes)]
        return {int(re.search(r"UID (\d+)", line)[1]): int(re.search(r"RFC822.SIZE (\d+)", line)[1]) for line in lines}
    finally:
        imap.logout()


def test_where_the_server_gives_no_sizes_fifty_go_to_a_command():
    wanted = [(uid, f"<m{uid}@example.org>") for uid in range(1, 121)]
    assert [len(batch) for batch in mail._batches(wanted, {})] == [50, 50, 20]
    sized = {uid: 1_000 for uid in range(1, 121)}
    assert [len(batch) for batch in mail._batches(wanted, sized)] == [120]
