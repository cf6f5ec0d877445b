"""`memoryx` command line.

    memoryx setup                                 # prepare the local encoder once (progress bar)
    memoryx demo                                  # scripted English + Chinese conversation, offline
    memoryx add "I moved to Berlin" --user-id alice
    memoryx search "where do I live?" --user-id alice --json
    memoryx serve --host 127.0.0.1 --port 8000
    memoryx mcp --user-id alice                   # MCP server on stdio
    MEMORYX_URL=http://127.0.0.1:8000 memoryx search "where do I live?" --user-id alice   # through a server

Tables for people, `--json` for scripts. Exit codes: 0 ok, 1 usage or input error, 2 not found,
3 a store is unavailable (e.g. the data directory is held by `memoryx serve`).

Modules: `parser` (commands and options), `commands` (the memory commands), `importer`, `demo`, `setup`, `serve`,
`inputs` (exit codes, usage errors, option parsing), `render` (tables and JSON), `progress`, `remote` (the
REST client used when MEMORYX_URL is set), `mcp` (the stdio MCP server).
Only the standard library is imported at start; MemoryX itself (and torch) load once a command runs, so
`memoryx --help` and usage errors answer at once. The reads (list, get, history, judgments list/show/stats)
open the SQL store alone (memoryx.api.records), without the vector shard, the graph server, the encoder or
LangGraph; `search` opens the stores and the encoder without LangGraph or a chat model
(memoryx.api.searching); `setup` opens no store. The commands that embed (add, search, update) load the encoder
and open the vector shards on threads while they import the rest. The console script (`run`) ends the process
without the interpreter's teardown (memoryx.runtime.process_exit).

May import: server, api and everything below them (the top layer; nothing imports the CLI).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from typing import Sequence

from memoryx.cli.inputs import EXIT_NOT_FOUND, EXIT_UNAVAILABLE, EXIT_USAGE, UsageError, precheck
from memoryx.cli.parser import build_parser

__all__ = ["build_parser", "main", "run"]


def _msg(exc: Exception) -> str:
    """The error's message (NotFoundError is a KeyError: str() would quote it), with its trace id."""
    text = str(exc.args[0]) if exc.args else type(exc).__name__
    trace_id = getattr(exc, "trace_id", None)
    return f"{text} (trace_id={trace_id})" if trace_id else text


def _unavailable_message(exc: Exception) -> str:
    from memoryx.cli.serve import server_hint
    from memoryx.settings import get_settings

    msg = f"Store unavailable: {_msg(exc)}"
    try:
        settings = get_settings()
    except Exception:
        return msg
    return msg + server_hint(settings)


# commands that only read the system of record: embedded, they open SQL alone (memoryx.api.records)
_RECORD_READS = {"list", "get", "history"}
_JUDGMENT_READS = {"list", "show", "stats"}


def _reads_records_only(args) -> bool:
    return args.command in _RECORD_READS or (args.command == "judgments" and args.action in _JUDGMENT_READS)


def _open_memory(args, *, process_ends: bool = False):
    """The memory a command works on: the server at MEMORYX_URL when set (not for `serve`, which is the
    server), else the embedded stores: the SQL store alone for a read, the stores and the encoder without
    LangGraph or a chat model for a search (memoryx.api.searching), every store for the rest. `process_ends`
    (the console script): the garbage collector is paused while the stack imports and the stores open
    (memoryx.runtime.process_start)."""
    if process_ends:
        from memoryx.runtime.process_start import collector_paused

        with collector_paused():
            return _open_memory(args)
    from memoryx.settings import get_settings

    settings = get_settings()
    if settings.url and args.command != "serve":
        from memoryx.cli.remote import RemoteMemory

        return RemoteMemory(settings.url, settings.api_key)
    if _reads_records_only(args):
        from memoryx.api.records import RecordReader

        return RecordReader(settings)
    early = _start_early(settings) if args.command in _ENCODES else None
    try:
        if args.command == "search":
            from memoryx.api.searching import SearchReader

            return SearchReader(settings)
        from memoryx.api.memory import Memory

        return Memory()
    finally:
        if early is not None:
            early.release()


# commands that embed text (the query, the new facts): embedded, they need the local encoder
_ENCODES = {"add", "search", "update"}


def _start_early(settings):
    """Start, on threads, the native work the command needs while it imports the rest (LangGraph, SQLAlchemy):
    the local encoder's ONNX session (~0.3 s) and the embedded vector shards (memoryx.runtime.early_vectors).
    Both are process-wide, so the command's own open reuses them; a failure here is left for that open to
    report. Returns what the caller releases once its stores are open."""
    from memoryx.models.embeddings import LocalMiniLMEmbeddings, make_embeddings
    from memoryx.runtime.early_vectors import EarlyVectors

    dims = settings.embedding_dims
    try:
        embeddings = make_embeddings(settings)
    except Exception:  # a bad setting: reported by the command itself, with its advice
        embeddings = None
    if isinstance(embeddings, LocalMiniLMEmbeddings):
        dims = dims or embeddings.dims
        threading.Thread(target=lambda: _quietly(lambda: embeddings.encoder), name="memoryx-encoder-warmup",
                         daemon=True).start()
    return EarlyVectors(settings, dims)


def _quietly(load) -> None:
    try:
        load()
    except Exception:  # noqa: BLE001 - the command's own load raises it again, where it is reported
        pass


def _check_remote_options(args) -> None:
    from memoryx.settings import get_settings

    if getattr(args, "data_dir", None) and get_settings().url and args.command != "serve":
        raise UsageError("--data-dir names local stores, but MEMORYX_URL sends this command to a server; "
                         "unset MEMORYX_URL to use the local stores.")


def run() -> None:
    """The `memoryx` console script and `python -m memoryx.cli`: `main`, then the process ends without the
    interpreter's teardown (memoryx.runtime.process_exit: threads joined, exit handlers run, output flushed,
    then `os._exit`), which would otherwise add a quarter of a second to every command."""
    code = main(process_ends=True)
    from memoryx.runtime.process_exit import end_process

    end_process(code)


def main(argv: Sequence[str] | None = None, *, process_ends: bool = False) -> int:
    """Run one command; returns its exit code. `process_ends`: the process exits right after (see `run`), so
    the vector shards are flushed, not closed, at the command's close."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    if args.command == "judgments" and not getattr(args, "action", None):
        print("memoryx judgments: choose an action: list, show TRACE_ID, verify TRACE_ID… --result R, stats, report", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "data_dir", None):
        os.environ["MEMORYX_DATA_DIR"] = args.data_dir
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if getattr(args, "verbose", False):
        logging.basicConfig(level=logging.DEBUG)
    else:
        logging.basicConfig(level=logging.WARNING)
        warnings.filterwarnings("ignore")

    from memoryx.errors import InvalidInputError, MemoryXError, NotFoundError, ScopeError, StoreUnavailableError
    from memoryx.settings import get_settings

    get_settings.cache_clear()
    m = None
    try:
        precheck(args)  # usage errors before the (slow) stores open
        _check_remote_options(args)
        if args.command == "setup":  # prepares the models; opens no store
            return args.func(args, None)
        if args.command == "mcp":  # opens the memory on its first tool call
            return args.func(args, lambda: _open_memory(args))
        if args.command == "serve" and args.workers != 1:  # each worker opens the stores itself
            return args.func(args, None)
        # `serve` keeps running: its start is not worth a frozen heap (memoryx.runtime.process_start)
        m = _open_memory(args, process_ends=process_ends and args.command != "serve")
        return args.func(args, m)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except NotFoundError as exc:
        print(f"Not found: {_msg(exc)}\nSee the ids with `memoryx list --user-id <user>` "
              "(or `memoryx judgments list` for trace ids).", file=sys.stderr)
        return EXIT_NOT_FOUND
    except StoreUnavailableError as exc:
        print(_unavailable_message(exc), file=sys.stderr)
        return EXIT_UNAVAILABLE
    except (ScopeError, InvalidInputError) as exc:
        print(f"error: {_msg(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryXError as exc:
        if getattr(args, "verbose", False):
            raise
        print(f"error: {_msg(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped early (`memoryx list | head -1`): nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not fail again
        return 128 + 13  # what a shell reports for a process ended by SIGPIPE
    except Exception as exc:
        if getattr(args, "verbose", False):
            raise
        print(f"Unexpected error: {type(exc).__name__}: {exc}\nRe-run with -v for the traceback.", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if m is not None:
            if process_ends:
                from memoryx.runtime.process_exit import leave_shards_to_exit

                leave_shards_to_exit()
            try:
                m.close()
            except Exception:
                pass
