"""Output for people (tables, records) and for scripts (JSON)."""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from typing import Any, Iterable, Sequence

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((120, 20)).columns, 200))


def _cell(value: Any, width: int) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.3f}"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False) if value else "-"
    else:
        text = str(value)
        if _ISO.match(text):  # 2026-11-21T23:21:24.866264+00:00 -> 2026-11-21 23:21:24
            text = text[:10] + " " + text[11:19]
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _display_len(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _display_len(text))


def print_table(rows: list[dict], columns: Sequence[tuple[str, str]], *, wide: str | None = None) -> None:
    """Columns: (key, header). `wide` takes the remaining terminal width."""
    if not rows:
        print("(none)")
        return
    total = _width()
    fixed = {k: max(len(h), *(_display_len(_cell(r.get(k), 40)) for r in rows)) for k, h in columns if k != wide}
    fixed = {k: min(w, 40) for k, w in fixed.items()}
    widths = dict(fixed)
    if wide:
        used = sum(fixed.values()) + 2 * (len(columns) - 1)
        widths[wide] = max(20, total - used)
    header = "  ".join(_pad(h, widths[k]) for k, h in columns)
    print(header.rstrip())
    print("  ".join("-" * widths[k] for k, _ in columns))
    for r in rows:
        cells = []
        for k, _ in columns:
            text = _cell(r.get(k), widths[k])
            while _display_len(text) > widths[k] and len(text) > 1:  # CJK cells are two columns wide
                text = text[:-2] + "…"
            cells.append(_pad(text, widths[k]))
        print("  ".join(cells).rstrip())


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def print_record(record: dict, keys: Iterable[str] | None = None) -> None:
    keys = list(keys or record.keys())
    width = max(len(k) for k in keys)
    for k in keys:
        if k in record:
            print(f"{k.ljust(width)}  {_cell(record[k], 10_000)}")
