"""Present-tense questions prefer the latest fact.

"Where do I live now?", "What's my current job?", "Who is my manager?", "我现在住在哪里?": when several memories
answer about equally well, the latest one is the answer and the older ones are what it superseded. Among the
candidates whose relevance is within `CLOSE` of the best one, each gets `current_bonus` (a tuning knob) x its
place in time (0 for the oldest, 1 for the newest event). Past-tense and "when" questions are left alone: there
the older memory may be the one asked about. Superseded memories (invalid_at set by an update) are below every
valid one whatever their score (`superseded_last`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memoryx.core import lexicon
from memoryx.core.text import tokenize
from memoryx.search.scoring import epoch_of, event_time

CLOSE = 0.35  # relevance within this of the best candidate's competes on time

# the words of the lexicon tables search.*, in English, Chinese and Japanese
_NOW = lexicon.matcher("search.now")  # a question saying "now": currently, still, 现在, 今は
_CURRENT = lexicon.pattern("search.asks_current", flags=re.I)  # ... or in the present tense: "where do I live"
_PAST = lexicon.matcher("search.past")


# a memory saying the user's relation ended: it states the relation, but not as it stands now
_ENDED = lexicon.matcher("search.ended")
# a question asking for the current value ("what's my job", "where do I live"), not whether ("do I still ...")
_ASKS_VALUE = lexicon.matcher("search.asks_value")


STATEMENT_CHARS = 200  # a longer text (a chat turn) saying "used to" somewhere is not an ended relation


# ... and what holds instead: "I gave up tennis, now I swim instead" states the current value too
_INSTEAD = lexicon.matcher("search.instead")


_CLAUSES = lexicon.compile(r"[,;:!.()。，！]+|\s+<@search.clause_joiner:en>\s+")


def ends_relation(text: str, states_anew: Callable[[str], bool] | None = None) -> bool:
    """"I quit my job at the hospital", "I stopped playing the guitar", 我不再..., 仕事を辞めた: a statement (a
    fact-sized text) saying the relation is over, and not what holds instead - "now", "instead", or, given
    `states_anew` (a clause states the relation asked about), another clause stating it: "Sam and I broke up,
    moving back in with Ruth" ends a partner, not the home asked about."""
    if len(text) > STATEMENT_CHARS or not _ENDED.contains(text) or _INSTEAD.contains(text):
        return False
    return states_anew is None or not any(c.strip() and not _ENDED.contains(c) and states_anew(c.strip())
                                          for c in _CLAUSES.split(text))


def asks_current_value(query: str) -> bool:
    """A present-tense question asking what, where or who ("What's my job?"): a memory saying the relation
    ended does not answer it, though it names it; a yes/no question ("Do I still work there?") it does."""
    return asks_current(query) and _ASKS_VALUE.contains(query)


# a question asking whether something still holds ("Do I still go to the gym?", "Am I still with Sam?")
_STILL = lexicon.matcher("search.still")
_STILL_WORDS = frozenset(tokenize(" ".join(lexicon.table("search.still", "en"))))


def asks_still(query: str) -> bool:
    """A yes/no question whether something still holds: the newest memory on it answers, its end as well as its
    going on ("No more gym for me" for "Do I still go to the gym?")."""
    return _STILL.contains(query) and not _ASKS_VALUE.contains(query) and not _PAST.contains(query)


def ends_topic(text: str, query: str) -> bool:
    """The memory says something the question asks about ended: "No more gym for me, I do yoga now" for "Do I
    still go to the gym?" (a fact-sized text saying a relation ended, sharing a word of the question besides
    "still")."""
    if len(text) > STATEMENT_CHARS or not _ENDED.contains(text):  # (what holds instead may follow: it answers too)
        return False
    return bool((set(tokenize(query)) - _STILL_WORDS) & set(tokenize(text)))


def asks_current(query: str, names_relation: bool = True) -> bool:
    """A question about how things stand, not about the past: one saying "now" (currently, still, 现在, 今は), or
    one in the present tense about a relation that changes (`names_relation`: "where do I live", "who is my
    manager"). "What sport do I do?" names none: a habit, whose newest mention is no better than the others."""
    if _PAST.contains(query):
        return False
    return _NOW.contains(query) or (names_relation and bool(_CURRENT.search(query)))


def prefer_latest(cands: list[dict], bonus: float, value_asked: bool = False, newest: bool = True,
                  statements: bool = False) -> None:
    """Add bonus x place-in-time to the relevance of the candidates close to the best one (in place; `newest`
    False: no such bonus). When the question asks for the current value (`asks_current_value`), a close memory
    saying the relation ended ("I quit my job", "I cycle to work no more") goes `bonus` below the best candidate
    still holding instead: however recent or strong a match, it is not how things stand. With `statements` (the
    question names one relation of the user's held one at a time: where they live, their job), the latest of the
    close memories stating it comes first (`_latest_statement_first`)."""
    if bonus <= 0 or not cands:
        return
    best = max(c["relevance"] for c in cands)
    close = [(c, event_time(c["memory"])) for c in cands if c["relevance"] >= best - CLOSE]
    ended = {id(c) for c, _ in close if value_asked and (c["ended"] if "ended" in c
                                                         else ends_relation(c["memory"].get("memory") or ""))}
    if ended:  # however strong a match, an ended relation is below the best candidate still holding
        holding = max((c["relevance"] for c in cands if id(c) not in ended), default=best)
        for c, _ in close:
            if id(c) in ended:
                c["relevance"] = min(c["relevance"], holding) - bonus
    if newest and statements and _latest_statement_first(close, ended, bonus):
        return
    times = [ts for _, ts in close if ts is not None]
    if not newest or len(times) < 2 or max(times) - min(times) <= 0:
        return
    lo, span = min(times), max(times) - min(times)
    for c, ts in close:
        if id(c) not in ended and ts is not None:
            c["relevance"] += bonus * (ts - lo) / span


def _latest_statement_first(close: list[tuple[dict, float | None]], ended: set[int], bonus: float) -> bool:
    """Two or more close candidates that are statements of the relation the question names ("I live in Leeds",
    later "I moved to Manchester"): each later statement supersedes the earlier ones, however many more words the
    earlier one shares with the question, so they are levelled at the best of them and ordered by time, the
    latest `bonus` above the earliest; the other candidates gain nothing. Only fact-sized texts: a long chat turn
    saying "I moved" in passing is no statement of where the user lives. False: fewer than two such."""
    stating = [(c, ts) for c, ts in close if c.get("states_relation") and id(c) not in ended and ts is not None
               and len(c["memory"].get("memory") or "") <= STATEMENT_CHARS]
    times = [ts for _, ts in stating]
    if len(stating) < 2 or max(times) - min(times) <= 0:
        return False
    top, lo, span = max(c["relevance"] for c, _ in stating), min(times), max(times) - min(times)
    for c, ts in stating:
        c["relevance"] = top + bonus * (ts - lo) / span
    return True


# the words of "now" itself, which say nothing of what is asked about
_NOW_WORDS = frozenset(tokenize(" ".join(lexicon.table("search.now_word"))))


def now_topic(query: str, tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The keyword tokens of what a question saying "now" asks about ("What days is crew practice now?": day,
    crew, practic); none for a question not saying it, or one about the past."""
    if not _NOW.contains(query) or _PAST.contains(query):
        return ()
    return tuple(sorted(set(tokens) - _NOW_WORDS - _STILL_WORDS))


NEWER_TOP = 3  # of the best candidates this many (what a caller reads first), a newer one on the same topic goes first


def newer_on_topic_first(cands: list[dict], topic: tuple[str, ...], bonus: float,
                         someone_else: Callable[[str], bool] = lambda text: False) -> None:
    """For a question saying "now", a memory told later about the same thing as a stronger, older one comes above
    it: "Coach changed practice again, now it's Monday" over "Coach moved practice to Tuesdays" for "What days is
    crew practice now?". The same thing: the later memory shares at least half of the words of the question the
    older one holds, and says it of the same one: the user, or, by `someone_else`, one of their people ("My sister
    Ana lives in Lisbon" is no news of where the user lives). Only the `NEWER_TOP` best candidates compete; the
    later one goes `bonus` above the older one, so its importance or age, added to relevance later, does not turn
    them back (in place)."""
    if not topic or len(cands) < 2:
        return
    asked = set(topic)
    top = sorted((c for c in cands if c["memory"] is not None), key=lambda c: -c["relevance"])[:NEWER_TOP]
    # (fact-sized texts: a long chat turn touching the topic in passing tells no new state of it)
    close = [(c, event_time(c["memory"]), asked & set(tokenize(c["memory"].get("memory") or "")),
              someone_else(c["memory"].get("memory") or "")) for c in top
             if len(c["memory"].get("memory") or "") <= STATEMENT_CHARS]
    close = sorted([x for x in close if x[1] is not None and x[2]], key=lambda x: x[1])
    for i, (older, t_old, held, whose) in enumerate(close):
        for newer, t_new, words, of_whom in close[i + 1:]:
            if t_new > t_old and len(held & words) * 2 >= len(held) and newer["relevance"] <= older["relevance"] \
                    and of_whom == whose and not newer.get("ended"):  # (an ended relation is not how things stand)
                newer["relevance"] = older["relevance"] + bonus


def has_ended(memory: dict, now: float | None) -> bool:
    """Whether the memory is no longer valid at `now` (its invalid_at at or before it; any invalid_at when None)."""
    ended = epoch_of(memory.get("invalid_at"))
    return ended is not None and (now is None or ended <= now)


def superseded_last(ranked: list[dict], now: float | None) -> list[dict]:
    """Memories no longer valid (invalid_at in the past of `now`) after every valid one, order kept otherwise."""
    return ([c for c in ranked if not has_ended(c["memory"], now)]
            + [c for c in ranked if has_ended(c["memory"], now)])
