"""The progress bar of long commands (`memoryx import`), on stderr so that --json output stays clean."""

from __future__ import annotations

import sys


def progress_bar(total: int, desc: str, enabled: bool):
    """A tqdm bar (tqdm comes with huggingface_hub, a dependency of the embeddings), imported only when used."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="session", disable=not enabled, file=sys.stderr, leave=True)
