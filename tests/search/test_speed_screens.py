"""The shortcuts of the candidates' phrase checks answer as the checks themselves: a case-insensitive pattern matched
through its case-sensitive twin on lowered ASCII text (memoryx.core.caseless), and the relation checks that skip a
text holding none of the relation's words (memoryx.search.relations `_may_name`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memoryx.core import lexicon
from memoryx.core.caseless import Caseless, twin_of
from memoryx.core.text import _word_token, tokenize
from memoryx.search import relations
from memoryx.search.relation_terms import RELATIONS, relation_words
from memoryx.search.relations import cjk_relation, people_of, states_relation

LIVES = Path(__file__).resolve().parents[2] / "bench" / "recall" / "lives"


def _lives() -> tuple[list[str], list[str]]:
    texts, questions = [], []
    for path in sorted(LIVES.glob("*.json")):
        life = json.loads(path.read_text(encoding="utf-8"))
        texts += [s["text"] for s in life["statements"]]
        questions += [q["question"] for q in life["questions"]]
    return texts, questions


def _variants(text: str) -> list[str]:
    return [text, text.upper(), text.title(), text.swapcase(), f"Yesterday I said: {text}"]


@pytest.mark.parametrize("name", ["search.states_time", "search.states_amount", "search.preference",
                                  "search.food_stated", "search.states_relation"])
def test_the_twin_finds_what_the_pattern_finds(name):
    texts, questions = _lives()
    words = [w for ws in RELATIONS.values() for w in ws]
    for rx in lexicon.patterns(name, flags=re.I):
        fast = Caseless(rx)
        assert twin_of(rx) is not None  # these are the patterns the search reads on every candidate
        for text in [v for t in texts + questions + words for v in _variants(t)]:
            want = [(m.span(), [g and g.lower() for g in m.groups()]) for m in rx.finditer(text)]
            got = [(m.span(), [g and g.lower() for g in m.groups()]) for m in fast.finditer(text)]
            assert got == want, (rx.pattern, text)
            assert (fast.search(text) is None) == (rx.search(text) is None)


def test_a_pattern_the_twin_would_read_otherwise_keeps_itself():
    assert twin_of(re.compile(r"\bParis\b", re.I)) is None  # an upper-case letter
    assert twin_of(re.compile(r"[A-Z]\w+", re.I)) is None
    assert twin_of(re.compile(r"(?-i:Mr)\s+\w+", re.I)) is None  # a case-sensitive part
    assert twin_of(re.compile("caf\u00e9", re.I)) is None  # a cased letter beyond ASCII
    assert twin_of(re.compile("\u017f", re.I)) is None  # the long s, which IGNORECASE reads as "s"
    assert twin_of(re.compile("[\u0100-\u0200]", re.I)) is None
    assert twin_of(re.compile("paris")) is None  # not case-insensitive: nothing to gain
    assert twin_of(re.compile(r"\bparis\b|巴黎|[0-9]+\s*円", re.I)) is not None
    rx = re.compile(r"\btokyo\b|東京", re.I)
    fast = Caseless(rx)
    for text in ["TOKYO", "ToKyo 東京", "Tōkyō, Tokyo", "tokyo\u0301", "TOKYOS"]:  # not ASCII: the pattern itself
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in rx.finditer(text)]


def test_a_keyword_token_less_a_final_y_begins_its_word():
    """What `_may_name` rests on: memoryx.core.text's stemming only cuts a word's end, or ends it in "y"."""
    texts, questions = _lives()
    words = {w for text in texts + questions for w in re.findall(r"[a-z0-9]+", text.lower())}
    words |= {w for ws in RELATIONS.values() for w in ws if w.isascii() for w in re.findall(r"[a-z0-9]+", w.lower())}
    words |= {"cities", "studied", "running", "stopped", "hoping", "boxes", "agreed", "families", "dying", "eyes"}
    for word in words:
        token = _word_token(word)
        if token is not None:
            assert word.startswith(token[:-1] if token.endswith("y") else token), (word, token)


def _states_relation_in_full(text: str, tokens: set[str], cjk: set[str]) -> bool:
    """states_relation without the shortcut: every pattern read on every text."""
    from memoryx.search.current import STATEMENT_CHARS

    if tokens and any(set(tokenize(m.group(m.lastindex or 1))) & tokens for rx in relations._STATES
                      for m in rx.pattern.finditer(text)):
        return True
    if tokens and len(text) <= STATEMENT_CHARS and (
            any(set(tokenize(m.group(1))) & tokens for rx in relations._STATES_AS_CHATS_DO for m in rx.finditer(text))
            or (tokens & relations.HOME_WORDS and relations._HOME_IS.search(text))):
        return True
    return bool(cjk) and relations._states_cjk(text, cjk)


def test_the_relation_checks_answer_as_read_in_full():
    texts, questions = _lives()
    texts = [v for t in texts for v in (t, t.upper(), f"{t} and my sister's 1,000 dogs")]
    asked = ["What's my dog's name?", "Where do I live?", "What do I do for a living?", "我的狗叫什么名字？"]
    asked += [q for q in questions if relation_words(q)]
    kinds = {}  # one question of each set of words (the lives ask ~100 kinds)
    for q in asked:
        kinds.setdefault((frozenset(relation_words(q)), frozenset(cjk_relation(q))), q)
    assert len(kinds) > 20
    for q in list(kinds.values())[:30]:
        tokens, cjk = relation_words(q), cjk_relation(q)
        for text in texts:
            assert states_relation(text, tokens, cjk) == _states_relation_in_full(text, tokens, cjk), (q, text)
        want = {m.group(2).removesuffix("'s").removesuffix("’s") for t in texts for m in relations._PERSON_OF.finditer(t)
                if set(tokenize(m.group(1))) & tokens}
        want |= {m.group(2) for t in texts for m in relations._PERSON_OF_CJK.finditer(t) if m.group(1) in cjk}
        assert people_of(texts, tokens, cjk) == want, q
    # a token of digits may be a number read without its commas: no shortcut then
    assert relations._word_starts(frozenset({"1000", "dog"})) is None
    assert states_relation("I have 1,000 books", {"1000"}, set()) == _states_relation_in_full(
        "I have 1,000 books", {"1000"}, set())
