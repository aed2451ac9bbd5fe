"""A real CalDAV server for tests: Radicale (a dev dependency) as its own process on a free 127.0.0.1 port, with its
collections in a temporary folder and one user in a plain-text htpasswd file. The test makes calendars and puts,
changes and deletes events over plain HTTP (MKCALENDAR, PUT, DELETE), as any CalDAV client would."""

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx

USER, PASSWORD = "alice", "correct horse battery staple"


class Radicale:
    def __init__(self, user: str = USER, password: str = PASSWORD) -> None:
        self.user, self.password = user, password
        self.home = Path(tempfile.mkdtemp(prefix="radicale-"))
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._log: IO[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def calendar_url(self, name: str) -> str:
        return f"{self.url}/{self.user}/{name}/"

    def start(self, timeout: float = 20) -> "Radicale":
        """Start Radicale and wait until it answers; a port another process took meanwhile is tried again."""
        (self.home / "users").write_text(f"{self.user}:{self.password}\n")
        self._log = open(self.home / "radicale.log", "w")  # noqa: SIM115 (closed at stop)
        for _ in range(5):
            self.port = _free_port()
            self.process = subprocess.Popen(
                [sys.executable, "-m", "radicale", "--config", str(self._config())],
                stdout=subprocess.DEVNULL, stderr=self._log)
            if self._answers(timeout):
                return self
            self._end()
        log = (self.home / "radicale.log").read_text()[-3000:]
        self.stop()
        raise RuntimeError(f"Radicale did not start: {log}")

    def _answers(self, timeout: float) -> bool:
        """Whether Radicale (not another server that had the port) answers within `timeout` seconds."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                answer = httpx.request("OPTIONS", self.url + "/", timeout=1)
            except httpx.TransportError:
                time.sleep(0.05)
                continue
            return "calendar-access" in answer.headers.get("dav", "") and self.process.poll() is None
        return False

    def _config(self) -> Path:
        config = self.home / "config"
        config.write_text("\n".join([
            "[server]", f"hosts = 127.0.0.1:{self.port}", "delay_on_error = 0",
            "[auth]", "type = htpasswd", f"htpasswd_filename = {self.home / 'users'}", "htpasswd_encryption = plain",
            "delay = 0",  # a wrong password answered at once (the default waits a second)
            "[rights]", "type = owner_only",
            "[storage]", f"filesystem_folder = {self.home / 'collections'}",
            "[web]", "type = none",
            "[logging]", "level = error", ""]))
        return config

    def stop(self) -> None:
        self._end()
        if self._log is not None:
            self._log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def _end(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    # --- what a CalDAV client does ---

    def client(self) -> httpx.Client:
        return httpx.Client(auth=(self.user, self.password), timeout=10)

    def make_calendar(self, name: str, display_name: str, components: str = "VEVENT") -> str:
        """A calendar collection (MKCALENDAR) named `display_name`, holding `components`; its URL."""
        body = ('<?xml version="1.0" encoding="utf-8"?>'
                '<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
                f"<D:displayname>{display_name}</D:displayname>"
                f'<C:supported-calendar-component-set><C:comp name="{components}"/>'
                "</C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>")
        url = self.calendar_url(name)
        with self.client() as client:
            made = client.request("MKCALENDAR", url, content=body,
                                  headers={"Content-Type": "application/xml; charset=utf-8"})
        assert made.status_code == 201, made.text
        return url

    def put(self, calendar: str, name: str, ics: str) -> str:
        """Put (create or replace) the event resource `name`.ics in the calendar at `calendar`; its URL."""
        url = f"{calendar}{name}.ics"
        with self.client() as client:
            put = client.put(url, content=ics.encode(), headers={"Content-Type": "text/calendar; charset=utf-8"})
        assert put.status_code in (201, 204), put.text
        return url

    def delete(self, calendar: str, name: str) -> None:
        with self.client() as client:
            deleted = client.delete(f"{calendar}{name}.ics")
        assert deleted.status_code in (200, 204), deleted.text


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
