"""`memoryx purge`: remove every trace of a scope (memoryx.lifecycle.purge), after a confirmation."""

from __future__ import annotations

import sys

from memoryx.cli.inputs import EXIT_OK, UsageError, require_scope
from memoryx.cli.render import print_json, print_record


def cmd_purge(args, m) -> int:
    scope = require_scope(args, "purge")
    named = ", ".join(f"{k}={v}" for k, v in scope.items() if v)
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"purge deletes every trace of {named} for good; confirm with --yes.")
        answer = input(f"Remove every memory, judgment, raw input and checkpoint of {named} (and of every agent "
                       "and run within it) for good? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Cancelled.")
            return EXIT_OK
    report = m.purge(**scope, compact=not args.no_compact)
    if args.json:
        print_json(report)
        return EXIT_OK
    print(f"Purged {named}.")
    print_record({store: ", ".join(f"{k} {v}" for k, v in counts.items()) if isinstance(counts, dict) else counts
                  for store, counts in report.items() if store != "scope"})
    return EXIT_OK
