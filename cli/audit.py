"""`memoryx audit`: scan the judgment log once (memoryx.lifecycle.audit) and print its findings;
`memoryx judgments verify T1 T2 … --result R` (one verdict for several runs) and `memoryx judgments report`."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK, UsageError, scope_kwargs
from memoryx.cli.render import print_json, print_table

VERDICTS = ("CORRECT", "INCORRECT", "PARTIAL")


def cmd_audit(args, m) -> int:
    scope = scope_kwargs(args)
    if args.list:
        result = {"findings": m.findings(**scope, kinds=args.kind, since=args.since, limit=args.limit)}
    else:
        result = m.audit(**scope, since=args.since, kinds=args.kind, store=not args.dry_run)
    if args.json:
        print_json(result)
        return EXIT_OK
    print_table(result["findings"], [("kind", "KIND"), ("severity", "SEVERITY"), ("event_at", "WHEN"),
                                     ("user_id", "USER"), ("memory_id", "MEMORY"), ("detail", "DETAIL")], wide="detail")
    if not args.list:
        new = sum(1 for f in result["findings"] if f.get("new"))
        print(f"\n{len(result['findings'])} findings ({new} new, {result['stored']} stored) over "
              f"{result['scanned']} records since {result['since'][:16].replace('T', ' ')}.")
    return EXIT_OK


def verify_args(args) -> tuple[list[str], str]:
    """`verify T1 T2 --result R`, or the older `verify T1 R`: the trace ids and the verdict."""
    ids = list(args.trace_ids)
    result = args.result
    if result is None and len(ids) >= 2 and ids[-1].upper() in VERDICTS:
        result = ids.pop().upper()
    if result is None:
        raise UsageError("say the verdict: --result CORRECT | INCORRECT | PARTIAL.")
    return ids, result


def cmd_verify(args, m) -> int:
    ids, result = verify_args(args)
    if len(ids) == 1:
        row = m.verify(ids[0], result, args.notes)
        print_json(row) if args.json else print(f"Judgment {ids[0]} marked {row.get('verification_result', result)}.")
        return EXIT_OK
    out = m.verify_many(ids, result, args.notes)
    if args.json:
        print_json(out)
    else:
        print_table(out["results"], [("trace_id", "TRACE"), ("status", "STATUS")])
        print(f"\n{out['verified']} of {len(ids)} marked {result}.")
    return EXIT_OK


def cmd_report(args, m) -> int:
    report = m.judgment_report(days=args.days, **scope_kwargs(args))
    if args.json:
        print_json(report)
        return EXIT_OK
    rows = [{**d, "p50": d["latency_ms"]["p50"], "p95": d["latency_ms"]["p95"],
             "accuracy": None if d["accuracy"] is None else f"{d['accuracy']:.0%}",
             **{k.lower(): v for k, v in d["by_result"].items()}} for d in report["days"]]
    print_table(rows, [("day", "DAY"), ("total", "RUNS"), ("verified", "VERIFIED"), ("correct", "CORRECT"),
                       ("incorrect", "INCORRECT"), ("partial", "PARTIAL"), ("accuracy", "ACCURACY"), ("p50", "P50 MS"),
                       ("p95", "P95 MS"), ("failed", "FAILED")])
    return EXIT_OK
