"""A fake OpenAI-compatible chat endpoint that answers like MemoryX's offline model and takes as long as a
real one: every call sleeps `--delay` seconds (default 0.3) before answering. Loopback only.

    python3 bench/fake_llm.py --port 8399 --delay 0.3
    MEMORYX_LLM=openai-compatible:fake MEMORYX_LLM_BASE_URL=http://127.0.0.1:8399/v1 MEMORYX_LLM_API_KEY=x ...

The throughput bench and the multi-worker test run workers against it: the real HTTP model client, real
request timeouts, and calls that overlap as they would against a hosted model. Only the answers are faked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid

from fastapi import FastAPI, Request
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memoryx.models.offline import OfflineChatModel


def _messages(raw: list[dict]) -> list:
    out = []
    for m in raw:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        role = m.get("role")
        if role == "system":
            out.append(SystemMessage(content))
        elif role == "assistant":
            out.append(AIMessage(content))
        elif role == "tool":
            out.append(ToolMessage(content, tool_call_id=m.get("tool_call_id") or "t"))
        else:
            out.append(HumanMessage(content))
    return out


def make_app(delay: float) -> FastAPI:
    app = FastAPI()
    model = OfflineChatModel()
    calls = {"n": 0}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict:
        body = await request.json()
        calls["n"] += 1
        await asyncio.sleep(delay)
        bound = model.bind_tools(body["tools"]) if body.get("tools") else model
        message = await asyncio.to_thread(bound.invoke, _messages(body.get("messages", [])))
        tool_calls = [{"id": tc.get("id") or f"call_{uuid.uuid4().hex[:8]}", "type": "function",
                       "function": {"name": tc["name"], "arguments": json.dumps(tc["args"])}}
                      for tc in (message.tool_calls or [])]
        reply = {"role": "assistant", "content": message.content or ("" if tool_calls else "{}")}
        if tool_calls:
            reply["tool_calls"] = tool_calls
        return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": reply, "finish_reason": "tool_calls" if tool_calls else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    @app.get("/calls")
    async def count() -> dict:
        return calls

    return app


def main() -> None:
    import uvicorn

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--delay", type=float, default=0.3, help="seconds every call sleeps before answering")
    args = ap.parse_args()
    uvicorn.run(make_app(args.delay), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
