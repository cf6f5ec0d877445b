"""The CLI's way to a running `memoryx serve`: `RemoteMemory` has the methods of `Memory` that the commands
use, each one REST call (httpx) to MEMORYX_URL with MEMORYX_API_KEY.

Why: the embedded stores admit one process per data directory, and opening them costs seconds (models,
FalkorDB). With MEMORYX_URL set, the commands neither start anything nor take the server's locks, and the
server applies its API keys exactly as for any other client. HTTP errors come back as MemoryX's own errors,
so the CLI's exit codes are the same either way.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from memoryx.errors import InvalidInputError, MemoryXError, NotFoundError, ScopeError, StoreUnavailableError

TIMEOUT_S = 300.0  # an add runs model calls; the server bounds them (MEMORYX_ADD_TIME_BUDGET_S)



def _when(value):
    """A reference time as JSON: datetimes as ISO-8601, numbers and strings as they are."""
    return value.isoformat() if hasattr(value, "isoformat") else value

class RemoteError(MemoryXError):
    """The server refused the request (401/403, or an error without a closer MemoryX type)."""


_ERRORS: dict[int, type[MemoryXError]] = {400: ScopeError, 404: NotFoundError, 413: InvalidInputError,
                                          422: InvalidInputError, 503: StoreUnavailableError}


def _scope(user_id=None, agent_id=None, run_id=None, group_id=None) -> dict:
    return {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id),
                              ("group_id", group_id)) if v is not None}


class RemoteMemory:
    """`Memory`'s command-line surface over the server's REST API."""

    def __init__(self, url: str, api_key: str | None = None, *, timeout: float = TIMEOUT_S):
        import httpx

        self.url = url.rstrip("/")
        headers = {"X-API-Key": api_key} if api_key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def _call(self, method: str, path: str, *, json: Any = None, params: dict | None = None) -> Any:
        import httpx

        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise StoreUnavailableError(f"Cannot reach the MemoryX server at {self.url} (MEMORYX_URL): {exc}. "
                                        "Start it with `memoryx serve`, or unset MEMORYX_URL to use the local stores.") from None
        if response.status_code < 400:
            return response.json()
        try:
            error = response.json().get("error") or {}
        except ValueError:
            error = {}
        message = error.get("message") or f"HTTP {response.status_code} from {self.url}{path}"
        if response.status_code in (401, 403):
            message += " (the CLI sends MEMORYX_API_KEY)"
        raise _ERRORS.get(response.status_code, RemoteError)(message, trace_id=error.get("trace_id"))

    # --- memories -----------------------------------------------------------------------------------------

    def add(self, messages, *, user_id=None, agent_id=None, run_id=None, metadata=None, infer=True,
            group_id=None) -> dict:
        body = {"messages": messages, **_scope(user_id, agent_id, run_id, group_id), "metadata": metadata,
                "infer": infer}
        return self._call("POST", "/v1/memories", json=body)

    def add_many(self, items, *, infer=True, progress=None) -> list[dict]:
        """Memory.add_many through POST /v1/memories/batch; `progress(n)` after each request."""
        results: list[dict] = []
        for i in range(0, len(items), 500):  # under the server's MEMORYX_BULK_MAX_ITEMS default
            chunk = [{k: v for k, v in item.items() if v is not None} for item in items[i:i + 500]]
            results.extend(self._call("POST", "/v1/memories/batch", json={"items": chunk, "infer": infer})["results"])
            if progress:
                progress(len(chunk))
        return results

    def search(self, query, *, user_id=None, agent_id=None, run_id=None, limit=10, filters=None, threshold=None,
               group_id=None, speaker=None, memory_types=None, now=None, as_of=None) -> dict:
        optional = {"speaker": speaker, "memory_types": memory_types, "now": _when(now), "as_of": _when(as_of)}
        body = {"query": query, **_scope(user_id, agent_id, run_id, group_id), "limit": limit, "filters": filters,
                **{k: v for k, v in optional.items() if v is not None}, "threshold": threshold}
        return self._call("POST", "/v1/memories/search", json=body)

    def get_context(self, query, *, user_id=None, agent_id=None, run_id=None, max_tokens=1000, limit=20,
                    group_id=None) -> dict:
        body = {"query": query, **_scope(user_id, agent_id, run_id, group_id), "max_tokens": max_tokens, "limit": limit}
        return self._call("POST", "/v1/memories/context", json=body)

    def get_all(self, *, user_id=None, agent_id=None, run_id=None, limit=100, filters=None, group_id=None) -> dict:
        if filters:
            raise InvalidInputError("`memoryx list --filters` is not available through MEMORYX_URL (the REST list "
                                    "has no filters); use `memoryx search --filters`, or unset MEMORYX_URL.")
        return self._call("GET", "/v1/memories", params={**_scope(user_id, agent_id, run_id, group_id), "limit": limit})

    def get(self, memory_id: str) -> dict:
        return self._call("GET", f"/v1/memories/{memory_id}")

    def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        return self._call("PUT", f"/v1/memories/{memory_id}", json={"text": text, "metadata": metadata})

    def delete(self, memory_id: str) -> dict:
        return self._call("DELETE", f"/v1/memories/{memory_id}")

    def delete_all(self, *, user_id=None, agent_id=None, run_id=None, group_id=None) -> dict:
        return self._call("DELETE", "/v1/memories", params=_scope(user_id, agent_id, run_id, group_id))

    def consolidate(self, *, user_id=None, agent_id=None, run_id=None, now=None, dry_run: bool = False,
                    group_id=None) -> dict:
        return self._call("POST", "/v1/consolidate", json={**_scope(user_id, agent_id, run_id, group_id), "now": now,
                                                           "dry_run": dry_run})

    def end_run(self, run_id: str, *, user_id=None, agent_id=None, group_id=None) -> dict:
        return self._call("POST", f"/v1/runs/{quote(run_id, safe='')}/end", json=_scope(user_id, agent_id, None, group_id))

    def get_profile(self, *, user_id=None, group_id=None, include_history: bool = False) -> dict:
        path = f"/v1/groups/{group_id}/profile" if group_id and not user_id else f"/v1/profiles/{user_id}"
        return self._call("GET", path, params={"include_history": str(include_history).lower()})

    def restore(self, memory_id: str) -> dict:
        return self._call("POST", f"/v1/memories/{memory_id}/restore")

    def rollback(self, trace_id: str, force: bool = False) -> dict:
        return self._call("POST", f"/v1/judgments/{trace_id}/rollback", params={"force": str(force).lower()})

    def purge(self, *, user_id=None, agent_id=None, run_id=None, compact: bool = True) -> dict:
        return self._call("POST", "/v1/purge", json={**_scope(user_id, agent_id, run_id), "compact": compact})

    def history(self, memory_id: str) -> list[dict]:
        return self._call("GET", f"/v1/memories/{memory_id}/history")

    def explain(self, memory_id: str, **_scope_ids) -> dict:
        return self._call("GET", f"/v1/memories/{memory_id}/explain")

    def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        return self._call("POST", f"/v1/reviews/{trace_id}", json={"operations": operations})

    # --- judgments ----------------------------------------------------------------------------------------

    def judgments(self, trace_id: str) -> dict:
        return self._call("GET", f"/v1/judgments/{trace_id}")

    def list_judgments(self, *, user_id=None, agent_id=None, run_id=None, limit=50, offset=0) -> list[dict]:
        params = {**_scope(user_id, agent_id, run_id), "limit": limit, "offset": offset}
        return self._call("GET", "/v1/judgments", params=params)["results"]

    def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return self._call("POST", f"/v1/judgments/{trace_id}/verify", json={"result": result, "notes": notes})

    def judgment_stats(self, *, user_id=None, agent_id=None, run_id=None) -> dict:
        return self._call("GET", "/v1/judgments/stats", params=_scope(user_id, agent_id, run_id))

    def verify_many(self, trace_ids: list[str], result: str, notes: str | None = None) -> dict:
        return self._call("POST", "/v1/judgments/verify", json={"trace_ids": trace_ids, "result": result, "notes": notes})

    def audit(self, *, user_id=None, agent_id=None, run_id=None, since=None, kinds=None, store=True, group_id=None) -> dict:
        if not store or group_id is not None:
            raise InvalidInputError("--dry-run and --group-id audits run where the stores are (without MEMORYX_URL).")
        return self._call("POST", "/v1/judgments/audit",
                          json={**_scope(user_id, agent_id, run_id), "since": since, "kinds": kinds})

    def findings(self, *, user_id=None, agent_id=None, run_id=None, kinds=None, since=None, limit=100, **_: Any) -> list[dict]:
        params = {**_scope(user_id, agent_id, run_id), "limit": limit, **({"since": since} if since else {}),
                  **({"kind": kinds} if kinds else {})}
        return self._call("GET", "/v1/judgments/findings", params=params)["results"]

    def judgment_report(self, *, days=30, user_id=None, agent_id=None, run_id=None, group_id=None) -> dict:
        return self._call("GET", "/v1/judgments/report", params={**_scope(user_id, agent_id, run_id), "days": days})

    # --- what the server does not expose ---------------------------------------------------------------

    def reindex(self, **scope: Any) -> dict:
        raise InvalidInputError("reindex runs where the stores are: on the server host without MEMORYX_URL "
                                "(stop `memoryx serve` first when it holds the embedded data directory).")

    def reset(self) -> None:
        raise InvalidInputError("reset is not exposed over HTTP; run it on the server host without MEMORYX_URL.")

    def __getattr__(self, name: str):
        # a Memory method with no REST counterpart here: say so
        # instead of an AttributeError
        if name.startswith("_"):
            raise AttributeError(name)
        raise InvalidInputError(f"Memory.{name} is not available through MEMORYX_URL yet; run the command on the "
                                "server host without MEMORYX_URL (stop `memoryx serve` first if it holds the data directory).")

    def close(self) -> None:
        self._http.close()
