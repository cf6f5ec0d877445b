"""The consolidation pass's two model calls, each prompt beside the pydantic model of its answer:

- merge judgment: every uncertain pair of the pass in ONE call ("the same fact?");
- summaries: every compression cluster of the pass in ONE call (one summary sentence each).

The task tags let the offline model (models/offline.py) answer both by rule: `offline_merge` and
`offline_summaries` below, so every step runs with no network.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memoryx.lifecycle.similarity import substance_differs
from memoryx.models.llm_io import extract_json, message_text
from memoryx.models.offline_answers import answers_task

MERGE_TASK = "consolidate_merge"
SUMMARY_TASK = "consolidate_summarize"
LEVELS = ("detail", "summary", "pattern")

MERGE_SYSTEM = f"""[memoryx-task: {MERGE_TASK}]
You maintain a user's long-term memory. For each numbered pair of memories, decide whether both state the
SAME fact (a paraphrase, one adds nothing the other lacks) or different facts (other values, times, people,
a change of mind, one supersedes the other). When unsure, answer false: merging loses information.
Answer JSON only: {{"pairs": [{{"pair": 1, "same": true, "reason": "..."}}]}} with one entry per pair."""

SUMMARY_SYSTEM = f"""[memoryx-task: {SUMMARY_TASK}]
You maintain a user's long-term memory. Each numbered cluster holds similar memories. Write ONE short
sentence per cluster that keeps what they share and the facts a later question could ask about (names,
places, how often), in the memories' language. level: "summary" when the sentence generalises specific
events, "pattern" when it states a habit or trait behind them.
Answer JSON only: {{"summaries": [{{"cluster": 1, "text": "...", "level": "summary"}}]}}"""

DIGEST_TASK = "consolidate_digest"
DIGEST_SYSTEM = f"""[memoryx-task: {DIGEST_TASK}]
You maintain a user's long-term memory. Each numbered group holds short-term memories that are fading and
will be archived. Write ONE compact long-term note per group that keeps EVERY fact of its memories (names,
places, dates, numbers), shortened but never dropped, in the memories' language.
Answer JSON only: {{"summaries": [{{"cluster": 1, "text": "...", "level": "summary"}}]}}"""

CAUSE_TASK = "consolidate_cause_check"
CAUSE_SYSTEM = f"""[memoryx-task: {CAUSE_TASK}]
You maintain a user's long-term memory. A rule found each numbered pair of memories where the second seems to
state the first as its cause. Decide for each whether the first memory really is a cause of what the second
states (not just said before it, not a coincidence). When unsure, answer false: a wrong cause misleads.
Answer JSON only: {{"links": [{{"link": 1, "causes": true, "reason": "..."}}]}} with one entry per pair."""

EPISODE_DIGEST_TASK = "consolidate_episode_digest"
EPISODE_DIGEST_SYSTEM = f"""[memoryx-task: {EPISODE_DIGEST_TASK}]
You maintain a user's long-term memory. Each numbered group holds the episodic memories of one period (what
happened, oldest first). Write ONE summary per group, at most five sentences, in the memories' language:
what the period was about, the events a later question could ask about (with their dates, names, places,
numbers), and what changed. Do not invent anything.
Answer JSON only: {{"summaries": [{{"cluster": 1, "text": "...", "level": "summary"}}]}}"""

RETRY = "Your answer could not be used: {error}. Answer again with the JSON object only."


class PairVerdict(BaseModel):
    pair: int
    same: bool
    reason: str = ""


class MergeVerdicts(BaseModel):
    pairs: list[PairVerdict] = Field(default_factory=list)


class ClusterSummary(BaseModel):
    cluster: int
    text: str = Field(min_length=1)
    level: Literal["summary", "pattern"] = "summary"


class Summaries(BaseModel):
    summaries: list[ClusterSummary] = Field(default_factory=list)


def merge_messages(pairs: list[dict], texts: dict[str, str]) -> list:
    items = [{"pair": i + 1, "a": texts[p["a"]], "b": texts[p["b"]]} for i, p in enumerate(pairs)]
    return [SystemMessage(MERGE_SYSTEM), HumanMessage("PAIRS_JSON: " + json.dumps(items, ensure_ascii=False))]


def summary_messages(groups: list[list[str]], texts: dict[str, str]) -> list:
    items = [{"cluster": i + 1, "memories": [texts[m] for m in g]} for i, g in enumerate(groups)]
    return [SystemMessage(SUMMARY_SYSTEM), HumanMessage("CLUSTERS_JSON: " + json.dumps(items, ensure_ascii=False))]


def digest_messages(groups: list[list[str]], texts: dict[str, str]) -> list:
    items = [{"cluster": i + 1, "memories": [texts[m] for m in g]} for i, g in enumerate(groups)]
    return [SystemMessage(DIGEST_SYSTEM), HumanMessage("CLUSTERS_JSON: " + json.dumps(items, ensure_ascii=False))]


class CauseVerdict(BaseModel):
    link: int
    causes: bool
    reason: str = ""


class CauseVerdicts(BaseModel):
    links: list[CauseVerdict] = Field(default_factory=list)


def cause_messages(links: list[dict], texts: dict[str, str]) -> list:
    items = [{"link": i + 1, "cause": texts[k["source_id"]], "effect": texts[k["target_id"]]}
             for i, k in enumerate(links)]
    return [SystemMessage(CAUSE_SYSTEM), HumanMessage("LINKS_JSON: " + json.dumps(items, ensure_ascii=False))]


def parse_causes(message) -> CauseVerdicts:
    return CauseVerdicts.model_validate(extract_json(message_text(message)))


def episode_digest_messages(groups: list[list[str]], texts: dict[str, str]) -> list:
    items = [{"cluster": i + 1, "memories": [texts[m] for m in g]} for i, g in enumerate(groups)]
    return [SystemMessage(EPISODE_DIGEST_SYSTEM),
            HumanMessage("CLUSTERS_JSON: " + json.dumps(items, ensure_ascii=False))]


def parse_merge(message) -> MergeVerdicts:
    return MergeVerdicts.model_validate(extract_json(message_text(message)))


def parse_summaries(message) -> Summaries:
    return Summaries.model_validate(extract_json(message_text(message)))


# ---- the offline model's answers (deterministic rules) ------------------------------------------------

_WORD = re.compile(r"\w+", re.U)
_STOP = {"i", "my", "me", "the", "a", "an", "to", "of", "and", "is", "am", "are", "was", "in", "on", "at",
         "user", "really", "very", "do", "does", "have", "has", "for", "with", "that", "it", "be", "s"}


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _payload(human: str, key: str) -> list:
    start = human.find(key)
    return json.loads(human[start + len(key):].strip()) if start >= 0 else []


@answers_task("consolidate_merge")
def offline_merge(human: str) -> str:
    """Same fact when no numbers or polarity differ and most content words are shared."""
    out = []
    for item in _payload(human, "PAIRS_JSON:"):
        a, b = _content(item["a"]), _content(item["b"])
        overlap = len(a & b) / max(1, min(len(a), len(b)))
        same = overlap >= 0.6 and not substance_differs(item["a"], item["b"])
        out.append({"pair": item["pair"], "same": same,
                    "reason": f"offline rule: content overlap {overlap:.2f}" + ("" if same else ", or other numbers/negation")})
    return json.dumps({"pairs": out}, ensure_ascii=False)


@answers_task("consolidate_summarize")
def offline_summaries(human: str) -> str:
    """What the cluster's memories share, with the words that vary listed once ("I bought a latte on
    Monday, Tuesday and Friday"); the shortest memory when they share no leading or trailing words."""
    out = []
    for item in _payload(human, "CLUSTERS_JSON:"):
        out.append({"cluster": item["cluster"], "text": _common_text(item["memories"]), "level": "summary"})
    return json.dumps({"summaries": out}, ensure_ascii=False)


def _common_text(texts: list[str]) -> str:
    words = [t.rstrip(".").split() for t in texts]
    shortest = min(len(w) for w in words)
    pre = 0
    while pre < shortest and len({w[pre] for w in words}) == 1:
        pre += 1
    post = 0
    while post < shortest - pre and len({w[-1 - post] for w in words}) == 1:
        post += 1
    if pre + post == 0:
        return min(texts, key=lambda t: (len(t), t))
    middles = list(dict.fromkeys(" ".join(w[pre:len(w) - post]) for w in words))
    middles = [m for m in middles if m]
    varying = ", ".join(middles[:-1]) + " and " + middles[-1] if len(middles) > 1 else "".join(middles)
    return " ".join(x for x in (" ".join(words[0][:pre]), varying, " ".join(words[0][len(words[0]) - post:] if post else [])) if x)


@answers_task(DIGEST_TASK)
def offline_digest(human: str) -> str:
    """Every memory of the group kept, joined in order: shorter, never lossy."""
    out = [{"cluster": item["cluster"], "level": "summary",
            "text": "; ".join(t.rstrip(".。") for t in item["memories"])}
           for item in _payload(human, "CLUSTERS_JSON:")]
    return json.dumps({"summaries": out}, ensure_ascii=False)
