"""The recall harness's figures: per set and question type the mean of each metric for MemoryX (defaults), BM25 and
the dense path alone; dev and validation side by side with their difference; cross-validated figures beside when
fit_ranker.py has written them."""

from __future__ import annotations

import math
import statistics

SYSTEMS = ("memoryx", "bm25", "dense")
METRICS = {"locomo-dev": ("frac@10", "frac@5"),
           "lme": ("session_recall_all@5", "session_recall_any@5", "turn_recall_all@5"),
           "lives": ("top1", "top3")}


def _metrics_of(set_name: str) -> tuple[str, ...]:
    return METRICS["lme" if set_name.startswith("lme-") else set_name]


def _groups(set_name: str, rows: list[dict]) -> dict[str, list[dict]]:
    """The question groups a set is reported by: all, then each type (lives: each store, language, kind)."""
    if set_name != "lives":
        out = {"all": rows}
        for t in sorted({r["qtype"] for r in rows}):
            out[t] = [r for r in rows if r["qtype"] == t]
        return out
    out = {}
    for label, sel in (("inferred", [r for r in rows if r["infer"]]), ("as said", [r for r in rows if not r["infer"]])):
        out[f"{label}: all"] = sel
        for lang in ("en", "zh", "ja"):
            out[f"{label}: language {lang}"] = [r for r in sel if r["language"] == lang]
        for kind in sorted({r["kind"] for r in sel}):
            out[f"{label}: {kind}"] = [r for r in sel if r["kind"] == kind]
        blind = [r for r in sel if r["blind"]]
        out[f"{label}: written blind"] = blind
        for kind in sorted({r["kind"] for r in blind}):
            out[f"{label}: written blind, {kind}"] = [r for r in blind if r["kind"] == kind]
        for day in sorted({r.get("written") for r in blind if r.get("written")}):
            dated = [r for r in blind if r.get("written") == day]
            out[f"{label}: written blind on {day}"] = dated
            for kind in sorted({r["kind"] for r in dated}):
                out[f"{label}: written blind on {day}, {kind}"] = [r for r in dated if r["kind"] == kind]
    return {k: v for k, v in out.items() if v}


def _ms(rows: list[dict]) -> dict[str, float]:
    ms = sorted(r["ms"] for r in rows)
    return {"mean": statistics.fmean(ms), "median": statistics.median(ms),
            "p99": ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]}


def summarize(rows: list[dict], cv: dict | None = None) -> dict:
    out: dict[str, dict] = {}
    for set_name in dict.fromkeys(r["set"] for r in rows):
        sel = [r for r in rows if r["set"] == set_name]
        groups = {}
        for label, grp in _groups(set_name, sel).items():
            groups[label] = {"n": len(grp), **{s: {m: statistics.fmean(r[s][m] for r in grp)
                                                    for m in _metrics_of(set_name)} for s in SYSTEMS}}
            cv_fig = ((cv or {}).get(set_name) or {}).get(label)
            if cv_fig:
                groups[label]["cv"] = cv_fig
        out[set_name] = {"n": len(sel), "ms": _ms(sel), "groups": groups}
    return out


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _render_single(set_name: str, s: dict) -> list[str]:
    metrics = _metrics_of(set_name)
    head = "| " + ("group" if set_name == "lives" else "question type") + " | n | " + " | ".join(
        f"{m} MemoryX / BM25 / dense" + (" / cv" if any("cv" in g for g in s["groups"].values()) else "")
        for m in metrics) + " |"
    lines = [head, "|---|---|" + "---|" * len(metrics)]
    for label, g in s["groups"].items():
        cells = []
        for m in metrics:
            cell = " / ".join(_f(g[x][m]) for x in SYSTEMS)
            if "cv" in g:
                cell += " / " + _f(g["cv"].get(m))
            cells.append(cell)
        lines.append(f"| {label} | {g['n']} | " + " | ".join(cells) + " |")
    return lines


def _render_pair(dev: dict, val: dict) -> list[str]:
    lines = []
    labels = list(dict.fromkeys([*dev["groups"], *val["groups"]]))
    for m in METRICS["lme"]:
        lines += ["", f"{m}: MemoryX dev | val | val - dev | cv (the fitted ranking, k-fold on dev; fit_ranker.py) ; BM25 dev | val ; dense dev | val",
                  "", "| question type | n dev / val | dev | val | val - dev | cv | BM25 dev | BM25 val | dense dev "
                  "| dense val |", "|---|---|---|---|---|---|---|---|---|---|"]
        for label in labels:
            d, v = dev["groups"].get(label), val["groups"].get(label)
            get = (lambda g, sys_: g[sys_][m] if g else None)  # noqa: E731
            diff = get(v, "memoryx") - get(d, "memoryx") if d and v else None
            cv = next((g["cv"].get(m) for g in (d, v) if g and "cv" in g), None)
            lines.append(f"| {label} | {d['n'] if d else 0} / {v['n'] if v else 0} | {_f(get(d, 'memoryx'))} | "
                         f"{_f(get(v, 'memoryx'))} | {'-' if diff is None else f'{diff:+.3f}'} | {_f(cv)} | "
                         f"{_f(get(d, 'bm25'))} | {_f(get(v, 'bm25'))} | {_f(get(d, 'dense'))} | "
                         f"{_f(get(v, 'dense'))} |")
        lines += ["", _noise(m, dev["groups"].get("all"), val["groups"].get("all"))]
    return lines


def _noise(metric: str, dev: dict | None, val: dict | None) -> str:
    """One standard error of each whole-set figure (a proportion over n questions) and of their difference: how far
    apart two figures must be before the gap says more than which questions were drawn."""
    if not dev or not val:
        return ""
    se = [math.sqrt(p * (1 - p) / g["n"]) for g in (dev, val) for p in [g["memoryx"][metric]]]
    return (f"{metric}, one standard error: dev ±{se[0]:.3f}, val ±{se[1]:.3f}, val - dev "
            f"±{math.hypot(*se):.3f}")


def render(summary: dict, timings: dict) -> str:
    lines: list[str] = []
    names = list(summary)
    for set_name in names:
        if set_name == "lme-val" and "lme-dev" in summary:
            continue
        if set_name == "lme-dev" and "lme-val" in summary:
            lines += ["", "## LongMemEval_S dev and validation"]
            lines += _render_pair(summary["lme-dev"], summary["lme-val"])
            continue
        lines += ["", f"## {set_name}", ""] + _render_single(set_name, summary[set_name])
    lines += ["", "| set | questions | search ms mean / median / p99 | ingest s | search pass s |",
              "|---|---|---|---|---|"]
    for set_name in names:
        s, t = summary[set_name], timings.get(set_name, {})
        lines.append(f"| {set_name} | {s['n']} | {s['ms']['mean']:.1f} / {s['ms']['median']:.1f} / "
                     f"{s['ms']['p99']:.1f} | {t.get('ingest_s', '-')} | {t.get('rerank_s', '-')} |")
    if timings.get("ingest", {}).get("build_wall_s"):
        lines.append(f"\ningest (or opening the kept stores), wall: {timings['ingest']['build_wall_s']} s with "
                     f"{timings['ingest']['jobs']} job(s)")
    if "all" in timings:
        lines.append(f"\nsearch passes, wall: {timings['all']['rerank_wall_s']} s with {timings['all']['jobs']} job(s)")
    return "\n".join(lines).lstrip("\n")
