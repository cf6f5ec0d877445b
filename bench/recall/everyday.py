"""The everyday lives: one user's years told to a chatbot, and the questions they later ask it. The one reader of
bench/recall/lives/*.json.

A life file: {"name", "number", "blind" (written by someone who had not read the ranking or extraction code),
"written" (the date it was first committed), "source" (the module it was first written in), "notes" (the
writer's), "start", "now" (ISO; the questions are asked at "now"), "statements": [{"day": days after start,
"text": what the user said, "replies": [the assistant's replies, optional]}], "questions": [{"question",
"expected": words the answering memory must hold ("a|b": either), "language": en|zh|ja, "kind"}]}.

A question's `kind` is derived, never labelled by hand (derive_kind, run once when a life is written):
"other language" when every statement holding the expected words is in another language than the question;
"no shared word" when the answering statement and the question share no word (a paraphrase: English words of
three letters or more outside a few function words, Chinese and Japanese two-character runs); "shared words"
otherwise; "no single statement" when no statement holds every expected word.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

LIVES_DIR = Path(__file__).resolve().parent / "lives"
KINDS = ("shared words", "no shared word", "other language", "no single statement")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_EN_WORD = re.compile(r"[a-z0-9][a-z0-9'.,-]*[a-z0-9]|[a-z0-9]")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
# function words an English question shares with nearly any statement (the rule's only list)
_FUNCTION = frozenset("the and for you your are was were what what's which who who's when where how did does do "
                      "that this with have has had from about any not but can all its it's i'm me my our we "
                      "his her their they them is".split())


def load_lives(names: list[str] | None = None) -> list[dict]:
    """Every life (or those named, by name or number), in order."""
    lives = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(LIVES_DIR.glob("*.json"))]
    if names:
        wanted = {str(n) for n in names}
        lives = [life for life in lives if life["name"] in wanted or str(life["number"]) in wanted]
        if not lives:
            raise SystemExit(f"no life named {sorted(wanted)}; the lives are in {LIVES_DIR}")
    return lives


def life(name: str) -> dict:
    """One life by name ("tenth") or number."""
    return load_lives([name])[0]


def user_of(life: dict, raw: bool) -> str:
    return f"life-{life['name']}" + ("-raw" if raw else "")


def turns(life: dict) -> list[tuple[str, list[dict]]]:
    """(ISO time, the chat messages) of each statement, as a chatbot hands them to Memory.add."""
    start = datetime.fromisoformat(life["start"])
    out = []
    for s in life["statements"]:
        when = (start + timedelta(days=s["day"])).isoformat()
        msgs = [{"role": "user", "content": s["text"], "timestamp": when}]
        msgs += [{"role": "assistant", "content": r, "timestamp": when} for r in s.get("replies", [])]
        out.append((when, msgs))
    return out


def holds(text: str, expected: list[str]) -> bool:
    """The bench's answer rule: the text holds every expected word (case-insensitive; "a|b": either)."""
    text = text.lower()
    return all(any(alt.lower() in text for alt in w.split("|")) for w in expected)


def answered_at(results: list[dict], expected: list[str]) -> int | None:
    """The 1-based rank of the first result that answers, or None."""
    for k, r in enumerate(results, 1):
        if holds(r["memory"], expected):
            return k
    return None


def language_of(text: str) -> str:
    """en / zh / ja by script: kana makes Japanese; Han characters a third of the letters or more, Chinese."""
    if _KANA.search(text):
        return "ja"
    letters = sum(ch.isalpha() for ch in text)
    return "zh" if letters and len(_HAN.findall(text)) / letters >= 0.3 else "en"


def _words(text: str) -> set[str]:
    text = text.lower()
    words = {w for w in _EN_WORD.findall(text) if len(w) >= 3 and w not in _FUNCTION}
    for run in _CJK_RUN.findall(text):
        words.update(run[i:i + 2] for i in range(len(run) - 1))
    return words


def derive_kind(life: dict, question: dict) -> str:
    said = [t for s in life["statements"] for t in [s["text"], *s.get("replies", [])]]
    answering = [t for t in said if holds(t, question["expected"])]
    if not answering:
        return "no single statement"
    if all(language_of(t) != question["language"] for t in answering):
        return "other language"
    if any(_words(question["question"]) & _words(t) for t in answering):
        return "shared words"
    return "no shared word"


def with_kinds(life: dict) -> dict:
    """The life with each question's kind derived (what the files store)."""
    for q in life["questions"]:
        q["kind"] = derive_kind(life, q)
    return life


def save(life: dict) -> Path:
    path = LIVES_DIR / f"{life['number']:02d}-{life['name']}.json"
    path.write_text(json.dumps(life, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
