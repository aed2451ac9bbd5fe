"""A mailbox over IMAP (a "brain" label, a forwarding address's inbox, any folder): each message one mirror.

A message's mirror reads as its subject, sender, recipients and date, the names of its attachments (never their
contents), and its plain-text body without the quoted history below it or the signature after it (an HTML-only
message is read as its text). Its link back is an IMAP URL (RFC 5092) naming the folder, its UIDVALIDITY and the
message's UID. A message is named by its Message-ID, so the same message found again (moved back, appended again
by a client that saves drafts that way) keeps its mirror; replies link to the messages they answer (In-Reply-To and
References), so a thread reads as linked memories.

A message never changes in IMAP, so a sync fetches only what it has not mirrored: it lists the folder's UIDs with
each Message-ID (headers only), and reads whole only the messages whose mirror was not synced from that UID (the
item's version: UIDVALIDITY.UID),
at most the run's budget of them (the rest are listed `later`, for the next run). A message gone from the folder
(deleted, expunged, moved out) has its mirror removed; a folder whose UIDVALIDITY changed is read again whole.

The server is reached over TLS (port 993, or STARTTLS), connected to an address checked as it connects (no
private, loopback or metadata address: the guarded client's rule, adapters/http/guarded.py), and read only
(EXAMINE: no flag is set, nothing is marked read). A plain connection is refused, but for a test's server on
loopback.

Its mirrors' source names the provider, from the IMAP host (`email-gmail`, `email-outlook`, else `email-imap`).
"""

import base64
import email
import email.policy
import imaplib
import logging
import re
import socket
import ssl
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime
from html.parser import HTMLParser
from urllib.parse import quote

from ...domain.errors import InvalidInput, StoreUnavailable
from ...domain.integrations import ConnectForm, ConnectorSpec, Field
from ...domain.push import on_internet
from ...domain.text import MAX_CONTENT_CHARS, shorten
from ...ports.integrations import Item, Synced
from ...settings import Settings
from ..http.guarded import resolve

log = logging.getLogger("second_brain.integrations.mail")

TIMEOUT = 30.0
# Messages fetched whole per FETCH command: as many as fit in FETCH_BYTES by the sizes the listing gave (each counted
# up to MAX_MESSAGE_BYTES, the most read of one), at most FETCH_MOST; 50 at a time where a server gives no sizes. A
# command costs a round trip, and some servers a pass over the folder (GreenMail: 1.35 s at 10,000 messages, for one
# message or 500).
FETCH_BYTES = 16_000_000
FETCH_MOST = 500
BATCH = 50
MAX_MESSAGE_BYTES = 2_000_000  # read of a message: its text comes first; a larger attachment is named, not read
SECURITY = ("tls", "starttls", "none")
MESSAGE_ID = re.compile(r"<([^<>\s]+)>")
# Where quoted history starts: "On <date>, <name> wrote:" (Gmail, Apple Mail), Outlook's header block or separator.
QUOTE_STARTS = [
    re.compile(r"^\s*On .{0,200}wrote:\s*$", re.IGNORECASE),
    re.compile(r"^\s*Le .{0,200}a écrit\s*:\s*$", re.IGNORECASE),
    re.compile(r"^\s*Am .{0,200}schrieb .{0,100}:\s*$", re.IGNORECASE),
    re.compile(r"^\s*-{2,}\s*Original Message\s*-{2,}\s*$", re.IGNORECASE),
    re.compile(r"^\s*-{2,}\s*Forwarded message\s*-{2,}\s*$", re.IGNORECASE),
    re.compile(r"^\s*_{10,}\s*$"),
    re.compile(r"^\s*From:\s.+$"),  # Outlook: From:/Sent:/To: above the quoted message, checked with the next line
]
SIGNATURE_STARTS = [
    re.compile(r"^-- ?$"),  # the RFC 3676 delimiter
    re.compile(r"^\s*Sent from my \w+", re.IGNORECASE),
    re.compile(r"^\s*Get Outlook for \w+", re.IGNORECASE),
]

SPEC = ConnectorSpec(
    kind="imap", title="Mailbox (IMAP)", source="email", provider_from="host",
    fields=(
        Field("host", "IMAP server", "the IMAP server's name, e.g. imap.gmail.com", required=True,
              placeholder="imap.gmail.com"),
        Field("username", "User name", "the user name", required=True, placeholder="me@example.com"),
        Field("password", "Password (an app password)", "the password, or an app password", required=True,
              secret=True, format="password"),
        Field("mailbox", "Folder or label", "the folder or label to mirror (INBOX if not given)", placeholder="INBOX"),
        Field("security", "Connection", "tls (the default) or starttls; none only for a test server on loopback",
              choices=tuple(zip(SECURITY, ("TLS (port 993)", "STARTTLS (port 143)", "Unencrypted (test servers only)"),
                                strict=True))),
        Field("port", "Port (if not the usual one)", "its port, if not 993 (tls) or 143", pattern="^[0-9]{1,5}$",
              format="numeric", placeholder="993"),
    ),
    form=ConnectForm("Connect a mailbox", "Connect mailbox",
                     "A mail folder or label over IMAP (a \"brain\" label, a forwarding address's inbox). Each "
                     "message becomes a memory: its own words without the quoted history or signature, attachments "
                     "named but not stored. The mailbox is only read: nothing is marked read or moved. For Gmail, use "
                     "an app password.", name="Mail", name_placeholder="Brain label"))


class Mailbox:
    spec = SPEC  # reaches a mail server on the internet only: anyone may connect one

    def __init__(self, allow_loopback: bool = False, resolver: Callable[[str], Sequence[str]] = resolve) -> None:
        self.allow_loopback = allow_loopback
        self.resolver = resolver

    def check(self, settings: Mapping[str, str]) -> None:
        host, port, security = _server(settings, self.allow_loopback)
        for name in ("username", "password"):
            if not settings.get(name, ""):
                raise InvalidInput(f"A mailbox needs settings.{name}")
        with self._session(settings, InvalidInput) as imap:
            folder = settings.get("mailbox", "") or "INBOX"
            status, answer = imap.select(imap_folder(folder), readonly=True)
            if status != "OK":
                raise InvalidInput(f"{shorten(host)} has no folder {shorten(folder)!r} (for a Gmail label, its name: "
                                   "e.g. brain)")

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        folder = settings.get("mailbox", "") or "INBOX"
        with self._session(settings, StoreUnavailable) as imap:
            status, answer = imap.select(imap_folder(folder), readonly=True)
            if status != "OK":
                raise StoreUnavailable(f"The folder {folder!r} is no longer on {settings.get('host')}")
            validity = _untagged_number(imap, "UIDVALIDITY")
            listed = _listing(imap) if _count(answer) else []
            base = _base_url(settings, folder, validity)
            wanted: list[tuple[int, str]] = []  # (uid, external id) to fetch whole, oldest first
            sizes = {uid: size for uid, _, size in listed}
            seen: set[str] = set()
            for uid, message_id, _ in listed:
                # a message without a Message-ID is named by its place (a name no Message-ID can take: `#`)
                external_id = message_id or f"#uid:{validity}:{uid}"
                if external_id in seen:  # the same message twice in the folder: the first is its mirror
                    continue
                seen.add(external_id)
                if synced.version(external_id) == f"{validity}.{uid}":
                    yield Item(external_id, "", unreadable=True)  # mirrored from this very message already
                elif len(wanted) < synced.budget:
                    wanted.append((uid, external_id))
                else:
                    yield Item(external_id, "", later=True)
            for start, batch in enumerate(_batches(wanted, sizes)):
                if start and synced.out_of_time():  # the request's time is spent: the rest at the next sync
                    yield from (Item(external_id, "", later=True) for _, external_id in batch)
                    continue
                bodies = _fetch(imap, [uid for uid, _ in batch])
                for uid, external_id in batch:
                    raw = bodies.get(uid)
                    if raw is None:  # expunged between the listing and the fetch: listed, its mirror stays
                        yield Item(external_id, "", unreadable=True)
                        continue
                    try:
                        yield message_item(external_id, raw, f"{base};UID={uid}", f"{validity}.{uid}")
                    except Exception as e:  # noqa: BLE001 - one malformed message is its own, said in words
                        log.warning("message %s of %s cannot be read: %s", uid, folder, type(e).__name__)
                        yield Item(external_id, "", failed=f"this message cannot be read ({type(e).__name__})")

    def _session(self, settings: Mapping[str, str],
                 error: type[InvalidInput] | type[StoreUnavailable]) -> "_Session":
        host, port, security = _server(settings, self.allow_loopback)
        try:
            addresses = list(self.resolver(host))
        except (OSError, UnicodeError) as e:
            raise error(f"The mail server {host} does not resolve") from e
        if not on_internet(addresses, self.allow_loopback):
            raise error(f"The mail server {host} resolves to an address on this machine or its network, and the "
                        "brain reaches only mail servers on the internet")
        return _Session(host, port, security, addresses, settings.get("username", ""),
                        settings.get("password", ""), error)


def connector(settings: Settings) -> Mailbox:
    return Mailbox(allow_loopback=settings.push_allow_loopback)  # the tests' servers are on loopback


class _Session:
    """A logged-in, read-only IMAP connection for one `with` block; every failure raised as `error`, in words."""

    def __init__(self, host: str, port: int, security: str, addresses: Sequence[str], username: str, password: str,
                 error: type[InvalidInput] | type[StoreUnavailable]) -> None:
        self.host, self.port, self.security, self.addresses = host, port, security, addresses
        self.username, self.password, self.error = username, password, error
        self.imap: _PinnedIMAP | None = None

    def __enter__(self) -> imaplib.IMAP4:
        try:
            imap = _PinnedIMAP(self.host, self.port, self.addresses, self.security)
        except (OSError, imaplib.IMAP4.error) as e:
            raise self.error(f"The mail server {self.host}:{self.port} cannot be reached ({_said(e)})") from e
        self.imap = imap
        try:
            if self.security == "starttls":
                imap.starttls(ssl.create_default_context())
        except (imaplib.IMAP4.error, OSError, ssl.SSLError) as e:
            self._close()
            raise self.error(f"The mail server {self.host} did not start TLS on port {self.port} ({_said(e)}): "
                             "try security tls on port 993") from e
        try:
            if (self.username + self.password).isascii():
                imap.login(self.username, self.password)
            else:  # LOGIN carries ASCII only; SASL PLAIN carries UTF-8 (RFC 4616)
                plain = f"\0{self.username}\0{self.password}".encode()
                imap.authenticate("PLAIN", lambda challenge: plain)
        except imaplib.IMAP4.error as e:
            self._close()
            raise self.error(f"{self.host} refused the user name or password ({_said(e)})") from e
        except (OSError, ssl.SSLError) as e:
            self._close()
            raise self.error(f"The mail server {self.host} cannot be reached securely ({_said(e)})") from e
        return imap

    def __exit__(self, kind: object, value: BaseException | None, traceback: object) -> None:
        self._close()
        if isinstance(value, (imaplib.IMAP4.error, OSError, UnicodeError)) and not isinstance(
                value, (InvalidInput, StoreUnavailable)):
            raise self.error(f"Reading the mailbox on {self.host} failed ({_said(value)})") from value

    def _close(self) -> None:
        if self.imap is not None:
            try:
                self.imap.logout()
            except (OSError, imaplib.IMAP4.error):
                pass
            self.imap = None


class _PinnedIMAP(imaplib.IMAP4):
    """imaplib's client, its socket opened to an address checked beforehand (one lookup, so a name re-pointed
    after the check is never connected to); TLS still names the host."""

    def __init__(self, host: str, port: int, addresses: Sequence[str], security: str) -> None:
        self._addresses = addresses
        self._tls = ssl.create_default_context() if security == "tls" else None
        super().__init__(host, port, timeout=TIMEOUT)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        failure: OSError | None = None
        for address in self._addresses:
            try:
                sock = socket.create_connection((address, self.port), timeout)
            except OSError as e:
                failure = e
                continue
            return self._tls.wrap_socket(sock, server_hostname=self.host) if self._tls else sock
        raise failure or OSError("no address")


def _server(settings: Mapping[str, str], allow_loopback: bool) -> tuple[str, int, str]:
    host = settings.get("host", "").strip().lower()
    if not host or not re.fullmatch(r"[a-z0-9.-]{1,253}|\[?[0-9a-f:.]+\]?", host):
        raise InvalidInput("A mailbox needs settings.host: its IMAP server's name (e.g. imap.gmail.com)")
    security = settings.get("security", "").strip().lower() or "tls"
    if security not in SECURITY:
        raise InvalidInput("settings.security must be tls (port 993), starttls (port 143) or none")
    if security == "none" and not (allow_loopback and host in ("127.0.0.1", "localhost")):
        raise InvalidInput("A mailbox is read over TLS only (settings.security tls or starttls): a plain connection "
                           "would send its password in the clear")
    raw_port = settings.get("port", "").strip() or ("993" if security == "tls" else "143")
    if not raw_port.isdigit() or not 0 < int(raw_port) < 65536:
        raise InvalidInput(f"settings.port must be a port number: {shorten(str(raw_port))}")
    return host, int(raw_port), security


def imap_folder(folder: str) -> str:
    """A folder's name as IMAP names it: modified UTF-7 (RFC 3501 5.1.3: `Büro` is `B&APw-ro`), quoted."""
    encoded: list[str] = []
    run: list[str] = []

    def shift() -> None:
        if run:
            raw = "".join(run).encode("utf-16-be")
            encoded.append("&" + base64.b64encode(raw).decode().rstrip("=").replace("/", ",") + "-")
            run.clear()

    for char in folder:
        if 0x20 <= ord(char) <= 0x7E:
            shift()
            encoded.append("&-" if char == "&" else char)
        else:
            run.append(char)
    shift()
    return '"' + "".join(encoded).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _untagged_number(imap: imaplib.IMAP4, name: str) -> int:
    _, values = imap.response(name)
    try:
        return int(values[0]) if values and values[0] is not None else 0
    except (TypeError, ValueError):
        return 0


def _count(answer: list[bytes | None]) -> int:
    """The messages in the folder, as SELECT (EXAMINE) answered."""
    try:
        return int(answer[0] or 0)
    except (TypeError, ValueError, IndexError):
        return 1  # not said: list it and see


def _listing(imap: imaplib.IMAP4) -> list[tuple[int, str, int | None]]:
    """Every message in the folder: (UID, Message-ID or "", its size if the server said it), by UID. Headers only
    (BODY.PEEK: nothing marked read), in one FETCH over the whole folder (its answer comes a line a message, where
    SEARCH's is one line)."""
    status, answer = imap.uid("FETCH", "1:*", "(UID RFC822.SIZE BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
    if status != "OK":
        raise StoreUnavailable("The mail server did not list the folder's messages")
    return sorted((uid, _message_id(body.decode("utf-8", "replace")), size)
                  for uid, (body, size) in _described(answer).items())


def _batches(wanted: list[tuple[int, str]], sizes: Mapping[int, int | None]) -> Iterator[list[tuple[int, str]]]:
    """The messages to fetch in as few commands as FETCH_BYTES allows (a message larger than it alone); 50 to a
    command once one has no size."""
    batch: list[tuple[int, str]] = []
    held = 0
    for uid, external_id in wanted:
        size = sizes.get(uid)
        weight = FETCH_BYTES // BATCH if size is None else min(size, MAX_MESSAGE_BYTES)
        if batch and (held + weight > FETCH_BYTES or len(batch) == FETCH_MOST):
            yield batch
            batch, held = [], 0
        batch.append((uid, external_id))
        held += weight
    if batch:
        yield batch


def _fetch(imap: imaplib.IMAP4, uids: Sequence[int]) -> dict[int, bytes]:
    """The messages, whole but for what lies past MAX_MESSAGE_BYTES (BODY.PEEK: nothing marked read)."""
    status, answer = imap.uid("FETCH", ",".join(map(str, uids)), f"(UID BODY.PEEK[]<0.{MAX_MESSAGE_BYTES}>)")
    if status != "OK":
        raise StoreUnavailable("The mail server did not give the messages asked for")
    return _fetched(answer)


def _fetched(answer: list[object]) -> dict[int, bytes]:
    """A FETCH answer's literals by UID."""
    return {uid: literal for uid, (literal, _) in _described(answer).items()}


def _described(answer: list[object]) -> dict[int, tuple[bytes, int | None]]:
    """A FETCH answer's literals by UID, each with the RFC822.SIZE said beside it (None if not). A server may name
    them before the literal (in its tuple's first part) or after it (in the bytes imaplib gives next): both are
    read."""
    found: dict[int, tuple[bytes, int | None]] = {}
    for index, part in enumerate(answer):
        if not isinstance(part, tuple) or len(part) < 2 or not isinstance(part[1], bytes):
            continue
        after = answer[index + 1] if index + 1 < len(answer) else b""
        said = part[0] + b" " + after if isinstance(part[0], bytes) and isinstance(after, bytes) else part[0]
        uid = _number_after(said, b"UID") if isinstance(said, bytes) else None
        if uid is not None:
            found[uid] = (part[1], _number_after(said, b"RFC822.SIZE"))
    return found


def _number_after(line: bytes, name: bytes) -> int | None:
    found = re.search(rb"(?<![\w.])" + re.escape(name) + rb" (\d+)", line)
    return int(found.group(1)) if found else None


def _message_id(headers: str) -> str:
    value = re.sub(r"\r?\n[ \t]+", " ", headers)
    found = re.search(r"^message-id:\s*(.*)$", value, re.IGNORECASE | re.MULTILINE)
    if not found:
        return ""
    inner = MESSAGE_ID.search(found.group(1))
    return inner.group(1) if inner else found.group(1).strip()[:250]


def _base_url(settings: Mapping[str, str], folder: str, validity: int) -> str:
    """RFC 5092's IMAP URL of the folder (a message's adds `;UID=<uid>`)."""
    user = quote(settings.get("username", ""), safe="")
    host, port, security = settings.get("host", "").strip().lower(), settings.get("port", "").strip(), \
        settings.get("security", "").strip().lower() or "tls"
    default = "993" if security == "tls" else "143"
    netloc = f"{user}@{host}" + (f":{port}" if port and port != default else "")
    return f"imap://{netloc}/{quote(folder)};UIDVALIDITY={validity}/"


def message_item(external_id: str, raw: bytes, url: str, version: str = "") -> Item:
    """A message as its mirror reads it."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    subject = _header(message, "subject") or "(no subject)"
    lines = [subject, "", f"From: {_people(message, 'from')}"]
    if to := _people(message, "to"):
        lines.append(f"To: {to}")
    if when := _date(message):
        lines.append(f"Date: {when}")
    if attached := _attachments(message):
        lines.append("Attachments: " + ", ".join(attached))
    body = _body(message)
    if body:
        lines += ["", body]
    replied = [*MESSAGE_ID.findall(_header(message, "in-reply-to")),
               *MESSAGE_ID.findall(_header(message, "references"))]
    links = tuple(dict.fromkeys(m for m in replied if m != external_id))
    return Item(external_id, "\n".join(lines).strip()[:MAX_CONTENT_CHARS], ("email",), url, links, version=version,
                said_at=_sent_at(message))


def _header(message: EmailMessage, name: str) -> str:
    """A header's value on one line; as the message wrote it when the parser cannot make sense of it (`To: bob@`)."""
    try:
        value = str(message.get(name) or "")
    except Exception:  # noqa: BLE001 - the email package's header parsers raise more than ValueError
        value = next((str(v) for k, v in message.raw_items() if k.lower() == name), "")
    return " ".join(value.split())


def _people(message: EmailMessage, name: str) -> str:
    shown = []
    for display, address in getaddresses([_header(message, name)]):
        if address or display:
            shown.append(f"{display} <{address}>" if display and address else address or display)
    return ", ".join(shown[:20]) + (f" and {len(shown) - 20} more" if len(shown) > 20 else "")


def _sent(message: EmailMessage) -> datetime | None:
    """The message's Date, aware (a date without a zone read as UTC); None when it has none that parses."""
    try:
        moment = parsedate_to_datetime(_header(message, "date"))
    except (TypeError, ValueError, IndexError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _date(message: EmailMessage) -> str:
    moment = _sent(message)
    return moment.strftime("%Y-%m-%d %H:%M %z") if moment else ""


def _sent_at(message: EmailMessage) -> int | None:
    moment = _sent(message)
    return int(moment.timestamp() * 1000) if moment else None


def _attachments(message: EmailMessage) -> list[str]:
    named = []
    for part in message.walk():
        if part.is_multipart():
            continue
        filename = part.get_filename()
        if filename or part.get_content_disposition() == "attachment":
            named.append(" ".join(str(filename or f"unnamed {part.get_content_type()}").split())[:200])
    return named


def _body(message: EmailMessage) -> str:
    """The message's own words: its plain text (else its HTML as text), without quoted history or signature."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # an unknown charset, a broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    text = _html_text(content) if part.get_content_type() == "text/html" else content
    return own_words(text)


def own_words(text: str) -> str:
    """The text above the quoted history and the signature: a line that starts either ends it; `>` lines go."""
    lines = text.replace("\r\n", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        if any(p.match(line) for p in SIGNATURE_STARTS):
            break
        if any(p.match(line) for p in QUOTE_STARTS):
            if not line.lstrip().startswith("From:") or _outlook_header(lines[index + 1:index + 4]):
                break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _outlook_header(following: list[str]) -> bool:
    return any(re.match(r"^\s*(Sent|Date|To|Subject):\s", line) for line in following)


class _Text(HTMLParser):
    """An HTML body's text, blocks on lines of their own, without what a reader does not see (scripts, styles) or
    the quoted message below (a <blockquote>, Gmail's `gmail_quote`, Thunderbird's `moz-cite-prefix`)."""

    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table"}
    VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "col", "area", "base", "source"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.open: list[tuple[str, bool]] = []  # each open element, and whether it hides what it holds

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = dict(attrs).get("class") or ""
        hides = (tag in ("script", "style", "head", "title", "blockquote")
                 or "gmail_quote" in classes or "moz-cite-prefix" in classes)
        if tag not in self.VOID:
            self.open.append((tag, hides))
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.open) - 1, -1, -1):  # closes the nearest open one (and what it left open)
            if self.open[depth][0] == tag:
                del self.open[depth:]
                break
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not any(hides for _, hides in self.open):
            self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _said(error: BaseException) -> str:
    text = str(error.args[0] if error.args else error)
    if text.startswith("b'") or text.startswith('b"'):
        text = text[2:-1]
    return " ".join(text.split())[:200] or type(error).__name__
