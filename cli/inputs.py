"""Command-line input: exit codes, usage errors, scope and JSON options, message files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE, EXIT_NOT_FOUND, EXIT_UNAVAILABLE = 0, 1, 2, 3


class UsageError(Exception):
    """Bad command-line input (exit code 1)."""


def scope_kwargs(args) -> dict:
    kw = {"user_id": args.user_id, "agent_id": args.agent_id, "run_id": args.run_id}
    if getattr(args, "group_id", None):  # group chats; only when given: not every command takes it
        kw["group_id"] = args.group_id
    return kw


def require_scope(args, what: str) -> dict:
    kw = scope_kwargs(args)
    if not any(kw.values()):
        raise UsageError(f"{what} needs a scope: pass --user-id (or --agent-id / --run-id / --group-id), "
                         "e.g. --user-id alice.")
    return kw


def json_arg(text: str | None, name: str) -> Any:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{name} is not valid JSON ({exc.msg} at position {exc.pos}); e.g. {name} '{{\"topic\": \"food\"}}'.") from None
    if not isinstance(value, dict):
        raise UsageError(f"{name} must be a JSON object, e.g. '{{\"topic\": \"food\"}}'.")
    return value


def load_json(path: Path) -> Any:
    if not path.exists():
        raise UsageError(f"File not found: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not a JSON file: {exc}") from None


def load_messages_file(path: Path) -> list[dict]:
    data = load_json(path)
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not (isinstance(data, list) and data and all(isinstance(x, dict) and "content" in x for x in data)):
        raise UsageError(f"{path} must hold a JSON list of messages like [{{\"role\": \"user\", \"content\": \"...\"}}].")
    return [{"role": x.get("role", "user"), "content": x["content"], **({"name": x["name"]} if x.get("name") else {})}
            for x in data]


_NEEDS_SCOPE = {"add": "add", "search": "search", "list": "list"}


def precheck(args) -> None:
    """Input errors that need no store: missing scope, malformed JSON options, missing files."""
    command = args.command
    if command in _NEEDS_SCOPE:
        require_scope(args, _NEEDS_SCOPE[command])
    if command == "delete" and getattr(args, "all", False):
        require_scope(args, "delete --all")
    for name in ("metadata", "filters"):
        if getattr(args, name, None) is not None:
            json_arg(getattr(args, name), f"--{name}")
    for name in ("limit", "batch", "sessions", "workers"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be a positive number, got {value}.")
    path = getattr(args, "file", None)
    if path and command != "export" and not Path(path).exists():  # export writes its file
        raise UsageError(f"File not found: {path}")
