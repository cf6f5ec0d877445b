"""The finer knobs of search ranking, with their documented defaults.

The main ones are Settings fields (MEMORYX_SEARCH_MODE, _FUSION, _RRF_K, _WEIGHT_RELEVANCE, _WEIGHT_IMPORTANCE,
_WEIGHT_RECENCY, _WEIGHT_ACCESS, _RECENCY_HALF_LIFE_DAYS, _RERANKER). The finer ones below can be overridden
with the JSON setting MEMORYX_SEARCH_TUNING (unknown names and values of the wrong type are refused), else the
default applies. The final order is the fitted model's (`ranker`, memoryx.search.ranker); the weights and bonuses
below order the candidate pool it re-ranks, and the whole list with `ranker: "hand"`, the hand-set order kept to
compare against (its values were chosen on the LoCoMo retrieval benchmark by category, bench/recall/).

Scores, in order:

1. Each recall path returns a best-first list of ``candidate_k`` hits. Weighted fusion (default) min-max
   normalises each path's scores to [0, 1] (a keyword, graph or preference list that ran out of matches is
   scaled from 0 instead) and sums them with the path weights; RRF sums
   ``weight / (rrf_k + rank)``. Either way the fused relevance is scaled to [0, 1].
2. Boosts on the fused relevance: ``time_bonus`` when the memory's time (created_at) falls in the period the
   query names; ``when_bonus`` for memories
   that state a time (yesterday, last week, 2023, 昨天 ...) when the query asks "when" or names a period;
   ``amount_bonus`` for memories that state a figure ($12, 70 hours, 三个小时) when it asks for an amount ("how
   much", "in total", "the difference in price"; memoryx.search.amounts).
3. Context propagation: the ``context_seeds`` best memories lend ``context_weight`` x their relevance
   (x ``context_decay`` per extra step) to the memories stored right before and after them in the same scope
   (``context_window`` on each side, each step at most ``context_max_gap_minutes`` from the seed): the turns of a conversation
   around a hit usually hold the rest of the answer. A memory gets the best such loan added to its own score.
   Only memories of the ``context_types`` (default: episodic, i.e. raw conversation turns) lend and borrow:
   extracted facts stored at the same moment are not each other's context. With ``context_role``, when the
   question asks about one side of a chat (memoryx.search.speakers: "what did I ..."), the turns of the other
   side (metadata.role) neither lend nor borrow: the assistant's long replies, pulled up by the user's turns
   next to them and pulling those up in turn, would otherwise fill the top k with one conversation. A memory at
   least ``alone_chars`` long (800, about what the encoder reads) borrows nothing: a long turn stands alone. An
   aggregation question (step 4) propagates no context unless ``context_aggregate``: its parts are separate
   events in separate conversations, and a hit's neighbours would crowd the others out.
4. Aggregation questions ("how many", "in total", "between", "first ... or") spread the list across sessions:
   each further hit of a session already represented scores x ``session_spread`` (memoryx.search.spread; 1, off,
   by default).
   Recommendation questions ("what should I cook", "suggest a book") add ``preference_bonus`` to memories that
   state a preference (memoryx.search.preferences). Questions about how things stand ("where do I live now",
   "who is my manager") add ``current_bonus`` x place in time to the candidates close to the best, a relation
   that ended goes below the best candidate still holding, and superseded memories rank below
   the valid ones (memoryx.search.current). A question about two events ("how many days between X and Y",
   "which came first, X or Y", "the total of A and B") gets each event's best keyword hit just after the best
   hit (``event_cover``, memoryx.search.events).
5. Final score = (w_rel x relevance + w_imp x importance + w_rec x recency + w_acc x access) / sum(w), where
   recency = 0.5 ** (age_days / half_life) and access = log(1 + access_count) / log(1 + 50), capped at 1.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memoryx.errors import InvalidInputError
from memoryx.settings import Settings


class SearchTuning(BaseModel):
    """The finer ranking knobs (see the module docstring for where each one acts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_k: int = Field(30, description="Hits per recall path (at least 2 x limit).")
    weight_dense: float = Field(0.45, description="Weighted fusion: weight of the dense path.")
    weight_keyword: float = Field(0.55, description="Weighted fusion: weight of the keyword (BM25) path.")
    weight_dense_unread: float = Field(0.15, description=(
        "Weighted fusion: weight of the dense path for a query in a script the encoder was not trained on (Chinese "
        "or Japanese with the English MiniLM, whose vectors of it are close to noise)."))
    weight_crosslingual: float = Field(0.30, description=(
        "Weighted fusion: weight of the multilingual index's list of the memories written in another script than "
        "the query's (owners who write Chinese or Japanese; memoryx.stores.vectors.multilingual). Its list for a "
        "query the main encoder cannot read, in the query's own script, weighs weight_dense."))
    crosslingual_margin: float = Field(0.05, gt=0, description=(
        "How far above the question's floor (its similarity to sentences of that script that answer nothing) a "
        "memory in another script than the question's must be for the whole weight_crosslingual "
        "(memoryx.search.crosslingual); nearer the floor, proportionally less."))
    weight_graph: float = Field(0.35, description="Weighted fusion: weight of the graph path.")
    weight_time: float = Field(0.30, description="Weight of the dense recall restricted to the period the query names.")
    time_bonus: float = Field(0.40, description="Added when the memory's time falls in the period the query names.")
    naming_bonus: float = Field(0.15, description=(
        "Added to a memory stating the relation a question asks the name of when it gives a name ('My dog is "
        "called Pepper' for 'what's my dog's name', not 'My dog loves the beach')."))
    attribute_bonus: float = Field(0.15, description=(
        "Added to a memory stating the relation a question names when it also says what the question asks of "
        "that person ('ユーザーの息子の誕生日は十一月五日です' for 'when is my son's birthday', not 'My son is 7')."))
    when_bonus: float = Field(0.10, description=(
        "Added to memories that state a time when the query asks 'when' or names a period."))
    context_weight: float = Field(0.6, description="Share of a seed's relevance lent to its neighbouring memories.")
    context_window: int = Field(2, description="Neighbouring memories on each side of a seed.")
    context_decay: float = Field(0.7, description="Factor per extra step away from the seed.")
    context_seeds: int = Field(10, description="Best memories that lend to their neighbours.")
    context_role: bool = Field(True, description=(
        "A question about one side of a chat ('what did I ...'): the other side's turns neither lend nor borrow "
        "context."))
    context_aggregate: bool = Field(False, description=(
        "Aggregation questions ('how many', 'in total', 'between X and Y') lend and borrow context too (off: "
        "their parts are separate events in separate conversations)."))
    alone_chars: int = Field(800, description=(
        "A memory at least this long (characters) borrows no context: a long chat turn says what it says (0: all borrow)."))
    context_max_gap_minutes: float = Field(30.0, description="Largest time between two steps of a neighbourhood.")
    # only conversation turns: infer=False stores messages as episodic
    context_types: tuple[str, ...] = Field(("episodic",), description="Memory types that lend and borrow context.")
    # off by default: on the dev sets it cost two multi-session questions their second evidence turn at top 10
    # (LongMemEval) and moved LoCoMo by +0.001; 0.85 is the value measured
    session_spread: float = Field(1.0, description=(
        "Aggregation questions: factor per further hit of a session already in the list (1 = no spreading)."))
    amount_bonus: float = Field(0.10, description=(
        "Added to memories that state a figure when the query asks for an amount ('how much', 'in total')."))
    preference_bonus: float = Field(0.15, description=(
        "Recommendation questions: added to memories that state a preference (likes, dislikes, favourites)."))
    current_bonus: float = Field(0.15, description=(
        "Questions about how things stand now: added x place in time (newest 1) to candidates close to the best one."))
    role_bonus: float = Field(0.25, description=(
        "Added to chat turns of the side the question asks about (the user's for 'my ...', the assistant's for "
        "'what did you recommend')."))
    relation_bonus: float = Field(0.5, description=(
        "Added to memories stating the relation a question about the user names ('my dog' -> has_dog)."))
    event_cover: bool = Field(True, description=(
        "A question about two events: each event's best keyword hit is moved up to just after the best hit."))
    ranker: Literal["fitted", "hand"] = Field("fitted", description=(
        "The final order: 'fitted', the model fitted on the dev sets over each candidate's signals "
        "(memoryx.search.ranker, weights in search/ranker_model.json), or 'hand', the hand-set weights and "
        "bonuses above, kept to compare against."))
    rerank_top: int = Field(30, description="Candidates handed to the reranker, when one is configured.")

    def __getitem__(self, knob: str) -> Any:
        """A knob by its JSON name, as MEMORYX_SEARCH_TUNING writes it."""
        return getattr(self, knob)


DEFAULTS: dict[str, Any] = SearchTuning().model_dump()


def tuning(settings: Settings) -> SearchTuning:
    """The knobs: DEFAULTS overridden by the settings' `search_tuning` map."""
    overrides = dict(settings.search_tuning)
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise InvalidInputError(f"MEMORYX_SEARCH_TUNING has unknown knobs {unknown}; known: {sorted(DEFAULTS)}")
    try:
        return SearchTuning(**overrides)
    except ValidationError as exc:
        raise InvalidInputError(f"MEMORYX_SEARCH_TUNING has a bad value: {exc}") from exc
