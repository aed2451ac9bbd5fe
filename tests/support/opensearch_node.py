"""The test suite's OpenSearch: OPENSEARCH_URL if set, else one in-JVM node built from tests/opensearch-node
(Maven, Java 17) and started on a free port for the run (one node for every pytest-xdist worker)."""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

NODE = Path(__file__).parents[1] / "opensearch-node"
CLASSPATH = ["target/classes", "target/lib/*", "target/knn/*"]
# The JIT's first tier only: the suite asks the node for many small things (an index set made and dropped for each
# test, a few documents, a few searches), and C2's compiling of them cost more CPU than it ever saved. Measured on
# 40 such sets: the node's CPU 42 s -> 19 s (startup 8.6 -> 4.4 s), the work done in 26 -> 16 s.
JVM = ["-Xms512m", "-Xmx512m", "-XX:TieredStopAtLevel=1"]


def build() -> None:
    """`mvn package` once; again only when the pom or the Java source is newer than the build."""
    jar = NODE / "target" / "opensearch-node-1.jar"
    sources = [NODE / "pom.xml", *NODE.glob("src/**/*.java")]
    if jar.exists() and (NODE / "target" / "knn").exists() and all(
            s.stat().st_mtime <= jar.stat().st_mtime for s in sources):
        return
    if shutil.which("mvn") is None or shutil.which("java") is None:
        raise RuntimeError("the OpenSearch test node needs Java 17 and Maven (apt install openjdk-17-jdk maven)")
    subprocess.run(["mvn", "-q", "-B", "package", "-DskipTests"], cwd=NODE, check=True, timeout=1200)


class OpenSearchNode:
    def __init__(self, home: Path) -> None:
        self.home = home
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.startup_seconds = 0.0

    def start(self, timeout: float = 120, pid_file: Path | None = None) -> "OpenSearchNode":
        """Start the node and wait until it is green; `pid_file` gets its process id as soon as it runs."""
        build()
        started = time.monotonic()
        log = open(self.home / "node.log", "w")  # noqa: SIM115 (closed with the process)
        self.process = subprocess.Popen(
            ["java", *JVM, "-cp", os.pathsep.join(CLASSPATH), "secondbrain.OpenSearchNode",
             str(self.home / "node"), str(self.port)],
            cwd=NODE, stdout=log, stderr=subprocess.STDOUT)
        if pid_file is not None:
            pid_file.write_text(str(self.process.pid))
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"the OpenSearch node exited: {(self.home / 'node.log').read_text()[-3000:]}")
            try:
                health = httpx.get(f"{self.url}/_cluster/health", params={"wait_for_status": "green", "timeout": "1s"},
                                   timeout=5)
                if health.status_code == 200 and health.json()["status"] == "green":
                    self.startup_seconds = time.monotonic() - started
                    return self
            except httpx.TransportError:
                time.sleep(0.2)
        self.stop()
        raise TimeoutError("the OpenSearch node did not turn green")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # by its pid: the JVM's shutdown hook closes the node
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)


def stop_pid(pid: int, timeout: float = 30) -> None:
    """Stop a node started by another process of the run (a pytest-xdist worker): SIGTERM, the JVM's shutdown hook
    closes the node; SIGKILL if it is still there after `timeout`."""
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _reaped(pid):
                return
            os.kill(pid, 0)  # ProcessLookupError once it is gone
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
        _reaped(pid)
    except ProcessLookupError:
        pass


def _reaped(pid: int) -> bool:
    """Whether `pid`, a child of this process (a run without workers started the node itself), has exited; False
    for another process's child, which its exit makes vanish on its own."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return False
