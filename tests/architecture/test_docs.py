"""The documents a newcomer reads agree with the code: the settings page is generated from settings.py, the
README stays within two screens and names the test command CI runs, the contracts describe the ids the
code makes."""

from __future__ import annotations

from pathlib import Path

from memoryx.settings import Settings, settings_table

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = ("regenerate the table: python3 -c \"from memoryx.settings import settings_table; "
              "print(settings_table())\" and paste it over the one in docs/configuration.md")


def test_configuration_page_is_the_settings_table():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert settings_table() in page, REGENERATE
    for name in Settings.model_fields:
        assert f"`MEMORYX_{name.upper()}`" in page


def test_no_document_shows_pydantic_internals():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        assert "PydanticUndefined" not in text and "default_factory" not in text, path.name


def test_readme_fits_two_screens_and_names_the_ci_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    assert "bash scripts/demo.sh" in readme and "bash scripts/test.sh" in readme
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for doc in ("docs/configuration.md", "docs/architecture.md", "docs/benchmarks.md", "docs/contracts.md"):
        assert doc in readme and (ROOT / doc).exists(), doc


def test_contracts_describe_the_ids_the_code_makes():
    contracts = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    assert "Ids are uuid4" not in contracts
    assert "uuid5" in contracts
    execute = (ROOT / "nodes" / "execute_ops.py").read_text(encoding="utf-8")
    assert "uuid5" in execute  # memory ids of an add run (tests/api/test_api.py checks a real one)
