"""Fact extraction prompt (mem0's FACT_RETRIEVAL_PROMPT, rewritten).

The first line of every MemoryX system prompt is a task tag (`[memoryx-task: ...]`): it tells the offline
rule-based model which task it is given, and costs a real model a handful of tokens.
"""

from __future__ import annotations

import json
import re

EXTRACT_FACTS_TASK = "extract_facts"

EXTRACT_FACTS_PROMPT = """[memoryx-task: extract_facts]
You are the memory extractor of a long-term memory system for a chatbot. From the conversation you are
given, extract the facts worth remembering across conversations and return them as JSON.

What to extract:
- Personal details: names, relationships, home, work, education, important dates.
- Preferences: likes and dislikes (food, products, activities, media, style of answers), and retractions of
  earlier preferences ("I don't like X anymore").
- Plans and intentions: upcoming events, trips, goals, deadlines.
- Experiences: things that happened to the user, with their date.
- Opinions the user holds, health and wellness details, professional details.

Rules:
1. One atomic fact per item: split compound sentences ("I live in Berlin and work at SAP" -> two facts).
2. Each fact is a complete, self-contained statement about the user ("User lives in Berlin"), never a
   fragment, never "I"/"you".
3. Write every fact in the SAME LANGUAGE as the message it comes from. Chinese input gives Chinese facts
   ("用户住在北京"), Japanese input gives Japanese facts. Never translate.
4. Keep relative dates as said and add the absolute date after them, from the time of the message (shown
   before each message, or the current time below): "yesterday" on 2025-03-10 -> "yesterday (2025-03-09)".
5. Use only the user's and the assistant's messages. Ignore system and tool messages.
6. Skip greetings, small talk, thanks, questions without information, and general knowledge that is not
   about the user.
7. {agent_rule}
8. For each fact give:
   - "category": one of preference, fact, plan, experience, opinion
   - "importance": a number from 0 to 1 (0.9 identity and health, 0.7 stable facts and preferences,
     0.4 passing details)
   - "memory_type": one of episodic (an event at a time), semantic (a stable fact), preference, fact
   - "certainty": how definite the statement is, 0 to 1 (0.9 said plainly, 0.5 hedged: "maybe", "I think",
     "可能", "かもしれない"; 0.3 a guess)
   - "owner": "user" (about the user) or "agent" (about the assistant itself)
9. If nothing is worth remembering, return {{"facts": []}}.

Return ONLY a JSON object, no prose, no code fences:
{{"facts": [{{"text": "...", "category": "...", "importance": 0.7, "memory_type": "...", "owner": "user"}}]}}

Examples:
Input: user: Hi, how are you?
Output: {{"facts": []}}

Input: user: Hi, my name is John. I'm a software engineer and I moved to Berlin last month.  (message time 2025-03-10)
Output: {{"facts": [
  {{"text": "User's name is John", "category": "fact", "importance": 0.9, "memory_type": "semantic", "owner": "user"}},
  {{"text": "User is a software engineer", "category": "fact", "importance": 0.7, "memory_type": "semantic", "owner": "user"}},
  {{"text": "User moved to Berlin last month (2025-02)", "category": "experience", "importance": 0.7, "memory_type": "episodic", "owner": "user"}}]}}

Input: user: 我在上海工作，喜欢打篮球，但是我不再喜欢喝咖啡了。
Output: {{"facts": [
  {{"text": "用户在上海工作", "category": "fact", "importance": 0.7, "memory_type": "semantic", "owner": "user"}},
  {{"text": "用户喜欢打篮球", "category": "preference", "importance": 0.6, "memory_type": "preference", "owner": "user"}},
  {{"text": "用户不再喜欢喝咖啡", "category": "preference", "importance": 0.6, "memory_type": "preference", "owner": "user"}}]}}

Input: user: 田中です。東京に住んでいて、寿司が大好きです。
Output: {{"facts": [
  {{"text": "ユーザーの名前は田中", "category": "fact", "importance": 0.9, "memory_type": "semantic", "owner": "user"}},
  {{"text": "ユーザーは東京に住んでいる", "category": "fact", "importance": 0.7, "memory_type": "semantic", "owner": "user"}},
  {{"text": "ユーザーは寿司が大好き", "category": "preference", "importance": 0.6, "memory_type": "preference", "owner": "user"}}]}}

Current time: {now}
"""

AGENT_RULE_ON = (
    'The assistant has its own memory: facts the assistant states about ITSELF (its name, persona, '
    'abilities, its own preferences) get "owner": "agent". Facts about the user always get "owner": "user".'
)
AGENT_RULE_OFF = 'Every fact gets "owner": "user"; do not extract facts about the assistant itself.'

CONVERSATION_HEADER = "Conversation:"

# Group chats. The marker line tells the offline model too that facts belong to named speakers.
GROUP_CHAT_MARKER = "[memoryx-group-chat]"
GROUP_RULE = GROUP_CHAT_MARKER + """
This is a GROUP CHAT: several people speak; each message shows its speaker's name in parentheses
("user (Caroline): I moved to Boston"), and assistant-role messages are people too when they carry a name.
Extract facts from every named speaker. Write each fact about the person who states it, by name, never as
"User" ("Caroline moved to Boston", "Melanie has two kids"; in Chinese "小李搬到了北京"), and give the
speaker's name in "speaker": {"text": "Caroline moved to Boston", ..., "speaker": "Caroline"}.
"""


# Messages said at different times: each line is numbered ("#2 [time] user (Melanie): ...") and the
# model names the message a fact comes from, so each fact is dated from its own message's time.
SOURCE_RULE = """
The messages were said at different times and each line starts with its number ("#2"). Give each fact the
number of the message it comes from in "message": {"text": "...", ..., "message": 2}. A relative date is
resolved against THAT message's time, not the last one's.
"""


def numbered(messages: list[dict]) -> bool:
    """True when the turns carry more than one distinct timestamp: the extraction call numbers its lines."""
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    return len({m.get("timestamp") for m in turns if m.get("timestamp")}) > 1


def format_conversation(messages: list[dict], *, number: bool = False) -> str:
    """The human message of the extraction call: one line per user/assistant turn, with its time; `number`:
    each line starts with the turn's index ("#0 ") for the facts' "message" field (SOURCE_RULE)."""
    lines = [CONVERSATION_HEADER]
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    for i, m in enumerate(turns):
        when = f"[{m['timestamp']}] " if m.get("timestamp") else ""
        name = f" ({m['name']})" if m.get("name") else ""
        content = str(m.get("content", "")).replace("\n", " ")
        lines.append(f"{f'#{i} ' if number else ''}{when}{m['role']}{name}: {content}")
    return "\n".join(lines)


# Shown with the model's own answer when that answer could not be parsed (models.llm_io.call_with_retry).
RETRY_EXTRACTION_PROMPT = ('Your previous answer could not be used: {error}\nAnswer again with ONLY the JSON object: '
                           '{{"facts": [{{"text": "...", "category": "...", "importance": 0.7, "memory_type": "...", "owner": "user"}}]}}')


def parse_conversation(text: str) -> list[dict]:
    """Inverse of format_conversation (used by the offline model): [{"role", "content", "name"?}]."""

    out = []
    body = text.split(CONVERSATION_HEADER, 1)[-1]
    for line in body.splitlines():
        m = re.match(r"^(?:#(\d+) )?(?:\[[^\]]*\]\s*)?(user|assistant)(?: \(([^)]*)\))?: (.*)$", line.strip())
        if m:
            out.append({"role": m.group(2), "content": m.group(4), **({"name": m.group(3)} if m.group(3) else {}),
                        **({"index": int(m.group(1))} if m.group(1) is not None else {})})
    return out


# A project's own extraction prompt (settings.custom_fact_extraction_prompt, add(prompt=...)) replaces our
# instructions; the task tag and the answer format stay, so every model (the offline one too) and our parser
# keep working.
CUSTOM_EXTRACTION_FRAME = """[memoryx-task: extract_facts]
{custom}

Answer format: return ONLY a JSON object, no prose: {{"facts": [{{"text": "...", "category": "preference|fact|plan|experience|opinion", "importance": 0.7, "memory_type": "episodic|semantic|preference|fact", "owner": "user"}}]}} (plain strings in "facts" are accepted too).
{section}
Current time: {now}
"""


def extraction_system_prompt(*, now: str, agent_facts: bool, custom: str | None = None, section: str = "",
                             group: bool = False, sources: bool = False) -> str:
    """Our extraction prompt (or the project's own, `custom`), with the project's instructions `section`;
    `group`: a group chat (facts per named speaker, GROUP_RULE); `sources`: numbered lines said at different
    times (each fact names its message, SOURCE_RULE)."""
    if sources:
        section = SOURCE_RULE + section
    if group:
        section = GROUP_RULE + section
    if custom:
        return CUSTOM_EXTRACTION_FRAME.format(custom=custom, section=section, now=now)
    prompt = EXTRACT_FACTS_PROMPT.format(now=now, agent_rule=AGENT_RULE_ON if agent_facts else AGENT_RULE_OFF)
    return prompt.replace("\nCurrent time:", section + "\nCurrent time:") if section else prompt


def facts_json(facts: list[dict]) -> str:
    return json.dumps({"facts": facts}, ensure_ascii=False)
