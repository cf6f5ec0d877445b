"""Process, socket, secret, port and lock helpers of the embedded FalkorDB (see falkordb_server.py)."""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import socket
import tempfile
import time
from pathlib import Path
from typing import Iterator

from memoryx.errors import StoreUnavailableError

HOST = "127.0.0.1"
#: Bolt ports (tests only) are picked below 32768: FalkorDB 4.16 reads BOLT_PORT into an int16_t, and a
#: port above 32767 silently disables Bolt.
PORT_RANGE = (20000, 32767)
MAX_BOLT_PORT = 32767
#: AF_UNIX paths are limited to 108 bytes including the NUL
MAX_SOCKET_PATH = 100
PRIVATE_SOCKET_PREFIX = "memoryx-falkordb-"  # a socket directory of the temp dir, when the data dir's path is too long
ADVICE = (
    "The embedded graph (MEMORYX_GRAPH_BACKEND=falkordb) runs under MEMORYX_DATA_DIR/falkordb; choose "
    "MEMORYX_GRAPH_BACKEND=neo4j (and MEMORYX_NEO4J_URL) or MEMORYX_GRAPH_BACKEND=none otherwise."
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


def free_port(exclude: frozenset[int] | set[int] = frozenset()) -> int:
    """A free port below 32768 (FalkorDB keeps BOLT_PORT in an int16; Linux's ephemeral range starts at
    32768, so ports here are also unlikely to be grabbed by outgoing connections in between)."""
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randint(PORT_RANGE[0], PORT_RANGE[1])
        if port not in exclude and port_free(port):
            return port
    raise StoreUnavailableError("Could not find a free TCP port for the embedded FalkorDB. " + ADVICE)


def socket_ping(path: str, password: str, timeout: float = 1.0) -> None:
    """AUTH + PING over the unix socket; raises (redis errors, OSError) until the server answers PONG."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis(unix_socket_path=path, password=password, socket_timeout=timeout,
                         socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
    try:
        if client.ping() is not True:
            raise RuntimeError("no PONG")
    finally:
        client.close()


def read_or_create_secret(path: Path) -> str:
    """The server password kept in `path` (mode 0600), created random on first use."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)  # copied around with looser rights: tighten before trusting it
        secret = path.read_text(encoding="ascii").strip()
        if secret:
            return secret
        os.chmod(path, 0o600)
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    secret = secrets.token_urlsafe(32)  # [A-Za-z0-9_-]: no quoting anywhere
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(secret + "\n")
    return secret


def socket_path_for(directory: Path) -> Path:
    """``<directory>/falkordb.sock``, or, when that path is too long for AF_UNIX, a socket in a new private
    (0700) directory of the system's runtime/temp dir (recorded in server.json by the caller)."""
    wanted = directory / "falkordb.sock"
    if len(os.fsencode(wanted)) <= MAX_SOCKET_PATH:
        return wanted
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix=PRIVATE_SOCKET_PREFIX, dir=base)) / "falkordb.sock"


def is_private_socket_dir(path: Path) -> bool:
    """`path` is a directory `socket_path_for` made for a socket, not a data directory's own folder: only such a
    directory may be removed when a server.json names it (a data directory copied elsewhere names the original's
    folder, which belongs to the original)."""
    return path.name.startswith(PRIVATE_SOCKET_PREFIX)


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
