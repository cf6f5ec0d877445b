"""extract_facts: conversation -> atomic facts (text, category, importance, memory_type, owner).

A cheap rule pre-filter skips the model when the user/assistant turns are pure chit-chat
(greetings, thanks, acknowledgements). The model's answer is parsed robustly (<think> blocks and code fences
stripped, prose tolerated, string or object items, "content"/"fact" for "text", "high/medium/low"
importance); a degenerate answer (cut off at the output cap, empty, `{}`, repetition) counts as unreadable;
one retry shows the model its parse error; a second failure, or an add run whose time budget is spent
before extraction could finish, is a ModelOutputError carrying the trace id (judgment saved as failed with
the capped raw answers, nothing written, the run resumable).
"""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.chitchat import rule_decision
from memoryx.core.runs import elapsed_ms, keeps_agent_facts, scope_of
from memoryx.core.text import fact_key, tokenize
from memoryx.core.timeparse import annotate, base_time, first_date
from memoryx.errors import ModelOutputError
from memoryx.ingest.add_options import effective_instructions
from memoryx.ingest.instructions import apply_excludes, assign_categories, exclusion_notes, prompt_section
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import RetriesExhausted, extract_json, message_text
from memoryx.models.step_calls import ask_in_run
from memoryx.prompts.facts import RETRY_EXTRACTION_PROMPT, extraction_system_prompt, format_conversation, numbered
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState, Fact

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

CATEGORIES = ("preference", "fact", "plan", "experience", "opinion")
MEMORY_TYPES = ("episodic", "semantic", "preference", "fact")
_IMPORTANCE_WORDS = {"high": 0.9, "medium": 0.6, "med": 0.6, "low": 0.3, "高": 0.9, "中": 0.6, "低": 0.3}
_DEFAULT_TYPE = {"preference": "preference", "fact": "semantic", "plan": "episodic", "experience": "episodic",
                 "opinion": "semantic"}


def _importance(value: Any) -> float:
    if isinstance(value, bool):
        return 0.5
    if isinstance(value, (int, float)):
        try:
            v = float(value)
        except OverflowError:  # an integer too large for a float
            return 0.5
        if not math.isfinite(v):  # NaN / Infinity (Python's JSON reader accepts them): not an importance
            return 0.5
        return max(0.0, min(1.0, v / 10.0 if 1.0 < v <= 10.0 else v))
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _IMPORTANCE_WORDS:
            return _IMPORTANCE_WORDS[word]
        try:
            return _importance(float(word))
        except ValueError:
            return 0.5
    return 0.5


def parse_facts(raw: str) -> list[Fact]:
    """Facts of an extraction answer; ValueError naming what is wrong when the answer is unusable."""
    data = extract_json(raw)
    if isinstance(data, dict):
        items = next((data[k] for k in ("facts", "memories", "memory", "items") if k in data), None)
        if items is None:
            raise ValueError('the JSON object has no "facts" list')
    else:
        items = data
    if not isinstance(items, list):
        raise ValueError('"facts" must be a list')
    facts: list[Fact] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise ValueError(f"facts[{i}] must be an object or a string")
        text = next((item[k] for k in ("text", "content", "fact", "memory") if isinstance(item.get(k), str)), None)
        if text is None or not text.strip():
            continue  # an empty fact is no fact; not worth a retry
        category = str(item.get("category") or "fact").strip().lower()
        category = category if category in CATEGORIES else "fact"
        memory_type = str(item.get("memory_type") or item.get("type") or "").strip().lower()
        memory_type = memory_type if memory_type in MEMORY_TYPES else _DEFAULT_TYPE[category]
        owner = "agent" if str(item.get("owner") or "user").strip().lower() in ("agent", "assistant") else "user"
        fact = Fact(text=text.strip(), category=category, importance=_importance(item.get("importance")),
                    memory_type=memory_type, owner=owner)
        sure = item.get("certainty")
        if isinstance(sure, (int, float)) and not isinstance(sure, bool) and math.isfinite(float(sure)):
            fact["certainty"] = float(sure)  # else the rule of memoryx.knowledge.importance decides
        cats = item.get("categories")
        if isinstance(cats, list) and cats:  # custom categories; checked against the given names later
            fact["categories"] = [str(c).strip() for c in cats if isinstance(c, str) and c.strip()]
        speaker = item.get("speaker")
        if isinstance(speaker, str) and speaker.strip():  # group chats: memoryx.ingest.speakers places it
            fact["speaker"] = speaker.strip()
        source = item.get("message")
        if isinstance(source, str) and source.strip().lstrip("#").isdigit():
            source = int(source.strip().lstrip("#"))
        if isinstance(source, int) and not isinstance(source, bool) and source >= 0:  # checked against the turns later
            fact["source_index"] = source
        facts.append(fact)
    return facts


def _now_of(messages: list[dict]) -> str:
    stamps = [m["timestamp"] for m in messages if m.get("timestamp")]
    return stamps[-1] if stamps else datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC (%A)")


def source_message(fact: dict, turns: list[dict]) -> dict | None:
    """The turn a fact comes from: the model's "message" number when it is a turn's; else, among the
    turns of the fact's speaker (all turns when it names none or an unknown one), the one sharing most words
    with the fact (the latest on a tie, the latest of them when none shares a word). None without turns."""
    i = fact.get("source_index")
    if isinstance(i, int) and 0 <= i < len(turns):
        return turns[i]
    who = str(fact.get("speaker") or "").strip().casefold()
    pool = [m for m in turns if who and who in (str(m.get("name") or "").casefold(), str(m.get("user_id") or "").casefold())]
    pool = pool or [m for m in turns if m.get("role") == "user"] or turns
    if not pool:
        return None
    words = set(tokenize(fact.get("text") or ""))
    return max(reversed(pool), key=lambda m: len(words & set(tokenize(str(m.get("content") or "")))))


def date_facts(facts: list[Fact], turns: list[dict]) -> list[Fact]:
    """Relative dates made absolute from the time of the message each fact comes from (memoryx.core.timeparse;
    `source_message`): "User went to Paris yesterday" said on 2023-05-08 -> "... yesterday (2023-05-07)", with
    `valid_at` = the start of the first date named (or of an ISO day the model wrote), and metadata `event_time`
    / `time_expression`. A fact naming no date holds from its message's time when the messages carry
    timestamps (a replayed chat log keeps its dates); else valid_at stays unset (= created_at)."""
    stamps = [m["timestamp"] for m in turns if m.get("timestamp")]
    last = base_time(stamps[-1] if stamps else None)
    out: list[Fact] = []
    for fact in facts:
        source = source_message(fact, turns) if len(stamps) > 1 else None
        base = base_time(source["timestamp"]) if source is not None and source.get("timestamp") else last
        text, refs = annotate(fact["text"], base)
        dated = dict(fact, text=text)
        if refs:
            dated["valid_at"] = refs[0].start.isoformat()
            dated["time_metadata"] = refs[0].as_metadata()
        elif (day := first_date(text)) is not None:  # the model wrote the date itself
            dated["valid_at"] = day.isoformat()
            dated["time_metadata"] = {"event_time": day.strftime("%Y-%m-%d")}
        elif stamps:
            dated["valid_at"] = base.isoformat()
        out.append(dated)
    return out


def fail_run(services, state: dict, step: str, error: str, raw: str | None, model_name: str, latency_ms: float) -> ModelOutputError:
    """Save the failed judgment record and build the error to raise (nothing else was written)."""
    trace_id = state.get("trace_id")
    try:
        services.sql.save_judgment(
            trace_id, scope=scope_of(state), operation_type="MEMORY_UPDATE",
            input_content=format_conversation(state.get("normalized_messages") or []),
            extracted_facts=list(state.get("facts") or []) + list(state.get("agent_facts") or []),
            existing_memories=state.get("candidates") or [], llm_response=raw or "", execution_success=False,
            error_message=f"{step}: {error}", model_name=model_name, latency_ms=latency_ms, status="failed")
    except Exception:  # noqa: BLE001 - the model error is the one to report
        pass
    return ModelOutputError(
        f"The {step} model's output could not be used after one retry: {error}. The run can be resumed with the "
        f"same trace id once the model works (or use a stronger model).", trace_id=trace_id)


def record_skip(services, state: dict, turns: list[dict], decision: dict, *, raw: str, model_name: str,
                latency_ms: float) -> None:
    """The judgment record of a run that keeps nothing: the extraction decision and its reason."""
    services.sql.save_judgment(
        state.get("trace_id"), scope=scope_of(state), operation_type="MEMORY_UPDATE",
        input_content=format_conversation(turns), extracted_facts=[], existing_memories=[], llm_response=raw,
        parsed_operations=[], executed_operations=[], execution_success=True, error_message=None,
        reasoning=f"[memoryx] extraction decision: {decision['decision']} ({decision['by']}): {decision['reason']}",
        model_name=model_name, latency_ms=latency_ms, status="done")


def extract_facts(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    turns = [m for m in state.get("normalized_messages") or [] if m["role"] in ("user", "assistant")]
    ruled = rule_decision([m["content"] for m in turns])
    if ruled is not None:  # the decider's rules: no model call for what cannot hold a fact
        decision = {"decision": ruled[0], "by": "rule", "reason": ruled[1]}
        record_skip(services, state, turns, decision, raw="", model_name="rule:extraction-decider", latency_ms=0.0)
        return {"facts": [], "agent_facts": [], "extraction_decision": decision,
                "timings": {"extract_facts": elapsed_ms(start)}, "model_calls": {"extract_facts": 0}}

    agent_apart = keeps_agent_facts(state)
    ins = effective_instructions(services.settings, state.get("instructions"))
    sources = numbered(turns)  # said at different times: each fact names its message (dated from it)
    system = extraction_system_prompt(now=_now_of(turns), agent_facts=agent_apart, custom=ins.get("prompt"),
                                      section=prompt_section(ins), group=bool(state.get("group_id")), sources=sources)
    prompt = [SystemMessage(content=system),
              HumanMessage(content=format_conversation(turns, number=sources))]
    llm = services.extraction_llm
    model_name = model_name_of(llm)
    settings = services.settings
    try:
        reply = ask_in_run(llm, prompt, lambda answer: parse_facts(message_text(answer)), state=state,
                           step="extract_facts", settings=settings, retry_prompt=RETRY_EXTRACTION_PROMPT,
                           retry_call_errors=True)
    except RetriesExhausted as exc:
        raise fail_run(services, state, "extract_facts", exc.problem, exc.raw, model_name, exc.latency_ms) from exc

    user_facts: list[Fact] = []
    agent_facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    for fact in reply.value:
        owner = fact["owner"] if agent_apart else "user"
        key = (owner, fact_key(fact["text"]))
        if key in seen:
            continue
        seen.add(key)
        (agent_facts if owner == "agent" else user_facts).append({**fact, "owner": owner})
    # the project's excludes hold whatever the model answered; categories are checked against the given names
    if services.settings.time_normalize:
        user_facts, agent_facts = date_facts(user_facts, turns), date_facts(agent_facts, turns)
    user_facts, dropped = apply_excludes(assign_categories(user_facts, ins.get("categories")), ins.get("excludes"))
    agent_facts, dropped_agent = apply_excludes(assign_categories(agent_facts, ins.get("categories")), ins.get("excludes"))
    dropped += dropped_agent
    if dropped and not user_facts and not agent_facts:  # the run ends here: its record says why nothing was kept
        services.sql.save_judgment(
            state.get("trace_id"), scope=scope_of(state), operation_type="MEMORY_UPDATE",
            input_content=format_conversation(turns), extracted_facts=dropped, existing_memories=[],
            llm_response=reply.raw, parsed_operations=[], executed_operations=[],
            reasoning="\n".join(f"[memoryx] {n}" for n in exclusion_notes(dropped)), execution_success=True,
            error_message=None, model_name=model_name, latency_ms=reply.latency_ms, status="done")
    kept = len(user_facts) + len(agent_facts)
    decision = ({"decision": "remember", "by": "model", "reason": f"the extraction model found {kept} facts worth keeping"}
                if kept else {"decision": "skip", "by": "model",
                              "reason": "the extraction model found nothing worth remembering"})
    if not kept and not dropped:  # the run ends here: its record says that, and why
        record_skip(services, state, turns, decision, raw=reply.raw, model_name=model_name, latency_ms=reply.latency_ms)
    return {"facts": user_facts, "agent_facts": agent_facts, "extraction_response": reply.raw, "excluded_facts": dropped,
            "extraction_decision": decision,
            "timings": {"extract_facts": elapsed_ms(start), "extract_facts_llm": reply.latency_ms},
            "model_calls": {"extract_facts": reply.calls}}
