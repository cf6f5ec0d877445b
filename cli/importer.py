"""`memoryx import`: a JSON message list or a LoCoMo file, added through `Memory.add_many` (batched with
--no-infer); or a MemoryX export (`memoryx export`) or a mem0 export, read back with ids and history kept."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memoryx.cli.inputs import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    load_json,
    load_messages_file,
    require_scope,
    scope_kwargs,
)
from memoryx.cli.progress import progress_bar
from memoryx.cli.render import print_json


def _message_jobs(args) -> list[tuple[dict, str, Any]]:
    scope = require_scope(args, "import")
    messages = load_messages_file(Path(args.file))
    step = max(1, args.batch)
    return [(scope, f"messages {i + 1}-{min(i + step, len(messages))}", messages[i:i + step])
            for i in range(0, len(messages), step)]


def _locomo_jobs(args, data: Any) -> list[tuple[dict, str, Any]]:
    """One job per session; without a scope option each conversation goes to the user named by its sample id."""
    from memoryx.ingest import locomo

    samples = data if isinstance(data, list) else [data]
    if args.limit:
        samples = samples[: args.limit]
    jobs = []
    for sample in samples:
        scope = scope_kwargs(args)
        if not any(scope.values()):
            scope = {"user_id": str(sample.get("sample_id") or "locomo"), "agent_id": None, "run_id": None}
        sessions = [(s, msgs) for s in locomo.sessions(sample) if (msgs := locomo.session_messages(sample, s))]
        if args.sessions:
            sessions = sessions[: args.sessions]
        for session, msgs in sessions:
            jobs.append((scope, f"{scope['user_id'] or scope['agent_id']}/{session.name}", msgs))
    return jobs


def _is_memoryx_export(path: Path) -> bool:
    from memoryx.api.export_import import FORMAT

    with path.open(encoding="utf-8", errors="replace") as f:
        return f'"type": "{FORMAT}"' in f.readline()


def _is_mem0_export(data: Any) -> bool:
    items = data.get("results") or data.get("memories") if isinstance(data, dict) else data
    return isinstance(items, list) and bool(items) and all(isinstance(i, dict) and "memory" in i for i in items)


def _import_export(args, m, fmt: str) -> int:
    scope = {k: v for k, v in scope_kwargs(args).items() if v}
    counts = m.import_memories(args.file, **scope)
    if args.json:
        print_json({"format": fmt, **counts})
    else:
        print(f"Imported from {args.file} ({fmt}): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return EXIT_OK


def cmd_import(args, m) -> int:
    from memoryx.ingest import locomo

    path = Path(args.file)
    if not path.exists():
        raise UsageError(f"File not found: {path}")
    fmt = args.format
    if fmt == "memoryx" or (fmt == "auto" and _is_memoryx_export(path)):
        return _import_export(args, m, "memoryx")
    data = load_json(path)
    if fmt == "mem0" or (fmt == "auto" and not locomo.is_locomo(data) and _is_mem0_export(data)):
        return _import_export(args, m, "mem0")
    if fmt == "auto":
        fmt = "locomo" if locomo.is_locomo(data) else "messages"
    jobs = _message_jobs(args) if fmt == "messages" else _locomo_jobs(args, data)  # (scope, label, messages)
    if not jobs:
        raise UsageError(f"{args.file} holds no messages to import.")
    counts: dict[str, int] = {}
    bar = progress_bar(len(jobs), "Importing", enabled=not args.json and not args.quiet)
    try:
        # one add_many: --no-infer is batched (one embedding call and SQL transaction per chunk),
        # with inference the jobs of one scope run in order and different scopes in parallel
        items = [{"messages": msgs, **scope, "metadata": {"source": Path(args.file).name, "session": label}}
                 for scope, label, msgs in jobs]
        results = m.add_many(items, infer=not args.no_infer, progress=bar.update)
        for result in results:
            if "error" in result:
                counts["ERROR"] = counts.get("ERROR", 0) + 1
            for item in result.get("results") or []:
                counts[item.get("event", "?")] = counts.get(item.get("event", "?"), 0) + 1
    finally:
        bar.close()
    failed = [r["error"]["message"] for r in results if "error" in r]
    if failed:  # an item's error is its result in add_many: say so here, and exit non-zero
        print(f"{len(failed)} of {len(jobs)} batch(es) failed; first error: {failed[0]}", file=sys.stderr)
    summary = {"format": fmt, "batches": len(jobs), "events": counts}
    if args.json:
        print_json(summary)
    else:
        print(f"Imported {len(jobs)} batch(es) from {args.file} ({fmt}): "
              + (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing new"))
    return EXIT_USAGE if failed else EXIT_OK
