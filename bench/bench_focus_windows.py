"""What focus windows (`vector_focus_chars`) cost an add: LongMemEval user turns written through the public API
(`Memory.add_many(infer=False)`, graph off, the local MiniLM encoder) with the setting off and on, twice each.

    HF_HUB_OFFLINE=1 python bench/bench_focus_windows.py [--data ../shared/data/longmemeval_s_dev.json] [--turns 600]

A turn the encoder reads whole but longer than 1.25 x the focus width gets a vector for each window of it as well
as its own; shorter and longer turns cost the same either way. Prints the share of such turns and ms per turn.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval_s_dev.json"


def user_turns(path: Path, n: int) -> list[str]:
    questions = json.loads(path.read_text(encoding="utf-8"))
    turns = [t["content"] for q in questions for s in q["haystack_sessions"] for t in s if t["role"] == "user"]
    return turns[:n]


def ms_per_turn(turns: list[str], focus: int) -> float:
    from memoryx import Memory
    from memoryx.settings import Settings

    with tempfile.TemporaryDirectory(prefix="memoryx-focus-") as d:
        m = Memory(Settings(data_dir=d, graph_backend="none", vector_focus_chars=focus))
        try:
            m.add_many([{"messages": [{"role": "user", "content": "warm up"}], "user_id": "w"}], infer=False)
            start = time.perf_counter()
            m.add_many([{"messages": [{"role": "user", "content": t}], "user_id": "u"} for t in turns], infer=False)
            return 1000 * (time.perf_counter() - start) / len(turns)
        finally:
            m.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a LongMemEval JSON file")
    ap.add_argument("--turns", type=int, default=600, help="user turns written per run")
    args = ap.parse_args()
    turns = user_turns(args.data, args.turns)
    mid = sum(1 for t in turns if 250 < len(t) <= 1000)
    print(f"{len(turns)} user turns, mean {sum(map(len, turns)) / len(turns):.0f} characters, "
          f"{mid / len(turns):.0%} between 250 and 1,000 (they get focus windows at 200)")
    for focus in (0, 200, 0, 200):
        print(f"vector_focus_chars={focus}: {ms_per_turn(turns, focus):.1f} ms per turn")


if __name__ == "__main__":
    main()
