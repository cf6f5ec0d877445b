"""`memoryx rollback TRACE_ID [--force]`: undo every operation of one run (memoryx.lifecycle.rollback)."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK
from memoryx.cli.render import print_json


def cmd_rollback(args, m) -> int:
    result = m.rollback(args.trace_id, force=args.force)
    if args.json:
        print_json(result)
        return EXIT_OK
    for done in result.get("also_rolled_back") or []:
        print(f"Rolled back later run {done['trace_id']} first (rollback trace {done['rollback_trace_id']}).")
    print(f"Rolled back {result['rolled_back_trace_id']}: {len(result['results'])} memories restored "
          f"(rollback trace {result['trace_id']}).")
    for op in result["results"]:
        before, after = op.get("previous_memory"), op.get("memory")
        print(f"  {op['id']}: {before!r} -> {after!r}" if after is not None else f"  {op['id']}: {before!r} removed")
    for item in result.get("not_undone") or []:
        print(f"  not undone: {item['event']} {item['memory_id']}: {item['reason']}")
    return EXIT_OK
