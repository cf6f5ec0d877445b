"""`memoryx consolidate`: one consolidation pass over a scope (memoryx.graphs.consolidate), `memoryx end-run`
(a run's working memory closed) and `memoryx restore` of an archived or merged memory."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK, UsageError, require_scope, scope_kwargs
from memoryx.cli.render import print_json, print_record


def cmd_consolidate(args, m) -> int:
    scope = require_scope(args, "consolidate")
    report = m.consolidate(**scope, now=args.now, dry_run=args.dry_run)
    if args.json:
        print_json(report)
        return EXIT_OK
    print_record({k: report[k] for k in ("trace_id", "dry_run", "memories", "staged_seen", "merged", "merged_by_model",
                                         "compressed", "archived", "model_calls")})
    return EXIT_OK


def cmd_restore(args, m) -> int:
    print_json(m.restore(args.memory_id)) if args.json else print_record(m.restore(args.memory_id))
    return EXIT_OK


def cmd_end_run(args, m) -> int:
    scope = scope_kwargs(args)
    if scope.get("run_id") and scope["run_id"] != args.run:
        raise UsageError(f"end-run takes the run as its argument; --run-id {scope['run_id']!r} differs from {args.run!r}.")
    out = m.end_run(args.run, user_id=scope.get("user_id"), agent_id=scope.get("agent_id"), group_id=scope.get("group_id"))
    if args.json:
        print_json(out)
        return EXIT_OK
    print_record({"trace_id": out["trace_id"], "run_id": out["run_id"], "kept": len(out["kept"]),
                  "archived": len(out["archived"])})
    return EXIT_OK
