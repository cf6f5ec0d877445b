"""A model check of the cause links a consolidation pass found by rule (memoryx.lifecycle.causal).

The rule writes a `causes` link only where a memory's own words say so, but a connective can mislead ("I was
tired, so was everyone"). Where a chat model is configured, the pass asks it once, in one batched call, about
every candidate: a link it rejects is not written (the rejection and its reason stay in the judgment record); an
unusable answer keeps the rule's links (the rule is conservative). With the offline model the rule stands
alone — the offline model reads no causes — and the record says so.
"""

from __future__ import annotations

from memoryx.lifecycle import prompts
from memoryx.lifecycle.causal import CAUSE
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import RetriesExhausted
from memoryx.models.step_calls import ask_or_fall_back, call_record

MAX_CHECKED = 100  # per call; the rest keep the rule's verdict this pass
OFFLINE = "offline"


def is_offline(llm) -> bool:
    return llm is None or model_name_of(llm) == OFFLINE


def check_causes(llm, links: list[dict], texts: dict[str, str]) -> tuple[list[dict], dict]:
    """(the links to write, the check's record {"by", "rejected": [...], model call fields}). Only `causes`
    links are asked about; the others pass through."""
    causes = [k for k in links if k.get("relation") == CAUSE and k["source_id"] in texts and k["target_id"] in texts]
    if not causes:
        return links, {"by": "none"}
    if is_offline(llm):
        return links, {"by": "rule (offline model: no model check of cause links)"}
    asked = causes[:MAX_CHECKED]
    reply = ask_or_fall_back(llm, prompts.cause_messages(asked, texts), prompts.parse_causes,
                             step="consolidation cause check", retry_prompt=prompts.RETRY,
                             fallback="unusable, the rule's cause links stand")
    record = {"by": "model", **call_record("cause_check", reply), "rejected": []}
    if isinstance(reply, RetriesExhausted):
        record["by"] = "rule (the model's answer was unusable)"
        return links, record
    verdicts = {v.link: v for v in reply.value.links}
    rejected: set[int] = set()
    for n, link in enumerate(asked, start=1):
        v = verdicts.get(n)
        if v is not None and not v.causes:
            rejected.add(id(link))
            record["rejected"].append({**link, "reason": f"{link.get('reason')}; model: {v.reason or 'not a cause'}"})
        elif v is not None:
            link["reason"] = f"{link.get('reason')}; model: {v.reason or 'a cause'}"
    return [k for k in links if id(k) not in rejected], record


__all__ = ["check_causes", "is_offline"]
