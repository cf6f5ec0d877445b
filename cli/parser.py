"""The `memoryx` argument parser: every command, its options and the function that runs it."""

from __future__ import annotations

import argparse
import sys

from memoryx.cli.audit import cmd_audit
from memoryx.cli.commands import (
    cmd_add,
    cmd_delete,
    cmd_get,
    cmd_history,
    cmd_judgments,
    cmd_list,
    cmd_reindex,
    cmd_reset,
    cmd_resume,
    cmd_search,
    cmd_update,
)
from memoryx.cli.consolidate import cmd_consolidate, cmd_end_run, cmd_restore
from memoryx.cli.demo import cmd_demo
from memoryx.cli.explain import cmd_explain
from memoryx.cli.export import cmd_export
from memoryx.cli.importer import cmd_import
from memoryx.cli.inputs import EXIT_USAGE
from memoryx.cli.mcp import cmd_mcp
from memoryx.cli.profile import cmd_profile
from memoryx.cli.purge import cmd_purge
from memoryx.cli.rollback import cmd_rollback
from memoryx.cli.serve import cmd_serve
from memoryx.cli.setup import cmd_setup


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's default exit code 2 means "not found" here
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}\nRun `{self.prog} --help` for the options.", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("common options")
    g.add_argument("--user-id", help="scope: the user the memories belong to")
    g.add_argument("--agent-id", help="scope: the agent")
    g.add_argument("--run-id", help="scope: the run / session")
    g.add_argument("--group-id", help="scope: a group chat (its participants' memories; with --user-id one "
                                      "participant's)")
    g.add_argument("--json", action="store_true", help="print JSON for scripts instead of tables")
    g.add_argument("--data-dir", help="data directory of the embedded stores (default: MEMORYX_DATA_DIR or .memoryx)")
    g.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and debug logs")

    parser = _Parser(prog="memoryx", description="MemoryX: long-term memory for LLM chatbots and agents.",
                     epilog="Start with `memoryx demo`. Settings come from MEMORYX_* environment variables (or .env). "
                            "With MEMORYX_URL (and MEMORYX_API_KEY) set, commands go through that `memoryx serve`.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def cmd(name, func, help_, parents=(common,), **kw):
        p = sub.add_parser(name, help=help_, description=help_, parents=list(parents), **kw)
        p.set_defaults(func=func)
        return p

    p = cmd("add", cmd_add, "remember a message (facts are extracted by the model)")
    p.add_argument("text", nargs="*", help="the message text")
    p.add_argument("--file", help="a JSON list of {role, content} messages instead of text")
    p.add_argument("--role", default="user", choices=["user", "assistant", "system", "raw"], help="role of the text (default user)")
    p.add_argument("--metadata", help="JSON object stored with the memories")
    p.add_argument("--no-infer", action="store_true", help="store the text verbatim, without extraction")

    p = cmd("search", cmd_search, "find memories relevant to a query")
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--threshold", type=float)
    p.add_argument("--filters", help='JSON metadata filters, e.g. \'{"category": "preference"}\'')

    p = cmd("list", cmd_list, "list the memories of a scope, newest first")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--filters", help="JSON metadata filters")

    p = cmd("get", cmd_get, "show one memory")
    p.add_argument("memory_id")

    p = cmd("update", cmd_update, "change the text of a memory")
    p.add_argument("memory_id")
    p.add_argument("text", nargs="+")
    p.add_argument("--metadata", help="JSON object replacing the memory's metadata")

    p = cmd("delete", cmd_delete, "delete a memory (or --all of a scope)")
    p.add_argument("memory_id", nargs="?")
    p.add_argument("--all", action="store_true", help="delete every memory of the given scope")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")

    p = cmd("history", cmd_history, "the events of a memory, oldest first")
    p.add_argument("memory_id")

    p = cmd("explain", cmd_explain, "why a memory is remembered: its sources, judgments, importance and its "
                                    "factors, confidence, layer, retention, links")
    p.add_argument("memory_id")

    p = cmd("judgments", cmd_judgments, "inspect and verify the model's ADD/UPDATE/DELETE judgments", parents=())
    jsub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    jl = jsub.add_parser("list", help="recent judgments", parents=[common])
    jl.add_argument("--limit", type=int, default=20)
    js = jsub.add_parser("show", help="one judgment by trace id", parents=[common])
    js.add_argument("trace_id")
    jv = jsub.add_parser("verify", help="record a human verdict on one or more runs: verify T1 T2 … --result CORRECT",
                         parents=[common])
    jv.add_argument("trace_ids", nargs="+", metavar="TRACE_ID", help="the runs (memoryx judgments list)")
    jv.add_argument("--result", type=str.upper, choices=["CORRECT", "INCORRECT", "PARTIAL"],
                    help="the verdict (the older form `verify TRACE_ID RESULT` works too)")
    jv.add_argument("--notes")
    jsub.add_parser("stats", help="accuracy of verified judgments, latency percentiles", parents=[common])
    jr = jsub.add_parser("report", help="the daily accuracy report: verdicts, accuracy, latency per day",
                         parents=[common])
    jr.add_argument("--days", type=int, default=30, help="days back, today included (1-366)")

    p = cmd("audit", cmd_audit, "scan the judgment log once for what a human should look at and print the findings")
    p.add_argument("--since", help="an ISO time or a span back from now (24h, 7d); default MEMORYX_AUDIT_LOOKBACK_HOURS")
    p.add_argument("--kind", action="append", help="only this kind (repeatable): add_then_delete, churn, "
                                                   "parsed_vs_executed, slow, failed, unverified; default all")
    p.add_argument("--dry-run", action="store_true", help="print the findings without storing them")
    p.add_argument("--list", action="store_true", help="list the stored open findings instead of scanning")
    p.add_argument("--limit", type=int, default=100, help="with --list: at most this many")

    p = cmd("resume", cmd_resume, "approve, edit or reject an add run paused for review (trace id from `memoryx add`)")
    p.add_argument("trace_id")
    decision = p.add_mutually_exclusive_group()
    decision.add_argument("--reject", action="store_true", help="write none of the pending operations")
    decision.add_argument("--operations", help="a JSON file with the approved (possibly edited) operations")

    cmd("reindex", cmd_reindex, "rebuild the vector and graph projections from SQL (optionally one scope)")

    p = cmd("import", cmd_import, "import a conversation file (JSON messages or LoCoMo), or an export "
                                  "(`memoryx export` JSONL, or a mem0 export)")
    p.add_argument("file")
    p.add_argument("--format", choices=["auto", "messages", "locomo", "memoryx", "mem0"], default="auto")
    p.add_argument("--batch", type=int, default=2, help="messages per add() for a message list (default 2)")
    p.add_argument("--limit", type=int, help="LoCoMo: import only the first N conversations")
    p.add_argument("--sessions", type=int, help="LoCoMo: import only the first N sessions of each conversation")
    p.add_argument("--no-infer", action="store_true", help="store messages verbatim")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = cmd("export", cmd_export, "write a scope's memories (with history) and graph as JSONL, for `memoryx import`")
    p.add_argument("file")

    p = cmd("serve", cmd_serve, "run the HTTP server (REST /v1, LangServe /graphs, /healthz, /metrics)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--allowed-hosts", help="comma-separated Host names the server answers (DNS-rebinding guard; "
                                           "default: localhost names and --host; '*' for any)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--workers", type=int, default=1, help="worker processes on one port (default 1). More than one "
                                                          "needs shared stores: PostgreSQL (MEMORYX_SQL_URL), "
                                                          "MEMORYX_VECTOR_BACKEND=pgvector, MEMORYX_FALKORDB_URL "
                                                          "or MEMORYX_GRAPH_BACKEND=none")

    p = cmd("mcp", cmd_mcp, "run the MCP server on stdio (tools memory_add, memory_search, ...) for MCP clients",
            parents=())
    p.add_argument("--user-id", action="append", help="a user the server serves (repeat for several; default "
                                                        "MEMORYX_MCP_USER_ID); the model can act only for them")
    p.add_argument("--data-dir", help="data directory of the embedded stores (default: MEMORYX_DATA_DIR or .memoryx)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")

    p = cmd("setup", cmd_setup, "prepare the local encoder once per machine (a progress bar; later commands then "
                                "start without building anything)", parents=())
    p.add_argument("--json", action="store_true", help="print what was prepared as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and debug logs")

    cmd("demo", cmd_demo, "a short scripted conversation (English and Chinese) through add and search")

    p = cmd("purge", cmd_purge, "remove every trace of a scope from every store (memories, history, judgments, "
                                "raw inputs, graph, vectors, checkpoints), for good")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--no-compact", action="store_true", help="skip rewriting the stores' files (faster; deleted "
                                                            "bytes may stay on disk until the stores rewrite them)")

    p = cmd("rollback", cmd_rollback, "undo every operation of one run (its trace id): old texts back, deleted "
                                      "memories back, added ones removed, relations restored")
    p.add_argument("trace_id", help="the run's trace id (memoryx judgments list)")
    p.add_argument("--force", action="store_true", help="also roll back later runs that changed the same memories")

    p = cmd("consolidate", cmd_consolidate, "merge duplicates, summarise clusters and archive faded memories of a scope")
    p.add_argument("--now", help="read the forgetting curve at this ISO time (default: now)")
    p.add_argument("--dry-run", action="store_true", help="decide and report, write nothing")
    p = cmd("end-run", cmd_end_run, "close a run: its working memories that mattered stay as short-term, the rest "
                                    "are archived (restorable)")
    p.add_argument("run", help="the run id")
    p = cmd("restore", cmd_restore, "bring an archived or merged memory back")
    p.add_argument("memory_id")

    p = cmd("profile", cmd_profile, "show a user's profile: name, home, work, relationships, likes, goals")
    p.add_argument("--history", action="store_true", help="also the values that ended (an old home, a retracted like)")

    p = cmd("reset", cmd_reset, "delete everything (all users)")
    p.add_argument("--yes", action="store_true")
    return parser
