"""The memory commands: add, search, list, get, update, delete, history, resume, judgments, reindex, reset.

Each takes the parsed arguments and an open `Memory` (or `RemoteMemory`, same methods), prints, and returns
the exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from memoryx.cli.audit import cmd_report, cmd_verify
from memoryx.cli.inputs import EXIT_OK, UsageError, json_arg, load_json, load_messages_file, require_scope, scope_kwargs
from memoryx.cli.render import print_json, print_record, print_table

_MEM_COLUMNS = [("id", "ID"), ("memory", "MEMORY"), ("category", "CATEGORY"), ("created_at", "CREATED")]


def _print_add_result(result: dict) -> None:
    if result.get("status") == "awaiting_review":
        print(f"Awaiting review (trace {result['trace_id']}): nothing written yet. Pending operations:")
        print_table(result.get("pending_operations") or [], [("event", "EVENT"), ("id", "ID"), ("text", "TEXT"), ("reason", "REASON")], wide="text")
        return
    rows = result.get("results") or []
    if rows:
        columns = [("event", "EVENT"), ("id", "ID"), ("memory", "MEMORY")]
        if any(r.get("previous_memory") for r in rows):
            columns.append(("previous_memory", "PREVIOUS"))
        print_table(rows, columns, wide="memory")
    else:
        print("Nothing new to remember.")
    rel = result.get("relations") or {}
    added = rel.get("added_entities") if isinstance(rel, dict) else None
    if added:
        print(f"Graph: {len(added)} relation(s) added.")
    print(f"trace_id: {result.get('trace_id')}")


def cmd_add(args, m) -> int:
    scope = require_scope(args, "add")
    if args.file:
        messages = load_messages_file(Path(args.file))
    else:
        if not args.text:
            raise UsageError("Nothing to add: pass the text, e.g. memoryx add \"I live in Berlin\" --user-id alice, or --file conversation.json.")
        text = " ".join(args.text)
        messages = text if args.role == "raw" else [{"role": args.role, "content": text}]
    result = m.add(messages, **scope, metadata=json_arg(args.metadata, "--metadata"), infer=not args.no_infer)
    if args.json:
        print_json(result)
    else:
        _print_add_result(result)
    return EXIT_OK


def cmd_search(args, m) -> int:
    scope = require_scope(args, "search")
    result = m.search(" ".join(args.query), **scope, limit=args.limit, filters=json_arg(args.filters, "--filters"),
                      threshold=args.threshold)
    if args.json:
        print_json(result)
        return EXIT_OK
    print_table(result.get("results") or [], [("score", "SCORE"), ("id", "ID"), ("memory", "MEMORY")], wide="memory")
    rels = result.get("relations") or []
    if rels:
        print("\nRelations:")
        for r in rels:
            print(f"  {r.get('source')} --{r.get('relationship')}--> {r.get('destination')}")
    return EXIT_OK


def cmd_list(args, m) -> int:
    scope = require_scope(args, "list")
    result = m.get_all(**scope, limit=args.limit, filters=json_arg(args.filters, "--filters"))
    if args.json:
        print_json(result)
    else:
        print_table(result["results"], _MEM_COLUMNS, wide="memory")
    return EXIT_OK


def cmd_get(args, m) -> int:
    record = m.get(args.memory_id)
    if args.json:
        print_json(record)
    else:
        print_record(record)
    return EXIT_OK


def cmd_update(args, m) -> int:
    result = m.update(args.memory_id, " ".join(args.text), metadata=json_arg(args.metadata, "--metadata"))
    if args.json:
        print_json(result)
    else:
        print(f"Updated {result['id']}: {result.get('previous_memory')!r} -> {result.get('memory')!r}")
    return EXIT_OK


def cmd_delete(args, m) -> int:
    if args.all:
        scope = require_scope(args, "delete --all")
        if args.memory_id:
            raise UsageError("Pass either a memory id or --all with a scope, not both.")
        if not args.yes and sys.stdin.isatty():
            answer = input(f"Delete every memory of {', '.join(f'{k}={v}' for k, v in scope.items() if v)}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Cancelled.")
                return EXIT_OK
        result = m.delete_all(**scope)
    else:
        if not args.memory_id:
            raise UsageError("Pass the memory id to delete (see `memoryx list`), or --all with --user-id to delete a scope.")
        result = m.delete(args.memory_id)
    if args.json:
        print_json(result)
    else:
        print(result["message"] + (f" ({result['deleted']} memories)" if "deleted" in result else ""))
    return EXIT_OK


def cmd_history(args, m) -> int:
    events = m.history(args.memory_id)
    if args.json:
        print_json(events)
    else:
        print_table(events, [("created_at", "WHEN"), ("event", "EVENT"), ("old_memory", "OLD"), ("new_memory", "NEW"),
                             ("trace_id", "TRACE")], wide="new_memory")
    return EXIT_OK


def cmd_resume(args, m) -> int:
    operations = None  # approve the pending operations as they are
    if args.reject:
        operations = []
    elif args.operations:
        operations = load_json(Path(args.operations))
        if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
            raise UsageError(f"{args.operations} must hold a JSON list of operations like the pending ones "
                             "(`memoryx add --json` shows them).")
    result = m.resume_add(args.trace_id, operations)
    if args.json:
        print_json(result)
    else:
        _print_add_result(result)
    return EXIT_OK


def cmd_judgments(args, m) -> int:
    action = args.action
    if action == "list":
        rows = m.list_judgments(**scope_kwargs(args), limit=args.limit)
        if args.json:
            print_json(rows)
        else:
            print_table(rows, [("trace_id", "TRACE"), ("created_at", "WHEN"), ("user_id", "USER"), ("status", "STATUS"),
                               ("latency_ms", "MS"), ("verification_result", "VERIFIED"), ("model_name", "MODEL")])
    elif action == "show":
        row = m.judgments(args.trace_id)
        print_json(row) if args.json else print_record(row)
    elif action == "verify":
        return cmd_verify(args, m)
    elif action == "report":
        return cmd_report(args, m)
    elif action == "stats":
        stats = m.judgment_stats(**scope_kwargs(args))
        if args.json:
            print_json(stats)
        else:
            print_record({k: v for k, v in stats.items()})
    return EXIT_OK


def cmd_reindex(args, m) -> int:
    scope = scope_kwargs(args)
    report = m.reindex(**scope)
    print_json(report) if args.json else print_record(report or {"status": "done"})
    return EXIT_OK


def cmd_reset(args, m) -> int:
    if not args.yes:
        raise UsageError("reset deletes every memory of every user; confirm with --yes.")
    m.reset()
    print_json({"message": "All memories deleted."}) if args.json else print("All memories deleted.")
    return EXIT_OK
