"""Tie a child server's life to its owner process: it dies when the owner dies, however the owner dies.

* **kill -9 of the owner**: the child is started through a two-line Python prefix that sets
  ``PR_SET_PDEATHSIG`` (Linux) and then ``exec``s the server, so the kernel sends the child SIGTERM when its
  parent goes away (the server shuts down cleanly). PDEATHSIG fires when the *thread* that forked exits,
  not the process, so children are forked from one launcher thread that lives as long as the process
  (a server started from a short-lived worker thread, like anyio's, would otherwise die with that thread).
  The prefix is used instead of ``preexec_fn`` because code run between fork and exec in a threaded
  process can deadlock.
* **SIGTERM / SIGINT of the owner**: `install_signal_handlers` stops the registered servers and then
  chains to the handler that was there before (uvicorn's own handlers save and restore ours and re-raise
  the signal after its graceful shutdown, so `memoryx serve` ends up here too). A SIGINT that Python turns
  into KeyboardInterrupt is only chained: the program may catch it and go on with its graph; if it ends,
  the atexit hook stops the server.
* **normal exit**: the owner registers an atexit hook (`EmbeddedFalkorDB` does).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import weakref
from typing import Any, Callable

log = logging.getLogger(__name__)

#: exec'd in the child before the server: ask for SIGTERM when the parent dies, give up if it already has
_PDEATHSIG_PREFIX = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGTERM)\n"  # 1 = PR_SET_PDEATHSIG
    "os.getppid() == int(sys.argv[1]) or sys.exit(70)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)
_launcher: concurrent.futures.ThreadPoolExecutor | None = None
_launcher_lock = threading.Lock()


def _launcher_pool() -> concurrent.futures.ThreadPoolExecutor:
    """One worker thread that never exits before the process does (see the module docstring)."""
    global _launcher
    with _launcher_lock:
        if _launcher is None:
            _launcher = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                              thread_name_prefix="memoryx-server-launcher")
        return _launcher


def spawn_tied_to_owner(cmd: list[str], **popen: Any) -> subprocess.Popen:
    """`subprocess.Popen(cmd, **popen)` whose process gets SIGTERM when this process dies (Linux).

    The returned process's pid is the server's own (the prefix execs it in place)."""
    if sys.platform.startswith("linux"):
        cmd = [sys.executable, "-I", "-S", "-c", _PDEATHSIG_PREFIX, str(os.getpid()), *cmd]
    else:  # pragma: no cover - no parent-death signal: only close(), signals and atexit stop the server
        log.debug("no parent-death signal on %s: the server outlives a killed owner", sys.platform)
    if threading.current_thread().name.startswith("memoryx-server-launcher"):
        return subprocess.Popen(cmd, **popen)
    return _launcher_pool().submit(subprocess.Popen, cmd, **popen).result()


# ----------------------------------------------------------------------------------------------- signals

#: objects to stop when the process is told to terminate: each has ``stop_now()``
_stoppable: "weakref.WeakSet[Any]" = weakref.WeakSet()
_previous: dict[int, Any] = {}


def stop_on_termination(owner: Any) -> None:
    """Call ``owner.stop_now()`` on SIGTERM / SIGINT of this process (handlers installed when possible)."""
    _stoppable.add(owner)
    install_signal_handlers()


def forget(owner: Any) -> None:
    _stoppable.discard(owner)


def install_signal_handlers() -> None:
    """Install the chaining handlers once per signal. Only the main thread may install handlers: from
    another thread this does nothing (the atexit hook and the parent-death signal still apply)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        current = signal.getsignal(sig)
        if current is _on_signal:
            continue
        _previous[sig] = current
        try:
            signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # pragma: no cover - embedded interpreters without signals
            _previous.pop(sig, None)


def _on_signal(sig: int, frame: Any) -> None:
    previous = _previous.get(sig)
    keyboard_interrupt = sig == signal.SIGINT and previous is signal.default_int_handler
    if not keyboard_interrupt:
        stop_all_now()
    if callable(previous):
        previous(sig, frame)
        return
    if previous == signal.SIG_IGN:
        return
    # SIG_DFL, or a handler installed outside Python: die of the signal as the process would have
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def stop_all_now() -> None:
    for owner in list(_stoppable):
        with contextlib.suppress(Exception):
            owner.stop_now()


def terminate(pid: int, wait: Callable[[float], bool], timeout: float) -> None:
    """SIGTERM `pid`; SIGKILL it if `wait(timeout)` says it did not exit."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not wait(timeout):
        log.warning("server pid %s did not stop within %.0fs; killing it", pid, timeout)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait(5.0)
