"""The house keeps its shape: imports only run down the layers, no import circles, no `memoryx` import hidden
inside a function, no module over the size limit. Each rule is also shown failing on a fixture package."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.architecture.import_rules import violations

REPO = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 450


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "memoryx" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "memoryx"


def fixture_package(tmp_path: Path, **files: str) -> Path:
    """A small package laid out like ours (core, api, ...) with the given extra module texts."""
    base = {"__init__.py": "", "core/__init__.py": "", "core/text.py": "X = 1\n", "api/__init__.py": "",
            "api/memory.py": "from memoryx.core.text import X\n", "stores/__init__.py": "", "models/__init__.py": ""}
    return write(tmp_path, {**base, **{k.replace("__", "/") + ".py": v for k, v in files.items()}})


def test_the_package_keeps_the_layer_contract():
    problems = violations(REPO)
    assert problems == [], "\n".join(problems)


def test_a_clean_fixture_package_passes(tmp_path):
    assert violations(fixture_package(tmp_path)) == []


def test_one_upward_import_fails(tmp_path):
    root = fixture_package(tmp_path, core__dates="from memoryx.api.memory import X\n")
    problems = violations(root)
    assert any("memoryx.core.dates" in p and "higher layer" in p for p in problems), problems


def test_an_upward_import_inside_a_function_fails_too(tmp_path):
    root = fixture_package(tmp_path, core__dates="def f():\n    from memoryx.api.memory import X\n    return X\n")
    problems = violations(root)
    assert any("higher layer" in p for p in problems) and any("inside a function" in p for p in problems), problems


def test_one_circle_fails(tmp_path):
    root = fixture_package(tmp_path, core__a="from memoryx.core.b import Y\nX = 1\n",
                           core__b="from memoryx.core.a import X\nY = 2\n")
    problems = violations(root)
    assert any(p.startswith("import circle") and "memoryx.core.a" in p for p in problems), problems


def test_a_downward_import_inside_a_function_fails(tmp_path):
    root = fixture_package(tmp_path, api__front="def f():\n    from memoryx.core.text import X\n    return X\n")
    assert any("inside a function" in p for p in violations(root))


def test_independent_siblings_may_not_import_each_other(tmp_path):
    root = fixture_package(tmp_path, stores__sql="from memoryx.models.embeddings import E\n",
                           models__embeddings="E = 1\n")
    assert any("independent siblings" in p for p in violations(root))


def test_a_light_third_party_import_inside_a_function_fails(tmp_path):
    root = fixture_package(tmp_path, core__when="def f():\n    import json\n    return json\n")
    assert any("imports json inside a function" in p for p in violations(root))
    ok = fixture_package(tmp_path / "ok", core__enc="def f():\n    import torch\n    return torch\n")
    assert violations(ok) == []


def test_a_module_outside_every_layer_fails(tmp_path):
    root = fixture_package(tmp_path, misc="X = 1\n")
    assert any("memoryx.misc is in no layer" in p for p in violations(root))


@pytest.mark.parametrize("folder", [".", "bench"])
def test_no_module_is_over_the_size_limit(folder):
    skip = {"tests", "docs", "scripts"} if folder == "." else set()
    big = [f"{p.relative_to(REPO)}: {n} lines" for p in sorted((REPO / folder).rglob("*.py"))
           if not (set(p.relative_to(REPO).parts) & skip) and not any(x.startswith(".") for x in p.relative_to(REPO).parts)
           and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert big == [], f"modules over {MAX_MODULE_LINES} lines: {big}"


def test_the_root_holds_few_loose_modules():
    loose = sorted(p.name for p in REPO.glob("*.py") if p.name not in ("__init__.py", "state.py"))
    assert len(loose) <= 4, loose


def test_every_package_is_installed():
    """A wheel holds only the packages pyproject.toml lists: a new package missing there imports in a checkout
    and fails after `pip install`."""
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(["memoryx", *p.parent.relative_to(REPO).parts]) for p in REPO.rglob("__init__.py")
             if p.parent.relative_to(REPO).parts[:1] not in (("tests",), ("bench",), ("docs",), ("scripts",))
             and not any(x.startswith(".") for x in p.relative_to(REPO).parts)}
    assert found == listed, f"not listed: {sorted(found - listed)}; listed but absent: {sorted(listed - found)}"
