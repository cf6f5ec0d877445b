"""Everyday questions over one user's two years, through the public API with its defaults: what a chatbot
wired to MemoryX meets. Our own dev set (written here, in English, Chinese and Japanese); the held-out
everyday set that judges recall is kept aside and is not this one.

    PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 python bench/recall/everyday_recall.py [--set first|...|fortyfirst] [--raw]
        [--data-dir DIR] [--show-misses]

(PYTHONHASHSEED fixed: two candidates tied in score can otherwise fall either way from one process to the next.)

One life at a time, with its misses (bench/recall/run.py --sets lives runs them all, per language and kind). The
lives are data, bench/recall/lives/*.json, read by bench/recall/everyday.py; each file says how it was written
(`notes`, `blind`: by a writer who had not read the ranking or extraction code; docs/benchmarks.md gives each
life's first run).

Each statement is one user message `Memory.add([{"role": "user", "content", "timestamp"}], user_id=...)` with
extraction on (`infer=True`, the default) and the offline model (what runs without an API key), the embedded
graph on; `--raw` adds each as it was said (`infer=False`) instead, to measure the ranking alone. Then each
question is `Memory.search(question, user_id=..., limit=3, now=...)`; a question is answered at rank k when
the k-th result's text contains every word of its expected answer (case-insensitive; "a|b": either). Prints
top-1 and top-3, per language, and the misses.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the loader beside this script, however it is run
import everyday  # noqa: E402

LIVES = everyday.load_lives()
START = datetime.fromisoformat(LIVES[0]["start"])
NOW = datetime.fromisoformat(LIVES[0]["now"])
# name -> (statements as (day, text[, reply ...]), questions as (question, expected words, language))
SETS = {life["name"]: ([(s["day"], s["text"], *s.get("replies", [])) for s in life["statements"]],
                       [(q["question"], q["expected"], q["language"]) for q in life["questions"]]) for life in LIVES}


answered_at = everyday.answered_at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--set", choices=sorted(SETS), default="first", help="which life (default the first)")
    ap.add_argument("--raw", action="store_true",
                    help="add each statement as it was said (infer=False): the ranking alone, no extraction")
    args = ap.parse_args()
    from memoryx import Memory
    from memoryx.settings import Settings

    tmp = tempfile.TemporaryDirectory(prefix="memoryx-everyday-") if args.data_dir is None else None
    data_dir = Path(tmp.name) if tmp else args.data_dir
    user = f"everyday-{args.set}" + ("-raw" if args.raw else "")
    life, questions = SETS[args.set]
    m = Memory(Settings(data_dir=data_dir), llm="offline")
    try:
        t0 = time.perf_counter()
        if not m.get_all(user_id=user, limit=1)["results"]:
            for day, text, *reply in life:  # a statement, with the assistant's reply where the life gives one
                when = (START + timedelta(days=day)).isoformat()
                turn = [{"role": "user", "content": text, "timestamp": when}]
                turn += [{"role": "assistant", "content": r, "timestamp": when} for r in reply]
                m.add(turn, user_id=user, infer=not args.raw)
        added = time.perf_counter() - t0
        rows = []
        for question, words, lang in questions:
            results = m.search(question, user_id=user, limit=3, now=NOW)["results"]
            rows.append((question, lang, answered_at(results, words), [r["memory"] for r in results]))
        print(f"everyday questions ({args.set} set): {len(life)} statements (added in {added:.1f} s, "
              f"infer={not args.raw}, offline model, "
              f"graph on), {len(rows)} questions")
        for lang in ("all", "en", "zh", "ja"):
            sel = [r for r in rows if lang in ("all", r[1])]
            if not sel:  # a life asked in fewer languages
                continue
            top1 = sum(1 for r in sel if r[2] == 1) / len(sel)
            top3 = sum(1 for r in sel if r[2] is not None) / len(sel)
            print(f"  {lang:4s} n={len(sel):2d}  top-1 {top1:.2f}  top-3 {top3:.2f}")
        for question, lang, k, got in rows:
            if k != 1 and args.show_misses:
                print(f"  miss ({'rank ' + str(k) if k else 'not in top 3'}): {question} -> {got}")
    finally:
        m.close()
        if tmp:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
