"""Process, port and lock helpers of the embedded FalkorDB (see falkordb_server.py)."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import time
from pathlib import Path
from typing import Iterator

from memoryx.errors import StoreUnavailableError

HOST = "127.0.0.1"
#: Ports chosen when none are configured. FalkorDB 4.16 reads BOLT_PORT into an int16_t: a Bolt port above
#: 32767 silently disables Bolt, so ports are picked below 32768.
PORT_RANGE = (20000, 32767)
MAX_BOLT_PORT = 32767
ADVICE = (
    "Set MEMORYX_FALKORDB_PORT / MEMORYX_FALKORDB_BOLT_PORT to free ports, or choose another graph backend "
    "with MEMORYX_GRAPH_BACKEND=neo4j (and MEMORYX_NEO4J_URL) or MEMORYX_GRAPH_BACKEND=none."
)


def pid_alive(pid: int | None) -> bool:
    """True for a live (non-zombie) process that, where /proc tells, is a redis-server."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    proc = Path(f"/proc/{pid}")
    if proc.exists():
        try:
            stat = (proc / "stat").read_text()
            if stat[stat.rfind(")") + 2:].startswith("Z"):
                return False
            cmdline = (proc / "cmdline").read_bytes()
            return b"redis-server" in cmdline
        except OSError:
            return False
    return True


def owner_alive(pid: int | None) -> bool:
    if not pid or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        text = stat.read_text()
        return not text[text.rfind(")") + 2:].startswith("Z")
    return True


def port_free(port: int) -> bool:
    """Can a server listen on this port? (SO_REUSEADDR like redis and FalkorDB: connections of a killed
    server lingering in TIME_WAIT do not make its port busy.)"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port(exclude: set[int]) -> int:
    """A free port below 32768 (FalkorDB keeps BOLT_PORT in an int16; Linux's ephemeral range starts at
    32768, so ports here are also unlikely to be grabbed by outgoing connections in between)."""
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randint(PORT_RANGE[0], PORT_RANGE[1])
        if port not in exclude and port_free(port):
            return port
    raise StoreUnavailableError("Could not find a free TCP port for the embedded FalkorDB. " + ADVICE)


def redis_ping(port: int, timeout: float = 1.0) -> str:
    """Raw RESP PING; returns the reply line ('+PONG', '-LOADING ...') or raises OSError."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(b"PING\r\n")
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = s.recv(256)
            if not chunk:
                break
            data += chunk
    return data.decode("utf-8", "replace").strip()


@contextlib.contextmanager
def file_lock(path: Path, timeout: float) -> Iterator[None]:
    """Cross-process exclusive lock (fcntl.flock) around the check-then-start sequence."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no cross-process protection
        yield
        return
    with open(path, "a+") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreUnavailableError(
                        f"Timed out after {timeout:.0f}s waiting for another process to start the embedded "
                        f"FalkorDB (lock {path}). " + ADVICE)
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
