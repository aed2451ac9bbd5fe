"""A real IMAP server for the mailbox connector's tests: GreenMail standalone (com.icegreen:greenmail-standalone from
Maven Central, fetched by the Makefile into Maven's local repository), one JVM per test module, on free ports, with
IMAP over TLS (a certificate from a CA made for the run) and plain IMAP on loopback.

Messages are put in place as a mail client does it, over IMAP (APPEND, STORE \\Deleted, EXPUNGE), as the user."""

import datetime
import imaplib
import ipaddress
import shutil
import socket
import ssl
import subprocess
import time
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from second_brain.adapters.integrations.mail import imap_folder

VERSION = "2.1.8"  # the Makefile's GREENMAIL_ARTIFACT
JAR = (Path.home() / ".m2" / "repository" / "com" / "icegreen" / "greenmail-standalone" / VERSION
       / f"greenmail-standalone-{VERSION}.jar")
USER, PASSWORD = "alice@example.com", "correct horse battery staple"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class GreenMail:
    def __init__(self, home: Path, heap: str = "128m", long_lived: bool = False) -> None:
        self.home = home
        self.heap = heap  # the bench's 10,000 messages need more than the tests' few hundred
        # The tests' server is short-lived: C1 only. The bench's answers 10,000 messages for many minutes, and C1
        # alone made it the run's bottleneck (listing the folder, 33 times).
        self.jit = [] if long_lived else ["-XX:TieredStopAtLevel=1"]
        self.imap_port, self.imaps_port = free_port(), free_port()
        self.ca_file = home / "ca.pem"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> "GreenMail":
        if not JAR.exists():
            raise RuntimeError(f"GreenMail is not in Maven's local repository ({JAR}): run `make test`, which "
                               "fetches it (mvn dependency:get com.icegreen:greenmail-standalone)")
        if shutil.which("java") is None:
            raise RuntimeError("GreenMail needs Java 17")
        keystore = self._certificates()
        log = open(self.home / "greenmail.log", "w")  # noqa: SIM115 (closed with the process)
        self.process = subprocess.Popen(
            ["java", f"-Xmx{self.heap}", *self.jit,
             f"-Dgreenmail.imap.port={self.imap_port}",
             "-Dgreenmail.imap.hostname=127.0.0.1",
             f"-Dgreenmail.imaps.port={self.imaps_port}", "-Dgreenmail.imaps.hostname=127.0.0.1",
             f"-Dgreenmail.tls.keystore.file={keystore}", "-Dgreenmail.tls.keystore.password=changeit",
             f"-Dgreenmail.users={USER.split('@')[0]}:{PASSWORD}@{USER.split('@')[1]}",
             "-Dgreenmail.users.login=email", "-jar", str(JAR)],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"GreenMail exited: {(self.home / 'greenmail.log').read_text()[-2000:]}")
            try:
                with imaplib.IMAP4("127.0.0.1", self.imap_port, timeout=2) as imap:
                    imap.login(USER, PASSWORD)
                return self
            except (OSError, imaplib.IMAP4.error):
                time.sleep(0.1)
        self.stop()
        raise TimeoutError("GreenMail did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)

    def settings(self, mailbox: str = "INBOX") -> dict[str, str]:
        """A connection's settings for plain IMAP on loopback (what the test brains allow)."""
        return {"host": "127.0.0.1", "port": str(self.imap_port), "security": "none", "username": USER,
                "password": PASSWORD, "mailbox": mailbox}

    def client(self) -> imaplib.IMAP4:
        imap = imaplib.IMAP4("127.0.0.1", self.imap_port, timeout=10)
        imap.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stall per APPEND
        imap.login(USER, PASSWORD)
        return imap

    def append(self, message: EmailMessage | bytes, mailbox: str = "INBOX") -> None:
        self.append_all([message], mailbox)

    def append_all(self, messages: list[EmailMessage | bytes], mailbox: str = "INBOX") -> None:
        with self.client() as imap:
            if mailbox != "INBOX":
                imap.create(imap_folder(mailbox))  # already there: a NO, left alone
            for message in messages:
                raw = message if isinstance(message, bytes) else message.as_bytes()
                status, _ = imap.append(imap_folder(mailbox), "", imaplib.Time2Internaldate(time.time()), raw)
                assert status == "OK"

    def delete(self, message_id: str, mailbox: str = "INBOX") -> None:
        """Delete and expunge the messages with this Message-ID, as a mail client does."""
        with self.client() as imap:
            imap.select(imap_folder(mailbox))
            _, found = imap.uid("SEARCH", "HEADER", "Message-ID", f"<{message_id}>")
            uids = (found[0] or b"").decode().split()
            assert uids, f"no message {message_id}"
            imap.uid("STORE", ",".join(uids), "+FLAGS", r"(\Deleted)")
            imap.expunge()

    def delete_oldest(self, message_id: str, mailbox: str = "INBOX") -> None:
        """Delete the first of the messages with this Message-ID (a draft saved again: the old copy goes)."""
        with self.client() as imap:
            imap.select(imap_folder(mailbox))
            _, found = imap.uid("SEARCH", "HEADER", "Message-ID", f"<{message_id}>")
            uids = sorted(int(u) for u in (found[0] or b"").decode().split())
            assert len(uids) >= 2, f"only {len(uids)} message {message_id}"
            imap.uid("STORE", str(uids[0]), "+FLAGS", r"(\Deleted)")
            imap.expunge()

    def flags(self, mailbox: str = "INBOX") -> list[str]:
        """Every message's flags (what a read-only sync must leave as it found them)."""
        with self.client() as imap:
            imap.select(imap_folder(mailbox), readonly=True)
            _, answer = imap.fetch("1:*", "(FLAGS)")
            return [line.decode() for line in answer if isinstance(line, bytes)]

    def _certificates(self) -> Path:
        """A CA (its certificate in ca.pem, for the brain to trust through SSL_CERT_FILE) and GreenMail's key
        and certificate for 127.0.0.1 and localhost, in a PKCS#12 keystore."""
        now = datetime.datetime.now(datetime.UTC)
        ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Second Brain tests CA")])

        def certificate(subject: x509.Name, public: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
            return (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(public)
                    .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                    .not_valid_after(now + datetime.timedelta(days=2)))

        ca = (certificate(ca_name, ca_key.public_key())
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
              .sign(ca_key, hashes.SHA256()))
        leaf = (certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), key.public_key())
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        self.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        keystore = self.home / "greenmail.p12"
        keystore.write_bytes(pkcs12.serialize_key_and_certificates(
            b"greenmail", key, leaf, [ca], serialization.BestAvailableEncryption(b"changeit")))
        return keystore

    def trusts(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))


def message(subject: str, body: str, sender: str = "Bob Stone <bob@example.org>", to: str = USER,
            message_id: str | None = None, replying_to: str | None = None, html: str | None = None,
            attachments: dict[str, bytes] | None = None, when: datetime.datetime | None = None) -> EmailMessage:
    made = EmailMessage()
    made["Subject"], made["From"], made["To"] = subject, sender, to
    made["Date"] = format_datetime(when or datetime.datetime(2026, 11, 30, 9, 30, tzinfo=datetime.UTC))
    made["Message-ID"] = f"<{message_id}>" if message_id else make_msgid(domain="example.org")
    if replying_to:
        made["In-Reply-To"] = made["References"] = f"<{replying_to}>"
    made.set_content(body)
    if html:
        made.add_alternative(html, subtype="html")
    for name, data in (attachments or {}).items():
        made.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return made
