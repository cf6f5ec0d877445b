"""`memoryx export FILE`: a scope's memories (with history) and graph as JSONL, for `memoryx import`."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK, require_scope
from memoryx.cli.render import print_json


def cmd_export(args, m) -> int:
    scope = require_scope(args, "export")
    written = m.export(args.file, **scope)
    if args.json:
        print_json({"file": args.file, "records": written})
    else:
        print(f"Exported {written} record(s) (header, memories with history, entities, relations) to {args.file}.")
    return EXIT_OK
