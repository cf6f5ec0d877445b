"""`memoryx explain MEMORY_ID`: why a memory is remembered, as text (or the whole explanation with --json)."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK
from memoryx.cli.render import print_json


def _number(value) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def render_explanation(x: dict) -> list[str]:
    """The explanation as lines of text: the memory, importance and its factors, then each judgment."""
    mem = x["memory"]
    imp = x["importance"]
    lines = [f"{mem['id']}: {mem['memory']}",
             f"  type {mem.get('memory_type')}, layer {x['layer']}, status {x.get('status')}",
             f"  importance {_number(imp.get('score'))}"
             + (" (as written: no factors)" if not imp.get("factors") else ""),
             ]
    for name, weight in (imp.get("weights") or {}).items():
        value = (imp.get("factors") or {}).get(name)
        by = f" ({imp['factors'].get('certainty_by')})" if name == "certainty" else ""
        lines.append(f"    {name:<10} {_number(value)} x {weight:.2f}{by}")
    lines.append(f"  confidence {_number(x.get('confidence'))}, strength {x['strength_days']} days, "
                 f"retention {x['retention']}")
    for j in x["judgments"]:
        lines.append(f"  trace {j['trace_id']}: {j.get('event') or '-'}: {j.get('reason') or '-'}")
        for msg in j.get("source_messages") or []:
            who = msg.get("name") or msg.get("role") or ""
            lines.append(f"    said by {who}: {msg.get('content')}")
    for link in x["links"]:
        arrow = "->" if link["direction"] == "out" else "<-"
        lines.append(f"  link {link['relation']} {arrow} {link['other_id']}: {link.get('other_memory')}")
    lines.append(f"  history: {', '.join(h['event'] for h in x['history']) or '-'}")
    return lines


def cmd_explain(args, m) -> int:
    explanation = m.explain(args.memory_id)
    if args.json:
        print_json(explanation)
    else:
        print("\n".join(render_explanation(explanation)))
    return EXIT_OK
