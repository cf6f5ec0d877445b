"""The fitted ranking's feature builder (memoryx.search.ranker.feature_matrix) gives, bit for bit, the vectors of the
plain per-candidate builder below, which the shipped model was fitted on; and the model's scores of them are
the plain row-by-row scores. The model is refitted from traces of these features, so a faster builder must
not move a single value: compared over varied candidate pools and over the pools real searches rank."""

from __future__ import annotations

import math
import random
import struct
import unicodedata
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from memoryx.search import ranker
from memoryx.search.access import today
from memoryx.search.ranker import BEST, FEATURES, MATCH_SIGNALS, NEWER_TOP, PATHS, SIMILAR, STATEMENT_CHARS
from memoryx.search.scoring import access_score, decay, epoch_of, event_time
from memoryx.settings import Settings

# ------------------------------------------------------------------------------ the plain builder, as fitted


def _words(text: str) -> frozenset[str]:
    return frozenset(w.strip(".,!?;:()\"'“”‘’。，！？、") for w in text.lower().split()) - {""}


def _newer_similar(cands: list[dict]) -> dict[int, float]:
    top = [c for c in cands[:NEWER_TOP] if len(c["memory"].get("memory") or "") <= STATEMENT_CHARS]
    facts = [(c, event_time(c["memory"]), _words(c["memory"].get("memory") or ""),
              c["memory"].get("user_id") or c["memory"].get("agent_id")) for c in top]
    out: dict[int, float] = {}
    for c, ts, words, owner in facts:
        if ts is None or not words:
            continue
        best = 0.0
        for other, ts2, words2, owner2 in facts:
            if other is c or ts2 is None or ts2 <= ts or owner2 != owner or not words2:
                continue
            overlap = len(words & words2) / len(words | words2)
            best = max(best, overlap)
        if best >= SIMILAR:
            out[id(c)] = best
    return out


def _place(ts: float, lo: float, span: float) -> float:
    days, span_days = math.floor((ts - lo) / ranker.DAY_SECONDS), math.floor(span / ranker.DAY_SECONDS)
    return days / span_days if span_days > 0 else 0.0


def reference_features(cands: list[dict], plan, settings, now: float) -> list[list[float]]:
    half = float(settings.recency_half_life_days)
    day = today()
    times = [event_time(c["memory"]) for c in cands]
    known = [t for t in times if t is not None]
    lo, span = (min(known), max(known) - min(known)) if known else (0.0, 0.0)
    newer = _newer_similar(cands)
    best = [t for t in times[:BEST] if t is not None]
    best_lo, best_span = (min(best), max(best) - min(best)) if best else (0.0, 0.0)
    current = 1.0 if (plan.current or plan.current_value or plan.still) else 0.0
    reads = 1.0 if plan.encoder_reads_query else 0.0
    best_companion = max((c["companion"] for c in cands if "companion" in c), default=0.0)
    rows = []
    for i, (c, ts) in enumerate(zip(cands, times)):
        mem, sig = c["memory"], c.get("signals") or {}
        norm, ranks = c.get("path_norm") or {}, c.get("path_ranks") or {}
        text = mem.get("memory") or ""
        imp = mem.get("importance")
        ended_at = epoch_of(mem.get("invalid_at"))
        later = _place(ts, lo, span) if ts is not None else 0.0
        later_best = _place(ts, best_lo, best_span) if i < BEST and ts is not None else 0.0
        similar = newer.get(id(c), 0.0)
        said = (mem.get("metadata") or {}).get("role")
        row = [float(norm.get(p, 0.0)) * (reads if p == "dense" else 1.0) for p in PATHS]
        row += [(1.0 / (1.0 + ranks[p]) if p in ranks else 0.0) * (reads if p == "dense" else 1.0) for p in PATHS]
        raw = c.get("path_scores") or {}
        row += [float(raw.get("dense", 0.0)) * reads, float(raw.get("multilingual", 0.0)),
                float(c.get("centered", 0.0))]
        row.append(float(sig.get("context", 0.0)))
        row += [float(sig.get(s, 0.0)) for s in MATCH_SIGNALS]
        row += [decay(ts, half, now), 0.5 if imp is None else max(0.0, min(1.0, float(imp))), access_score(mem, day),
                min(1.0, math.log1p(len(text)) / math.log1p(2000)),
                1.0 if mem.get("memory_type") == "episodic" else 0.0,
                1.0 if ended_at is not None and ended_at <= now else 0.0,
                1.0 if mem.get("status") == "summarized" else 0.0,
                similar, later, later_best, current * later, current * later_best, current * similar,
                current * (1.0 if c.get("ended") else 0.0), float(norm.get("dense", 0.0)) * (1.0 - reads),
                1.0 if plan.role is not None and said and said != plan.role else 0.0,
                1.0 if c.get("covers") else 0.0]
        row.append(1.0 if any(unicodedata.category(ch) == "Nd" for ch in text) else 0.0)  # a digit, any script
        read = "companion" in c  # the companion encoder's cosine, and less the best read one's
        row += [c["companion"] if read else 0.0, c["companion"] - best_companion if read else 0.0]
        rows.append(row)
    return rows


def reference_scores(model, rows: list[list[float]]) -> list[float]:
    out = []
    for row in rows:
        z = model.scale * sum(w * x for w, x in zip(model.weights, row)) + model.bias
        out.append(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))
    return out


def bits(rows) -> list[list[bytes]]:
    """Each value's IEEE bytes: equal floats that differ in the sign of a zero differ here too."""
    return [[struct.pack("<d", float(v)) for v in row] for row in rows]


# ------------------------------------------------------------------------------ varied pools

STATEMENTS = ["I live in Porto now", "I moved to Lisbon last spring", "I live in Lisbon now with my sister",
              "My dog Rex is three", "My dog Rex turned four today", "I work as a nurse on night shifts",
              "I quit my job as a nurse", "We talked about the trip to Kyoto", "用户的奶奶住在斯德哥尔摩",
              "周六早上我一般跟科室同事去打羽毛球。", "今日はいい天気ですね。", "Sold the old camera for 200 euros!",
              "会議は３時から", "x² is not a number I wrote",
              "", "ok", "What a week... (really)", "I started pottery on Thursdays", "I stopped pottery, no time",
              "x " * 200]
NOW = datetime(2025, 1, 20, 12, tzinfo=timezone.utc)


def _time(rng: random.Random) -> str | None:
    pick = rng.random()
    if pick < 0.08:
        return None
    when = NOW - timedelta(days=rng.randint(0, 900), seconds=rng.randint(0, 86400))
    if pick < 0.15:
        return when.replace(tzinfo=None).isoformat()  # naive: UTC
    if pick < 0.22:
        return when.isoformat().replace("+00:00", "Z")
    if pick < 0.28:
        return when.astimezone(timezone(timedelta(hours=9))).isoformat()
    if pick < 0.3:
        return "not a time"
    return when.isoformat()


def pool(rng: random.Random, n: int) -> list[dict]:
    owners = ["u", "u", "u", "v", None]
    out = []
    for i in range(n):
        paths = rng.sample(list(PATHS) + ["context", "other"], rng.randint(0, 4))
        mem = {"memory": rng.choice(STATEMENTS) + (f" {rng.randint(0, 3)}" if rng.random() < 0.3 else ""),
               "user_id": rng.choice(owners), "agent_id": rng.choice([None, "bot"]),
               "valid_at": _time(rng), "created_at": _time(rng) if rng.random() < 0.7 else None,
               "importance": rng.choice([None, 0.5, 0.9, 1.7, -0.2, rng.random()]),
               "memory_type": rng.choice(["episodic", "fact", "semantic"]),
               "status": rng.choice(["active", "summarized", "staged"]),
               "invalid_at": rng.choice([None, None, None, (NOW - timedelta(days=3)).isoformat(),
                                         (NOW + timedelta(days=3)).isoformat()]),
               "access_count": rng.choice([None, 0, 1, 3, 70]),
               "last_accessed_at": rng.choice([None, f"{today()}T08:00:00+00:00", "2024-05-01T10:00:00+00:00"]),
               "metadata": rng.choice([None, {}, {"role": "user"}, {"role": "assistant"}, {"role": ""}])}
        c = {"id": str(i), "memory": mem,
             "path_norm": {p: rng.choice([0.0, 1.0, rng.random()]) for p in paths},
             "path_ranks": {p: rng.randint(0, 60) for p in paths},
             "path_scores": {p: round(rng.uniform(-0.2, 1.0), 6) for p in paths} if rng.random() < 0.9 else None,
             "signals": {s: rng.choice([1.0, 0.5, True, rng.random()])
                         for s in rng.sample([*MATCH_SIGNALS, "context", "unused"], rng.randint(0, 4))}}
        if rng.random() < 0.1:
            c["ended"] = True
        if rng.random() < 0.05:
            c["covers"] = ["a"]
        if rng.random() < 0.3:
            c["centered"] = rng.random()
        if rng.random() < 0.8:
            c["companion"] = rng.uniform(-0.2, 0.9)
        out.append(c)
    return out


PLANS = [SimpleNamespace(current=a, current_value=b, still=c, encoder_reads_query=r, role=role)
         for a, b, c, r, role in [(False, False, False, True, None), (True, False, False, True, "user"),
                                  (False, True, False, False, "assistant"), (False, False, True, True, "user"),
                                  (False, False, False, False, None)]]


@pytest.mark.parametrize("seed", range(12))
def test_the_builder_gives_the_plain_builders_values(seed):
    rng = random.Random(seed)
    settings = Settings()
    now = NOW.timestamp()
    for n in (0, 1, 2, 7, 31, 100, 160):
        cands = pool(rng, n)
        plan = PLANS[(seed + n) % len(PLANS)]
        expected = reference_features(cands, plan, settings, now)
        got = ranker.feature_matrix(cands, plan, settings, now)
        assert got.shape == (n, len(FEATURES))
        assert bits(got) == bits(expected)
        assert ranker.features(cands, plan, settings, now) == expected
        model = ranker.fitted_model()
        assert model.scores(got) == reference_scores(model, expected)


def test_superseding_statements_are_found_among_the_best():
    """The pool's best statements, one later than another of the same owner with most words in common."""
    said = [("I live in Porto now", "2024-01-05"), ("I live in Lisbon now", "2024-06-01"),
            ("My dog Rex is three", "2024-02-01"), ("I live in Lisbon now", "2024-09-01")]
    cands = [{"id": str(i), "memory": {"memory": t, "user_id": "u", "valid_at": f"{d}T10:00:00+00:00"}}
             for i, (t, d) in enumerate(said)]
    plan = PLANS[1]
    rows = ranker.feature_matrix(cands, plan, Settings(), NOW.timestamp())
    col = FEATURES.index("newer_similar")
    assert rows[:, col].tolist() == [4 / 6, 1.0, 0.0, 0.0]
    assert bits(rows) == bits(reference_features(cands, plan, Settings(), NOW.timestamp()))


def test_memories_written_moments_apart_rank_alike_whatever_the_milliseconds():
    """A loop of adds writes memories milliseconds apart, a different number of them on each run: their place in
    time must not carry those milliseconds (the same words written the same way rank the same way), while days
    apart still order them."""
    plan, settings, now = PLANS[1], Settings(), NOW.timestamp()
    texts = ["I live in Porto", "My dog Rex is three", "I work as a nurse", "I started pottery"]
    cols = [FEATURES.index(f) for f in ("later_in_time", "later_among_best", "current_x_later",
                                          "current_x_later_among_best")]

    def places(gaps_ms: list[float]) -> list[list[float]]:  # the gap after each memory
        start = NOW - timedelta(days=2)
        at = [start + timedelta(milliseconds=sum(gaps_ms[:i])) for i in range(len(texts))]
        cands = [{"id": str(i), "memory": {"memory": t, "user_id": "u", "created_at": when.isoformat()}}
                 for i, (t, when) in enumerate(zip(texts, at))]
        return ranker.feature_matrix(cands, plan, settings, now)[:, cols].tolist()

    assert places([3, 2, 9, 4]) == places([40, 1, 1, 250]) == [[0.0] * 4] * 4
    # an add with extraction takes seconds: a loop of them, minutes, still one place
    assert places([10_000, 60_000, 45_000, 0]) == places([1_000, 3_000, 90_000, 0]) == [[0.0] * 4] * 4
    assert places([3_600_000, 7_200_000, 10_000_000, 0]) == [[0.0] * 4] * 4  # within a day of the first
    days = places([86_400_000, 2 * 86_400_000, 86_400_000, 0])  # a day, two days, a day between
    assert [row[0] for row in days] == [0.0, 0.25, 0.75, 1.0]


# ------------------------------------------------------------------------------ pools real searches rank


@pytest.mark.integration
def test_the_pools_of_real_searches_get_the_plain_builders_values(tmp_path, monkeypatch):
    import memoryx.nodes.rank as rank_node
    from memoryx import Memory
    from tests.support import shared_embeddings

    seen: list[tuple] = []
    real = rank_node.feature_matrix

    def spy(cands, plan, settings, now):
        rows = real(cands, plan, settings, now)
        seen.append((rows, reference_features(cands, plan, settings, now)))
        return rows

    monkeypatch.setattr(rank_node, "feature_matrix", spy)
    said = [("2024-01-05", "I live in Porto now."), ("2024-03-10", "My dog Rex is three."),
            ("2024-05-02", "I moved to Lisbon with my sister Ana."), ("2024-06-11", "I work as a nurse on nights."),
            ("2024-08-20", "I quit the hospital job, I teach biology now."), ("2024-09-01", "Rex turned four!"),
            ("2024-10-13", "We talked about a trip to Kyoto in spring."), ("2024-11-02", "我周六早上去打羽毛球。"),
            ("2024-12-24", "I live in Lisbon now, near the river.")]
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        for day, text in said:
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="u",
                  infer=False)
        m.add([{"role": "assistant", "content": "Lisbon is lovely in spring.",
                "timestamp": "2024-12-24T19:01:00+00:00"}], user_id="u", infer=False)
        for q in ["Where do I live now?", "What is my job?", "How old is my dog?", "What did I do in May 2024?",
                  "我住在哪里？", "Do you remember the trip we talked about?", "what sport on Saturdays"]:
            m.search(q, user_id="u", now="2025-01-20T12:00:00+00:00", limit=30)
    assert len(seen) == 7 and all(len(rows) > 3 for rows, _ in seen)
    for rows, expected in seen:
        assert bits(rows) == bits(expected)
