"""`memoryx consolidate`: one consolidation pass over a scope (memoryx.graphs.consolidate), and
`memoryx restore` of an archived or merged memory."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK, require_scope
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
