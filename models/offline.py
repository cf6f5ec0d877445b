"""OfflineChatModel: a deterministic, rule-based chat model for demos and tests (no key, no network).

It is NOT a language model. It recognises which MemoryX task it is given from the task tag on the first
line of our system prompts (`[memoryx-task: extract_facts]`, `[memoryx-task: judge_memory]`) and answers
exactly in the format a real model is asked for (JSON text), so the whole pipeline runs unchanged. Graph
tasks (tools named extract_entities / establish_relationships / delete_graph_memory bound, or a graph task
tag) are delegated to `memoryx.models.offline_graph.respond(messages, tools)`, which answers with tool calls.

What it understands is the documented set of first-person statements of
`memoryx.models.offline_rules` (English, Chinese, Japanese): name, home, moves, work, likes and the
retraction of a like or a job. Its judgments are deterministic:

- the same fact as an existing memory -> NONE;
- a new value of a single-valued attribute (home, employer, name) -> UPDATE of the old memory (same id);
  any further memory holding another value of that attribute is DELETEd as outdated;
- a retraction ("I don't like X anymore", "I quit X") -> DELETE of the matching like or job, and ADD of the retraction itself
  (a contradiction never loses the new fact); liking X again deletes the earlier retraction the same way;
- anything else -> ADD.

Other first-person sentences of four words or more ("I have a dog named Max") are kept as facts nearly
verbatim, and so is any sentence no rule reads when it is a statement that says something particular: a figure,
something of the speaker's, someone named beside it, or, in Chinese and Japanese, who someone is or what they are
called ("店長は松本さん", "上司は厳しい人です", "班主任是陈老师"). Greetings, thanks, questions and small talk
("今日は暑いね") give no facts. The words the rules know are data (the offline.* tables of memoryx.core.lexicon).
Token usage is estimated (about 4 characters per token, one per CJK character) so benchmarks can report tokens
per add.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from memoryx.core import lexicon
from memoryx.core.chitchat import is_chitchat
from memoryx.core.text import estimate_tokens, fact_key, tokenize
from memoryx.core.timeparse import leading_time, mentions_time
from memoryx.models import offline_graph
from memoryx.models import offline_rules as rules
from memoryx.models.llm_io import message_text
from memoryx.models.offline_answers import RULE_TASKS, rule_answer
from memoryx.models.offline_clauses import companions, dated_event, generic_fact, going_on
from memoryx.models.offline_shapes import (
    FIGURE_FRAGMENT, FILLER_EN, FRAGMENT_EN, NAME_IN_QUESTION_EN, NAMING_FRAGMENT, NAMING_FRAGMENT_CJK,
    PARTICULAR_CJK, PRONOUN_GOES_ON_EN, PRONOUN_SUBJECT_EN, SENTENCE, STATEMENT_BEFORE_QUESTION, TOLD_TO_KEEP, VERBISH,
    says_who, written_english,
)
from memoryx.prompts.facts import GROUP_CHAT_MARKER, parse_conversation
from memoryx.prompts.judge import parse_judge_input

# what memoryx.ingest.multimodal writes in a message for an image ("[image <ref>] ...", "[image <ref>: not read
# (...)]"): a note of ours, not something the user said
_IMAGE_NOTE = re.compile(r"\[image [^\]]*\]")
TASK_TAG = re.compile(r"\[memoryx-task:\s*([a-z_]+)\s*\]")
GRAPH_TOOLS = {"extract_entities", "establish_relationships", "delete_graph_memory"}
FACT_TASKS = {"extract_facts", "judge_memory", "procedural_memory"}
_ASKED_ZH = lexicon.compile(r"<@offline.question_end:zh>[。！]?$")  # "...吗", "...呢": a question without its mark
def task_of(messages: Sequence[BaseMessage]) -> str | None:
    """The MemoryX task tag of a prompt (first tagged system/human message), or None."""
    for m in messages:
        match = TASK_TAG.search(message_text(m)[:300])
        if match:
            return match.group(1)
    return None


class OfflineChatModel(BaseChatModel):
    """Rule-based stand-in for a chat model; see the module docstring for what it covers."""

    model_name: str = "offline"

    @property
    def _llm_type(self) -> str:
        return "memoryx-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any):
        formatted = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    # ------------------------------------------------------------------------------------- dispatch
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = kwargs.get("tools") or []
        names = {t.get("function", {}).get("name") for t in tools if isinstance(t, dict)}
        task = task_of(messages)
        if task == "extract_facts":
            message = AIMessage(content=self._extract_facts(messages))
        elif task == "judge_memory":
            message = AIMessage(content=self._judge(messages))
        elif task in RULE_TASKS:
            human = "\n".join(message_text(m) for m in messages if not isinstance(m, SystemMessage))
            message = AIMessage(content=rule_answer(task)(human))
        elif names & GRAPH_TOOLS or (task and task not in FACT_TASKS) or _graph_handles(messages, tools):
            message = offline_graph.respond(messages, tools)
        else:
            message = AIMessage(
                content="The offline MemoryX model only answers MemoryX's own prompts. Configure a real model "
                "with MEMORYX_LLM=provider:model (and MEMORYX_LLM_BASE_URL for an OpenAI-compatible server)."
            )
        prompt_tokens = sum(estimate_tokens(message_text(m)) for m in messages)
        if tools:
            prompt_tokens += estimate_tokens(json.dumps(tools))
        out_text = message_text(message) + (json.dumps([tc["args"] for tc in message.tool_calls]) if message.tool_calls else "")
        completion_tokens = estimate_tokens(out_text)
        message.usage_metadata = {
            "input_tokens": prompt_tokens,
            "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        message.response_metadata = {**(message.response_metadata or {}), "model_name": self.model_name}
        return ChatResult(generations=[ChatGeneration(message=message)])

    # ------------------------------------------------------------------------------- fact extraction
    def _extract_facts(self, messages: list[BaseMessage]) -> str:
        human = "\n".join(message_text(m) for m in messages if not isinstance(m, SystemMessage))
        # a group chat: every named speaker's facts, written about the speaker and attributed
        group = any(GROUP_CHAT_MARKER in message_text(m) for m in messages if isinstance(m, SystemMessage))
        facts: list[dict] = []
        seen: set[str] = set()
        for turn in parse_conversation(human):
            speaker = turn.get("name") if group else None
            if turn["role"] != "user" and not speaker:
                continue  # the offline model keeps no agent facts
            found = extract_user_facts(turn["content"])
            if speaker:
                found = [{**f, "text": rules.about_speaker(f["text"], speaker), "speaker": speaker} for f in found]
            if "index" in turn:  # numbered lines said at different times: name the source message (SOURCE_RULE)
                found = [{**f, "message": turn["index"]} for f in found]
            for fact in found:
                key = fact_key(fact["text"])
                if key not in seen:
                    seen.add(key)
                    facts.append(fact)
        return json.dumps({"facts": facts}, ensure_ascii=False)

    # ---------------------------------------------------------------------------------- judgment
    def _judge(self, messages: list[BaseMessage]) -> str:
        human = "\n".join(message_text(m) for m in messages if not isinstance(m, SystemMessage))
        memories, facts = parse_judge_input(human)
        return json.dumps({"operations": judge(memories, facts)}, ensure_ascii=False)


def _graph_handles(messages, tools) -> bool:
    return offline_graph.handles(messages, tools)


def extract_user_facts(content: str) -> list[dict]:
    """Facts of one user message: covered statements in canonical form, other first-person sentences verbatim."""
    facts: list[dict] = []
    content = NAMING_FRAGMENT.sub(", ", written_english(_IMAGE_NOTE.sub(" ", content or "")))
    named = None  # the one person a question just named: "Can you plan a party for Leo? He turns 10 on March 3rd"
    joins_whole = False  # the sentence before was kept as said
    lead = ""  # the sentence before, short and not kept as said
    for sentence in SENTENCE.findall(content):
        sentence = _told_to_keep(sentence.strip())
        asked = None
        if not sentence or sentence.endswith(("?", "？")) or _ASKED_ZH.search(sentence):
            names = set(NAME_IN_QUESTION_EN.findall(sentence))
            asked = _who(sentence, names.pop()) if len(names) == 1 else None
            head = STATEMENT_BEFORE_QUESTION.match(sentence)
            if not head:
                named = asked
                continue  # questions carry no facts, but for a statement said before one in the same sentence
            sentence = head.group(1) or head.group(2)
        if not facts and named and PRONOUN_GOES_ON_EN.match(sentence):
            sentence = _named_subject(sentence, named)  # "He turns 10" -> "Leo turns 10"
        named = asked
        if is_chitchat(sentence):
            continue
        before = len(facts)
        read, unread = _read_sentence(sentence, facts)
        whole = _said_whole(sentence, read, unread)
        pieces = facts[before:]  # what the sentence added (none when it went on with the fact before it)
        if whole:  # its generic pieces are in it ("感觉要下大雨了" of "今天天气好闷啊，感觉要下大雨了")
            said = set(tokenize(whole["text"]))
            for piece in pieces:
                if (piece is not facts[-1] or not joins_whole) and _statement(piece["text"]) is None \
                        and set(tokenize(piece["text"])) <= said:
                    facts.remove(piece)
        elif joins_whole and pieces and before and all(_statement(p["text"]) is None for p in pieces):
            # a sentence read only as said goes on with the one before it, read the same way: "Sam and I are moving
            # in together! We signed a lease on a little house in Beaverton"
            del facts[before:]
            stop = _full_stop(sentence)
            facts[-1] = going_on(facts[-1], stop, stop.join(p["text"] for p in pieces))
        if whole and joins_whole and facts:  # sentences said together stay together: "dentist says I need a
            facts[-1] = going_on(facts[-1], _full_stop(sentence), whole["text"])  # crown. appt aug 8"
        elif whole:
            if lead:  # a short Chinese or Japanese sentence before it says what it is about: "朵朵上小学了！进的是..."
                whole = dict(whole, text=f"{lead} {whole['text']}")
            facts.append(whole)
        joins_whole = bool(whole) or bool(read) and _statement(read[-1]["text"]) is None
        lead = sentence.strip() if not whole and len(sentence.strip()) <= LEAD_CHARS \
            and rules.detect_language(sentence) != "en" else ""  # (an English sentence names its own subject)
    return facts


def _full_stop(sentence: str) -> str:
    return ". " if rules.detect_language(sentence) == "en" else "。"


LEAD_CHARS = 40  # a sentence this short, before one kept as said, goes with it


def _read_sentence(sentence: str, facts: list[dict]) -> tuple[list[dict], list[str]]:
    """The facts one sentence adds, appended to `facts` (or the fact before it that it goes on with), and its
    clauses that hold no statement the rules know."""
    if facts and NAMING_FRAGMENT_CJK.match(sentence):  # the name of what the sentence before it is about
        facts[-1] = going_on(facts[-1], "、", sentence.rstrip("。！!"))
        return facts[-1:], []
    if facts and PRONOUN_GOES_ON_EN.match(sentence):
        # "He's 8 months old" says nothing alone: it goes on with the fact it follows, which names him
        facts[-1] = going_on(facts[-1], ". ", sentence.rstrip(".!"))
        return facts[-1:], []
    if facts and FIGURE_FRAGMENT.match(sentence):  # the figure of the fact before it
        facts[-1] = going_on(facts[-1], ", ", sentence.rstrip(".!"))
        return facts[-1:], []
    if facts and facts[-1]["category"] == "fact" and FRAGMENT_EN.match(sentence) and not VERBISH.search(sentence):
        # "Can't drink coffee anymore. Green tea only.": a verbless fragment goes on with the fact before it
        facts[-1] = going_on(facts[-1], ". ", sentence.rstrip(".!"))
        return facts[-1:], []
    first, unread = len(facts), []
    when = ""  # "Last week, I started ..." is split before ", I": the date goes with the next clause
    generic_at = None  # the sentence's last fact kept as said: a remark after it goes on with it
    for clause in rules.split_clauses(sentence):
        if mentions_time(clause) and leading_time(clause + " x") and not leading_time(clause):
            when = clause
            continue
        clause, when = (f"{when} {clause}" if when else clause), ""
        statements = rules.parse_clause(clause)
        if not statements:
            unread.append(clause)
        for st in statements:
            category, importance, memory_type = rules.fact_category(st)
            facts.append({"text": rules.fact_text(st), "category": category, "importance": importance,
                          "memory_type": memory_type, "owner": "user"})
        dated = dated_event(clause, statements)
        if dated:
            facts.append(dated)
        facts.extend(companions(clause))
        if statements and ("," not in clause or rules.reads_whole(clause)):
            continue  # else the statement was read before a comma: what follows is kept too
        generic = generic_fact(clause)
        if generic:
            generic_at = len(facts)
            facts.append({"text": generic, "category": "fact", "importance": 0.5, "memory_type": "fact", "owner": "user"})
        elif not statements and generic_at is not None and not is_chitchat(clause):
            # "I can't eat shellfish, I'm allergic": the remark says why, with the fact it follows
            facts[generic_at] = dict(facts[generic_at], text=f"{facts[generic_at]['text']}, {clause}")
    return facts[first:], unread


def _said_whole(sentence: str, read: list[dict], unread: list[str]) -> dict | None:
    """What the sentence says beyond its known statements, kept as said, when the facts read from it leave out
    much of it: the rules know some shapes of statement, and a fact in any other shape ("physio (dr okafor) says
    its RSI", "ilse's husband joost is a marine biologist") must not be lost for want of one. The clauses that
    gave a statement ("Took a job at an ad agency" -> "User works at an ad agency") stay out of it, so the
    statement alone is what a later change updates."""
    if "?" in sentence or "？" in sentence or not unread:
        return None
    text = sentence if len(unread) == len(rules.split_clauses(sentence)) else ", ".join(unread)
    said = set(tokenize(text))
    covered = {token for fact in read for token in tokenize(fact["text"])}
    left = said - covered
    if len(left) < 2 or len(left) < 0.4 * len(said) or not _says_something_particular(text, len(said)):
        return None
    return {"text": text.strip().rstrip(".。!！"), "category": "fact", "importance": 0.5, "memory_type": "fact",
            "owner": "user"}


# what makes a sentence worth keeping when no rule reads it: a figure or date, something of the speaker's, what
# they love or cannot stand, a person's own ("ilse's husband"), someone or somewhere named mid-sentence; else only
# a long sentence is
_PARTICULAR_EN = lexicon.compile(r"\d|\b(?i:<@offline.particular:en>)\b"
                            r"|\b(?!(?i:<@offline.contracted:en>)['’])\w+['’]s\b"
                            r"|(?<=[\w,;:(] )(?<!\b[Tt]he )(?!I\b|I['’])[A-Z]\w")


def _says_something_particular(text: str, content_words: int) -> bool:
    if rules.detect_language(text) == "en":
        return content_words >= 5 or bool(_PARTICULAR_EN.search(text))
    return len(text) >= 14 or bool(PARTICULAR_CJK.search(text)) or says_who(text, rules.detect_language(text))


def _who(question: str, name: str) -> str:
    """The person a question names, with the relation it gives them: "my daughter Yasmin" in "What should I get my
    daughter Yasmin for her birthday?", else the name."""
    m = re.search(rf"\b(my\s+\w+\s+){re.escape(name)}\b", question, re.I)
    return f"{m.group(1)}{name}" if m else name


def _named_subject(sentence: str, named: str) -> str:
    """The sentence with the person for its pronoun: "She's really into drawing" -> "my daughter Yasmin is really
    into drawing", "He's been promoted" -> "Omar has been promoted"."""
    m = PRONOUN_SUBJECT_EN.match(sentence)
    if not m:
        return sentence
    rest = sentence[m.end():]
    short = re.match(r"['’](s|re)\b", rest)
    if not short:
        return named + rest
    rest = rest[short.end():]
    verb = "has" if short.group(1) == "s" and re.match(r"\s+(?:been|got)\b", rest) else "is"
    return f"{named} {verb}{rest}"


def _told_to_keep(sentence: str) -> str:
    """The sentence without the words asking the assistant to keep it: "Remember that I'm allergic to
    penicillin" -> "I'm allergic to penicillin", "hey, FYI my name's Kenji" -> "my name's Kenji"."""
    lead = FILLER_EN.match(sentence)
    start = lead.end() if lead else 0
    told = TOLD_TO_KEEP.match(sentence[start:])
    rest = sentence[start + told.end():].strip() if told else ""
    return rest if rest else sentence


def _statement(text: str):
    """The statement a memory or fact holds for the judge. "User moved to Toronto from Osaka two years ago" is
    the dated event kept beside the home ("User now lives in Toronto", which a move updates): it stays true
    after the next move, so it is not a statement to replace."""
    st = rules.parse_statement(text)
    return None if st is not None and st.verb == "move" else st


def judge(memories: list[dict], facts: list[dict]) -> list[dict]:
    """Deterministic decisions for the judge prompt: see the module docstring."""
    parsed_mem = [(m, _statement(m.get("text", ""))) for m in memories]
    ops: list[dict] = []
    touched: set[str] = set()

    def outdated(st, same_owner, keep_id: str | None) -> None:
        """Other values of a single-valued attribute are no longer true: DELETE them."""
        for m, s in same_owner:
            if s is not None and s.attribute == st.attribute and s.polarity and s.key != st.key \
                    and m["id"] not in touched and m["id"] != keep_id:
                touched.add(m["id"])
                ops.append({"fact": index, "reason": f"The user's {st.attribute} is now '{st.value}', so "
                            f"'{s.value}' is outdated.", "event": "DELETE", "id": m["id"], "text": m.get("text", "")})

    for fact in facts:
        index = fact.get("fact", 0)
        text = fact.get("text", "")
        owner = fact.get("owner", "user")
        st = _statement(text)
        same_owner = [(m, s) for m, s in parsed_mem if m.get("owner", "user") == owner]
        norm = fact_key(text)

        duplicate = next((m for m, s in same_owner if fact_key(m.get("text", "")) == norm), None)
        if duplicate is None and st is not None:
            duplicate = next((m for m, s in same_owner if s is not None and s.key == st.key and s.polarity == st.polarity), None)
        if duplicate is not None:
            touched.add(duplicate["id"])
            ops.append({"fact": index, "reason": "The same fact is already stored.", "event": "NONE",
                        "id": duplicate["id"], "text": duplicate.get("text", "")})
            if st is not None and st.single_valued and st.polarity:
                outdated(st, same_owner, duplicate["id"])
            continue
        if st is None:
            ops.append({"fact": index, "reason": "New information that no existing memory holds.", "event": "ADD", "id": None, "text": text})
            continue

        if st.single_valued and st.polarity:
            old = next(((m, s) for m, s in same_owner if s is not None and s.attribute == st.attribute and s.polarity
                        and m["id"] not in touched), None)
            if old is not None:
                m, s = old
                touched.add(m["id"])
                ops.append({"fact": index, "reason": f"The user's {st.attribute} changed from '{s.value}' to '{st.value}'; "
                            "it has a single value, so the new one replaces the old.",
                            "event": "UPDATE", "id": m["id"], "text": text, "old_memory": m.get("text", "")})
                outdated(st, same_owner, m["id"])
                continue

        if st.attribute == "like" or not st.polarity:  # a like, or a retraction (of a like or a job)
            opposite = [m for m, s in same_owner if s is not None and s.attribute == st.attribute
                        and s.polarity != st.polarity and s.key == st.key and m["id"] not in touched]
            for m in opposite:
                touched.add(m["id"])
                why = (f"The user's {st.attribute} '{st.value}' is over, so the memory is no longer true."
                       if not st.polarity else "The user likes this again, so the earlier retraction is no longer true.")
                ops.append({"fact": index, "reason": why, "event": "DELETE", "id": m["id"], "text": m.get("text", "")})
            if opposite:
                ops.append({"fact": index, "reason": "Keep the new statement itself so the new information is not lost.",
                            "event": "ADD", "id": None, "text": text})
                continue

        ops.append({"fact": index, "reason": "New information that no existing memory holds.", "event": "ADD", "id": None, "text": text})
    return ops
