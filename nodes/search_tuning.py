"""The knobs of search ranking, with their documented defaults.

The main ones are Settings fields (MEMORYX_SEARCH_MODE, _FUSION, _RRF_K, _WEIGHT_RELEVANCE, _WEIGHT_IMPORTANCE,
_WEIGHT_RECENCY, _WEIGHT_ACCESS, _RECENCY_HALF_LIFE_DAYS, _RERANKER). The finer ones below can be overridden
with the JSON setting MEMORYX_SEARCH_TUNING (unknown names are refused), else the default applies. The defaults
were chosen on the LoCoMo retrieval benchmark by category, never per question (bench/locomo_retrieval.py).

Scores, in order:

1. Each recall path returns a best-first list of ``candidate_k`` hits. Weighted fusion (default) min-max
   normalises each path's scores to [0, 1] and sums them with the path weights; RRF sums
   ``weight / (rrf_k + rank)``. Either way the fused relevance is scaled to [0, 1].
2. Boosts on the fused relevance: ``time_bonus`` when the memory's time (created_at) falls in the period the
   query names; ``name_bonus`` x the share of the query's names the memory mentions; ``when_bonus`` for memories
   that state a time (yesterday, last week, 2023, 昨天 ...) when the query asks "when".
3. Context propagation: the ``context_seeds`` best memories lend ``context_weight`` x their relevance
   (x ``context_decay`` per extra step) to the memories stored right before and after them in the same scope
   (``context_window`` on each side, each step at most ``context_max_gap_minutes`` from the seed): the turns of a conversation
   around a hit usually hold the rest of the answer. A memory gets the best such loan added to its own score.
   Only memories of the ``context_types`` (default: episodic, i.e. raw conversation turns) lend and borrow:
   extracted facts stored at the same moment are not each other's context.
4. Final score = (w_rel x relevance + w_imp x importance + w_rec x recency + w_acc x access) / sum(w), where
   recency = 0.5 ** (age_days / half_life) and access = log(1 + access_count) / log(1 + 50), capped at 1.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "candidate_k": 30,          # hits per recall path (at least 2 x limit)
    "weight_dense": 0.45,       # weighted fusion: path weights
    "weight_keyword": 0.55,
    "weight_graph": 0.35,
    "weight_time": 0.30,        # dense recall restricted to the period the query names
    "time_bonus": 0.40,
    "name_bonus": 0.10,
    "when_bonus": 0.10,
    "context_weight": 0.6,
    "context_window": 2,
    "context_decay": 0.7,
    "context_seeds": 10,
    "context_max_gap_minutes": 30.0,
    "context_types": ("episodic",),  # only conversation turns (infer=False stores messages as episodic)
    "rerank_top": 30,
}


def tuning(settings: Any) -> dict[str, Any]:
    """DEFAULTS, overridden by the settings' `search_tuning` map."""
    overrides = dict(getattr(settings, "search_tuning", None) or {})
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        from memoryx.errors import InvalidInputError

        raise InvalidInputError(f"MEMORYX_SEARCH_TUNING has unknown knobs {unknown}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **overrides}
