"""The shared benchmark data as add_many items and questions: LoCoMo dev and LongMemEval_S dev / validation
(../shared/data, its README says how to use each), read as the earlier benches read them.

LoCoMo: each conversation is a group chat (`group_id="locomo-<sample_id>"`), each turn one message {"role",
"content": "Speaker: text", "name", "timestamp": the session's date} with metadata {"dia_id"} (the turn's words,
no photo captions). Questions: categories 1-4 with evidence; the evidence units are dia_ids.

LongMemEval_S: each question is one user's history (`user_id="lme-<question_id>"`), each user turn of its haystack
one message {"role", "content", "timestamp": the session's date + the turn's index in seconds} with metadata
{"session", "turn"}: the units LongMemEval's own retrieval ranks (src/retrieval/run_retrieval.py indexes a
session's user turns, at turn and at session level; BM25 here ranks the same). `LME_ROLES = ("user",
"assistant")` (run.py --lme-turns all) stores the assistant's replies too, as distractors the official protocol
does not have, at about seven times the encoder work (the replies hold 87 % of the haystacks' characters). Evidence: the user turns marked has_answer in the answer sessions
(turn level) and the answer sessions (session level), as LongMemEval's eval_utils names them.
"""

from __future__ import annotations

import gzip
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

DATA = next((p for p in (Path(__file__).resolve().parents[3] / "shared" / "data", Path("/work/shared/data"))
             if p.exists()), Path("/work/shared/data"))
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LME_FILES = {"lme-dev": "longmemeval_s_dev.json", "lme-val": "longmemeval_s_val.json.gz"}
LME_ROLES: tuple[str, ...] = ("user",)  # whose turns a LongMemEval haystack holds (run.py --lme-turns)


# ------------------------------------------------------------------------------------------------- LoCoMo


def locomo(path: Path | None = None) -> tuple[list[dict], list[dict]]:
    """(add_many items, one per turn; questions) of LoCoMo dev. A question: {"qid", "qtype", "query",
    "group_id", "evidence": [dia_id]}."""
    from memoryx.ingest import locomo as reader

    items, questions = [], []
    for sample in json.loads((path or DATA / "locomo_dev.json").read_text()):
        group = f"locomo-{sample['sample_id']}"
        for session in reader.sessions(sample):
            for dia_id, message in reader.turn_messages(sample, session, captions=False):
                items.append({"messages": [message], "group_id": group, "metadata": {"dia_id": dia_id}})
        for n, qa in enumerate(reader.questions(sample)):
            if qa.get("category") in LOCOMO_CATEGORIES and qa["evidence"]:
                questions.append({"qid": f"{sample['sample_id']}-q{n}", "qtype": LOCOMO_CATEGORIES[qa["category"]],
                                  "query": qa["question"], "group_id": group, "evidence": list(qa["evidence"])})
    return items, questions


def frac(found: list[str | None], evidence: list[str], k: int) -> float:
    """LoCoMo's figure: the fraction of the evidence turns in the top k."""
    top = set(found[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


# -------------------------------------------------------------------------------------------- LongMemEval


def parse_date(text: str) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 15:08" as a UTC datetime."""
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M").replace(tzinfo=timezone.utc)


def read_lme(name: str) -> list[dict]:
    path = DATA / LME_FILES[name]
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    return json.loads(path.read_text())


def spread(questions: list, n: int | None) -> list:
    """n questions taken evenly through the list (the files are stratified by type), or all."""
    if not n or n >= len(questions):
        return list(questions)
    step = len(questions) / n
    return [questions[int(i * step)] for i in range(n)]


def turn_id(sid: str, i: int) -> str:
    return f"{sid}_{i + 1}"


def lme_items(q: dict) -> list[dict]:
    """add_many items, one per non-empty turn (of a role in LME_ROLES) of the question's haystack."""
    user = f"lme-{q['question_id']}"
    out = []
    for sid, date, session in zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]):
        start = parse_date(date)
        for i, turn in enumerate(session):
            if not (turn.get("content") or "").strip() or turn["role"] not in LME_ROLES:
                continue
            ts = (start + timedelta(seconds=i)).isoformat()
            for piece in _pieces(turn["content"]):  # a turn over add()'s input limit: in pieces, as add() asks
                out.append({"messages": [{"role": turn["role"], "content": piece, "timestamp": ts}],
                            "user_id": user, "metadata": {"session": sid, "turn": i}})
    return out


def _pieces(text: str) -> list[str]:
    """`text` cut at whitespace into pieces within max_input_chars (a few LongMemEval turns are longer)."""
    from memoryx.settings import Settings

    limit = Settings.model_fields["max_input_chars"].default
    out = []
    while len(text) > limit:
        cut = text.rfind(" ", limit // 2, limit)
        cut = cut if cut > 0 else limit
        out.append(text[:cut])
        text = text[cut:]
    return out + [text]


def lme_evidence(q: dict) -> tuple[set[str], set[str]]:
    """(evidence turn ids, evidence session ids) as the official evaluation names them."""
    sessions = {sid for sid in q["haystack_session_ids"] if "answer" in sid}
    turns = {turn_id(sid, i) for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"])
             if sid in sessions for i, t in enumerate(session) if t.get("has_answer") and t["role"] == "user"}
    return turns, sessions


def lme_docs(q: dict, roles: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """(turn id, text) of every non-empty turn of a role in `roles` (default LME_ROLES): what BM25 ranks."""
    roles = LME_ROLES if roles is None else roles
    return [(turn_id(sid, i), t["content"]) for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"])
            for i, t in enumerate(session) if (t.get("content") or "").strip() and t["role"] in roles]


def _dcg(rel: list[float], k: int) -> float:
    import math

    rel = rel[:k]
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i + 1) for i, r in enumerate(rel[1:], start=2))


def _metrics(ranked: list[str], correct: set[str], k: int, corpus: int) -> dict[str, float]:
    """recall_any@k, recall_all@k, ndcg_any@k of a best-first id list (LongMemEval's eval_utils)."""
    top = set(ranked[:k])
    ideal = _dcg([1.0] * min(len(correct), corpus), k)
    return {f"recall_any@{k}": float(any(c in top for c in correct)),
            f"recall_all@{k}": float(all(c in top for c in correct)),
            f"ndcg_any@{k}": _dcg([1.0 if u in correct else 0.0 for u in ranked], k) / ideal if ideal > 0 else 0.0}


def sessions_of(turns: list[str]) -> list[str]:
    """A turn ranking as a session ranking: each session at its first turn's place."""
    return list(dict.fromkeys(t.rsplit("_", 1)[0] for t in turns))


def lme_scores(ranked_turns: list[str], ev_turns: set[str], ev_sessions: set[str], n_turns: int,
               n_sessions: int) -> dict[str, float]:
    """Turn- and session-level metrics at 5 and 10 of a turn ranking (duplicates, e.g. a long turn's chunks,
    count at their first place)."""
    ranked_turns = list(dict.fromkeys(ranked_turns))
    out: dict[str, float] = {}
    for k in (5, 10):
        out.update({f"turn_{m}": v for m, v in _metrics(ranked_turns, ev_turns, k, n_turns).items()})
        out.update({f"session_{m}": v for m, v in _metrics(sessions_of(ranked_turns), ev_sessions, k,
                                                           n_sessions).items()})
    return out


# ------------------------------------------------------------------------------------------------- BM25


def bm25(query: str, docs: list[tuple[str, str]], k1: float = 1.5, b: float = 0.75, depth: int = 30) -> list[str]:
    """Okapi BM25 over (id, text) docs with lowercased whitespace tokens: the benchmarks' baseline. Ties keep the
    documents' order."""
    import math
    from collections import Counter

    toks = [t.lower().split() for _, t in docs]
    n = len(toks)
    avg = sum(map(len, toks)) / max(1, n)
    df = Counter(w for d in toks for w in set(d))
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in set(query.lower().split()) if df[w]}
    scores = []
    for i, d in enumerate(toks):
        tf = Counter(w for w in d if w in idf)
        scores.append((sum(idf[w] * c * (k1 + 1) / (c + k1 * (1 - b + b * len(d) / avg)) for w, c in tf.items()), -i))
    order = sorted(range(n), key=lambda i: scores[i], reverse=True)
    return [docs[i][0] for i in order[:depth]]
