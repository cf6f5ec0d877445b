"""Chinese and Japanese questions over one user's memories, through the public API (add_many(infer=False),
search defaults, no LLM), for comparing local encoders: top-1 and top-3 per language, dense only beside.

    python bench/recall/cjk_queries.py                                              # the default MiniLM
    python bench/recall/cjk_queries.py --set 'embedding_model="local:multilingual-e5-small"'

A small hand-written set (12 memories in Chinese, Japanese and English; 12 questions, most sharing few or no
characters with the memory that answers them), so it tells a multilingual encoder from one that is not, not a
benchmark figure.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MEMORIES = [
    "我养了一只叫豆豆的柯基犬。",                       # 0 dog
    "我下个月要搬到上海，新工作在浦东的一家银行。",        # 1 move / job
    "我对花生过敏，吃了会呼吸困难。",                      # 2 allergy
    "周末我通常去爬山，最喜欢黄山。",                      # 3 hiking
    "来週の金曜日に京都で大学の友達と会う予定です。",      # 4 meeting
    "私の妻の名前は由美です。",                            # 5 wife
    "毎朝ジョギングを五キロしています。",                  # 6 running
    "去年の夏に北海道で運転免許を取りました。",            # 7 licence
    "My sister Lena lives in Toronto and teaches chemistry.",  # 8
    "I switched from coffee to green tea in March.",           # 9
    "我女儿今年九月上小学一年级。",                        # 10 daughter school
    "猫のミケは十二歳になりました。",                      # 11 cat
]
QUESTIONS = [  # (question, language, index of the memory that answers it)
    ("我的狗叫什么名字？", "zh", 0),
    ("我要搬去哪个城市？", "zh", 1),
    ("我有什么食物过敏？", "zh", 2),
    ("我周末喜欢做什么运动？", "zh", 3),
    ("我孩子什么时候开始上学？", "zh", 10),
    ("我妹妹住在哪里？", "zh", 8),
    ("来週、誰と会いますか？", "ja", 4),
    ("妻の名前は何ですか？", "ja", 5),
    ("毎日どんな運動をしていますか？", "ja", 6),
    ("免許はいつ取りましたか？", "ja", 7),
    ("ペットは何歳ですか？", "ja", 11),
    ("朝は何を飲んでいますか？", "ja", 9),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=JSON", help="a settings override")
    args = ap.parse_args(argv)

    from memoryx import Memory

    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    with tempfile.TemporaryDirectory(prefix="memoryx-cjk-") as d:
        m = Memory(data_dir=d, llm="offline", graph_backend="none", **overrides)
        try:
            added = m.add_many([{"messages": t, "user_id": "u"} for t in MEMORIES], infer=False)
            ids = [r["results"][0]["id"] for r in added]
            for q, _, _ in QUESTIONS:  # warm-up: first-call costs (encoder session, statements) not timed
                m.search(q, user_id="u", limit=3)
            print(f"CJK questions, embeddings {m.settings.embedding_model}, {len(MEMORIES)} memories, "
                  f"{len(QUESTIONS)} questions\n\n| path | language | top-1 | top-3 | ms per search |\n|---|---|---|---|---|")
            for mode in (None, "vector"):
                for lang in ("zh", "ja"):
                    qs = [q for q in QUESTIONS if q[1] == lang]
                    top1 = top3 = 0
                    spent = 0.0
                    for q, _, want in qs:
                        start = time.perf_counter()
                        got = [r["id"] for r in m.search(q, user_id="u", limit=3, mode=mode)["results"]]
                        spent += time.perf_counter() - start
                        top1 += bool(got) and got[0] == ids[want]
                        top3 += ids[want] in got
                    print(f"| {mode or 'defaults'} | {lang} | {top1}/{len(qs)} | {top3}/{len(qs)} | "
                          f"{1000 * spent / len(qs):.1f} |")
        finally:
            m.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
