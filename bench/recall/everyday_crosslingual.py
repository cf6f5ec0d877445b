"""Everyday questions split by whether their answer was said in the question's own script or only in the other
one (an English question over a memory said in Chinese or Japanese, or the reverse), through the public API
with its defaults (extraction on, the offline model): what the multilingual index is for.

    PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 python bench/recall/everyday_crosslingual.py [--tuning JSON] LIFE [LIFE ...]

LIFE: the names of bench/recall/everyday_recall.py's sets (first ... fortyfirst). `--tuning`: MEMORYX_SEARCH_TUNING
overrides (e.g. '{"weight_crosslingual": 0.45}'), for a sensitivity check. A question counts as cross-language
when every memory holding its expected words is written in the other script (CJK at least 30% of its letters).
Prints top-1 / top-3 / top-10 of each class.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from everyday_recall import NOW, SETS, START, answered_at  # noqa: E402

_LETTER = re.compile(r"[^\W\d_]")


def written_in_cjk(text: str) -> bool:
    """The multilingual index's reading (memoryx.stores.vectors.multilingual.mostly_cjk), kept here so the script
    also runs against code that has no index."""
    from memoryx.core.text import CJK_CHAR

    return bool(CJK_CHAR.search(text)) and len(CJK_CHAR.findall(text)) >= 0.3 * len(_LETTER.findall(text))


def rows_of(name: str, tuning: dict) -> list[tuple[int | None, bool]]:
    from memoryx import Memory
    from memoryx.search.query import written_in_cjk as question_in_cjk
    from memoryx.settings import Settings

    life, questions = SETS[name]
    out = []
    with tempfile.TemporaryDirectory(prefix="memoryx-xling-") as d:
        m = Memory(Settings(data_dir=Path(d), search_tuning=tuning), llm="offline")
        try:
            for day, text, *reply in life:
                when = (START + timedelta(days=day)).isoformat()
                turn = [{"role": "user", "content": text, "timestamp": when}]
                turn += [{"role": "assistant", "content": r, "timestamp": when} for r in reply]
                m.add(turn, user_id="u")
            memories = [{"memory": r["memory"]} for r in m.get_all(user_id="u", limit=1000)["results"]]
            for question, words, _ in questions:
                holders = [x["memory"] for x in memories if answered_at([x], words)]
                if not holders:  # the answer was not kept as a memory: neither class
                    continue
                cross = all(written_in_cjk(h) != question_in_cjk(question) for h in holders)
                found = m.search(question, user_id="u", limit=10, now=NOW)["results"]
                out.append((answered_at(found, words), cross))
        finally:
            m.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tuning", default="", help="MEMORYX_SEARCH_TUNING overrides, as JSON")
    ap.add_argument("lives", nargs="+", choices=sorted(SETS))
    args = ap.parse_args()
    tuning = json.loads(args.tuning) if args.tuning else {}
    rows = [r for name in args.lives for r in rows_of(name, tuning)]
    for cross, label in ((True, "other script"), (False, "same script")):
        ks = [k for k, c in rows if c == cross]
        print(f"{label:12s} n={len(ks):3d}  top-1 {sum(k == 1 for k in ks):3d}  "
              f"top-3 {sum(k is not None and k <= 3 for k in ks):3d}  top-10 {sum(k is not None for k in ks):3d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
