"""A chatbot that remembers: recall -> respond -> remember.

    from memoryx.graphs.chat import build_chat_graph
    from memoryx import Memory

    with Memory() as m:
        bot = build_chat_graph(my_chat_model)            # any LangChain chat model; default MEMORYX_LLM
        out = bot.invoke({"messages": [("user", "I live in Berlin")], "user_id": "alice"},
                         context=ChatContext(services=m.services))

The search graph runs as a subgraph before the answer (the last user message is the query, the memories
found are mapped into `state["memories"]` and the system prompt) and the add graph runs after it (the
user turn and the answer are mapped into its `messages`). Both get the same runtime context, so the stores
injected by the caller (or the process-wide defaults under `langgraph dev`) serve all three graphs.

With the offline model (the default without a configured model) the answer is composed from the recalled
memories, so the whole loop runs without a key or network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from memoryx.core.scope import SCOPE_FIELDS
from memoryx.errors import ScopeError
from memoryx.graphs.add import graph as add_graph
from memoryx.graphs.search import graph as search_graph
from memoryx.models.factory import make_chat_model, model_name_of
from memoryx.models.llm_io import message_text as _text
from memoryx.runtime.context import Context, services_of
from memoryx.search.context_block import build_context

OFFLINE_MODEL = "offline"  # the model name the offline rule-based model declares (MEMORYX_LLM=offline)

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with long-term memory of this user.\n"
    "Use the memories below when they are relevant; do not mention them when they are not.\n\n"
    "{memories}"
)


class ChatState(MessagesState):
    """Conversation messages plus the scope of the user and what was recalled for the last turn."""

    user_id: NotRequired[str | None]
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]
    memories: NotRequired[list[dict]]
    last_trace_id: NotRequired[str | None]


class ChatInput(MessagesState):
    user_id: NotRequired[str | None]
    agent_id: NotRequired[str | None]
    run_id: NotRequired[str | None]


@dataclass(kw_only=True)
class ChatContext(Context):
    model: str | None = field(default=None, metadata={"description": "Chat model for the replies, e.g. 'openai:gpt-4o-mini'. Unset: MEMORYX_LLM (offline by default)."})
    system_prompt: str = field(default=DEFAULT_SYSTEM_PROMPT, metadata={"description": "System prompt of the replies; {memories} is replaced by the recalled memories."})
    recall_limit: int = field(default=5, metadata={"description": "Memories recalled before each answer."})
    remember: bool = field(default=True, metadata={"description": "Store what the user said after each answer (add graph)."})
    memory_tokens: int = field(default=800, metadata={"description": "Token budget of the memory block in the system prompt."})


def _last(messages: list[AnyMessage], kind: type) -> BaseMessage | None:
    for m in reversed(messages or []):
        if isinstance(m, kind):
            return m
    return None


def scope_from_config(config: RunnableConfig | None) -> dict:
    """user_id / agent_id from config["configurable"]; the run id as "memoryx_run_id" because LangGraph
    servers put their own run id under "run_id"."""
    configurable = (config or {}).get("configurable") or {}
    return {"user_id": configurable.get("user_id"), "agent_id": configurable.get("agent_id"),
            "run_id": configurable.get("memoryx_run_id")}


def _scope(state: ChatState, config: RunnableConfig | None) -> dict:
    scope = {k: state.get(k) for k in SCOPE_FIELDS}
    if not any(scope.values()):  # the state wins; the config is the fallback
        scope = scope_from_config(config)
    if not any(scope.values()):
        raise ScopeError("The chat graph needs a scope: put user_id (or agent_id/run_id) in the input state, "
                         "e.g. {'messages': [...], 'user_id': 'alice'}, or in config['configurable']['user_id'].")
    return scope


def _format_memories(memories: list[dict], max_tokens: int) -> str:
    return build_context(memories, max_tokens=max_tokens)["context"]


def _offline_reply(question: str, memories: list[dict]) -> str:
    """What the offline model says: the relevant memories, verbatim (no language model involved)."""
    if memories:
        lines = "\n".join(f"- {m.get('memory')}" for m in memories[:3])
        return f"Here is what I remember that may help:\n{lines}"
    return ("I don't remember anything about that yet. (Offline demo model: configure a real chat model with "
            "MEMORYX_LLM=provider:model for real answers.)")


def build_chat_builder(model: BaseChatModel | None = None) -> StateGraph:
    """The chat graph's builder. `model`: any LangChain chat model; None picks ChatContext.model or
    MEMORYX_LLM at run time."""

    def recall(state: ChatState, runtime: Runtime[ChatContext], config: RunnableConfig) -> dict:
        """Search subgraph: last user message in, memories out."""
        question = _last(state["messages"], HumanMessage)
        if question is None or not _text(question).strip():
            return {"memories": []}
        ctx = runtime.context if isinstance(runtime.context, ChatContext) else None
        limit = ctx.recall_limit if ctx else 5
        sub_input = {"query": _text(question), **_scope(state, config), "limit": limit}
        out = search_graph.invoke(sub_input, config, context=runtime.context)
        return {"memories": list((out.get("result") or {}).get("results") or [])}

    def respond(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
        memories = state.get("memories") or []
        ctx = runtime.context if isinstance(runtime.context, ChatContext) else ChatContext(services=services_of(runtime))
        llm = model or _model_for(ctx, runtime)
        if model_name_of(llm) == OFFLINE_MODEL:  # a rule-based model cannot converse: it shows what it recalled
            question = _last(state["messages"], HumanMessage)
            return {"messages": [AIMessage(content=_offline_reply(_text(question) if question else "", memories))]}
        system = SystemMessage(content=ctx.system_prompt.replace("{memories}", _format_memories(memories, ctx.memory_tokens)))
        reply = llm.invoke([system, *state["messages"]])
        return {"messages": [reply]}

    def remember(state: ChatState, runtime: Runtime[ChatContext], config: RunnableConfig) -> dict:
        """Add subgraph: the last user turn (and the answer, for context) in, trace id out."""
        ctx = runtime.context if isinstance(runtime.context, ChatContext) else None
        if ctx is not None and not ctx.remember:
            return {}
        question = _last(state["messages"], HumanMessage)
        if question is None or not _text(question).strip():
            return {}
        turn = [{"role": "user", "content": _text(question)}]
        answer = _last(state["messages"], AIMessage)
        if answer is not None and _text(answer).strip():
            turn.append({"role": "assistant", "content": _text(answer)})
        sub_input = {"messages": turn, **_scope(state, config), "metadata": {"source": "chat"}, "infer": True}
        out = add_graph.invoke(sub_input, config, context=runtime.context)
        return {"last_trace_id": (out.get("result") or {}).get("trace_id")}

    builder = StateGraph(ChatState, context_schema=ChatContext, input_schema=ChatInput)
    builder.add_node("recall", recall)
    builder.add_node("respond", respond)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "remember")
    builder.add_edge("remember", END)
    return builder


_models: dict[str, BaseChatModel] = {}


def _model_for(ctx: ChatContext, runtime: Runtime) -> BaseChatModel:
    services = services_of(runtime)
    spec = ctx.model or services.settings.llm
    if spec not in _models:
        _models[spec] = make_chat_model(spec, services.settings)
    return _models[spec]


def build_chat_graph(model: BaseChatModel | None = None, *, checkpointer: Any = None):
    """The compiled chat graph (pass a checkpointer to keep conversations across invocations by thread id)."""
    return build_chat_builder(model).compile(checkpointer=checkpointer, name="memoryx_chat")


builder = build_chat_builder()
graph = builder.compile(name="memoryx_chat")  # no checkpointer: `langgraph dev` / the platform supply one

__all__ = ["ChatContext", "ChatState", "build_chat_builder", "build_chat_graph", "builder", "graph", "scope_from_config"]
