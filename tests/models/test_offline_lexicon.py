"""The offline model's words are data: each offline.* table of core/lexicon_data is used by its rules, its modules
hold no word table of their own, and a word added to a table changes what the model reads."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from memoryx.core import lexicon

MODELS = Path(__file__).resolve().parents[2] / "models"
# sets of names that are not words of a language: the prompts' task tags, the tools, the statements' attributes
NOT_WORDS = {"RULE_TASKS", "GRAPH_TOOLS", "FACT_TASKS", "SINGLE_VALUED", "ENTITY_TYPES", "RELATION_NAMES"}


def sources() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(MODELS.glob("offline*.py"))}


def test_every_offline_table_is_used_by_the_rules():
    code = "\n".join(sources().values())
    used = set(re.findall(r"<@(offline\.\w+)", code)) | set(re.findall(r"[\"'](offline\.\w+)[\"']", code))
    for lang in lexicon.LANGUAGES:
        tables = {name for name in json.loads((lexicon.DATA / f"{lang}.json").read_text(encoding="utf-8"))
                  if name.startswith("offline.")}
        assert tables <= used, f"{lang}.json tables no rule reads: {sorted(tables - used)}"
    for name in used:
        lexicon.table(name)  # and every table a rule names is in the data


def test_the_modules_hold_no_word_table():
    tables = []
    for name, text in sources().items():
        for node in ast.parse(text).body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id in NOT_WORDS:
                continue
            for n in ast.walk(getattr(node, "value", None) or ast.Pass()):
                elts = n.elts if isinstance(n, (ast.List, ast.Tuple, ast.Set)) else \
                    [*n.keys, *n.values] if isinstance(n, ast.Dict) else []
                words = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if len([w for w in words if w not in lexicon.LANGUAGES]) >= 3:  # (a table per language is fine)
                    tables.append(f"{name}:{node.lineno}")
    assert tables == [], f"word tables in code (move them to core/lexicon_data): {tables}"


def test_a_word_added_to_a_table_changes_what_the_model_reads(tmp_path):
    for lang in lexicon.LANGUAGES:
        (tmp_path / f"{lang}.json").write_text((lexicon.DATA / f"{lang}.json").read_text(encoding="utf-8"),
                                               encoding="utf-8")
    en = json.loads((tmp_path / "en.json").read_text(encoding="utf-8"))
    en["offline.family"].append("stepdad")
    (tmp_path / "en.json").write_text(json.dumps(en), encoding="utf-8")
    script = ("import sys, json\nfrom pathlib import Path\nimport memoryx.core.lexicon as L\n"
              "if len(sys.argv) > 1: L.DATA = Path(sys.argv[1])\n"
              "from memoryx.models.offline import extract_user_facts\n"
              "print(json.dumps([f['text'] for f in extract_user_facts(\"stepdad's birthday is on 3 May\")]))")

    def facts(*data: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", script, *data], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    assert facts() == ["stepdad's birthday is on 3 May"]
    assert facts(str(tmp_path)) == ["User's stepdad's birthday is on 3 May"]
