"""The distribution of reasoned importance on the shared dev conversations, to set `promote_importance`.

    python bench/importance_distribution.py [--data ../shared/data/locomo_dev.json] [--conversations 5]

Each LoCoMo conversation is told to a fresh `Memory` (the offline model unless MEMORYX_LLM names one) through
the public API, one `add` per session (its first speaker is the user, the turns stamped with the session's
date), as a chatbot would. Every memory written with its four factors is then read back and the script prints,
for each factor and for the total, the percentiles over all memories — the total at ingest (as stored) and as
a consolidation pass reads it the day after the event and thirty days later (`importance_at`: recency read
again from the event time) — the totals per impact rule (life facts, trivia, by type), and the share of
memories a pass would promote at each candidate threshold.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = next((p for p in (HERE.parent.parent / "shared" / "data" / "locomo_dev.json",
                                 Path("/work/shared/data/locomo_dev.json")) if p.exists()),
                    HERE.parent.parent / "shared" / "data" / "locomo_dev.json")
FACTORS = ("scarcity", "impact", "recency", "certainty")
THRESHOLDS = (0.6, 0.65, 0.7, 0.72, 0.75, 0.8, 0.85, 0.9)


def percentiles(values: list[float]) -> str:
    if not values:
        return "(none)"
    qs = statistics.quantiles(values, n=20, method="inclusive") if len(values) > 1 else [values[0]] * 19
    return (f"n={len(values):5d}  min {min(values):.3f}  p10 {qs[1]:.3f}  p25 {qs[4]:.3f}  p50 {qs[9]:.3f}  "
            f"p75 {qs[14]:.3f}  p90 {qs[17]:.3f}  max {max(values):.3f}  mean {statistics.fmean(values):.3f}")


def ingest(data: Path, conversations: int) -> list[dict]:
    from memoryx import Memory
    from memoryx.ingest import locomo

    rows: list[dict] = []
    for sample in json.loads(data.read_text())[:conversations]:
        user = f"locomo-{sample['sample_id']}"
        with tempfile.TemporaryDirectory(prefix="memoryx-importance-") as tmp, \
                Memory(data_dir=tmp, graph_backend="none") as m:
            started = time.perf_counter()
            for session in locomo.sessions(sample):
                messages = locomo.session_messages(sample, session)
                if messages:
                    m.add(messages, user_id=user)
            found = m.get_all(user_id=user, limit=100_000)["results"]
            rows.extend(m.get(r["id"]) for r in found)
            print(f"{user}: {len(found)} memories in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return rows


def report(rows: list[dict]) -> str:
    from memoryx.knowledge.importance import importance_at

    rows = [r for r in rows if isinstance(r.get("importance_factors"), dict)]
    lines = [f"{len(rows)} memories with reasoned importance", "", "factor       distribution"]
    for k in FACTORS:
        lines.append(f"{k:<12} {percentiles([float(r['importance_factors'][k]) for r in rows])}")

    def event(r: dict) -> datetime:
        f = r["importance_factors"]
        return datetime.fromisoformat((f.get("event_at") or r.get("valid_at") or r["created_at"]).replace("Z", "+00:00"))

    totals = {"at ingest": [float(r["importance"]) for r in rows],
              "a day later": [importance_at(r, event(r) + timedelta(days=1)) for r in rows],
              "30 days later": [importance_at(r, event(r) + timedelta(days=30)) for r in rows]}
    lines += ["", "total"]
    lines += [f"{name:<12} {percentiles(vals)}" for name, vals in totals.items()]
    lines += ["", "total a day later, by impact rule"]
    groups: dict[str, list[float]] = {}
    for r, v in zip(rows, totals["a day later"]):
        f = r["importance_factors"]
        rule = f.get("impact_by") or "type"
        groups.setdefault(rule if rule != "type" else f"type:{r.get('memory_type')}", []).append(v)
    lines += [f"{name:<16} {percentiles(vals)}" for name, vals in sorted(groups.items())]
    lines += ["", "share promoted by importance alone (a day later / 30 days later)"]
    for t in THRESHOLDS:
        day = sum(v >= t for v in totals["a day later"]) / len(rows)
        month = sum(v >= t for v in totals["30 days later"]) / len(rows)
        per = "  ".join(f"{name} {sum(v >= t for v in vals) / len(vals):.0%}" for name, vals in sorted(groups.items()))
        lines.append(f">= {t:<5} {day:6.1%} / {month:6.1%}    {per}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--conversations", type=int, default=5)
    ap.add_argument("--rows", type=Path, help="keep the memories read back (JSON) / reuse them if the file exists")
    args = ap.parse_args(argv)
    if args.rows and args.rows.exists():
        rows = json.loads(args.rows.read_text())
    else:
        rows = ingest(args.data, args.conversations)
        if args.rows:
            args.rows.write_text(json.dumps(rows, default=str))
    print(report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
