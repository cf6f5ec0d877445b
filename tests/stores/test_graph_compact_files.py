"""The graph's compaction returns only once the deleted text has left its files: the embedded FalkorDB (Redis
8, multi-part AOF) unlinks the pre-rewrite AOF files on a background thread after the rewrite reports
done, so for a moment they were still on disk with the purged names in them."""

from __future__ import annotations

import uuid

import pytest

from memoryx.core.scope import Scope
from tests.support import make_services

pytestmark = pytest.mark.integration


def test_compact_returns_after_the_old_aof_files_are_gone(tmp_path):
    services = make_services(tmp_path, graph=True)
    try:
        graph = services.graph
        folder = tmp_path / "data" / "falkordb" / "appendonlydir"
        for round_ in range(5):  # the background unlink is a race: several rounds make it show
            marker = f"Zq{uuid.uuid4().hex[:10]}"
            scope = Scope(user_id=f"u{round_}")
            graph.upsert_entities(scope, [{"id": str(uuid.uuid4()), "name": f"{marker} {i}", "entity_type": "x"}
                                          for i in range(50)])
            graph.delete_scope(scope)
            assert graph.compact() is True
            manifest = next(folder.glob("*.manifest"))
            listed = {line.split()[1] for line in manifest.read_text().splitlines() if line.startswith("file ")}
            on_disk = {f.name for f in folder.iterdir() if f != manifest}
            assert on_disk <= listed, (round_, sorted(on_disk - listed))
            holding = [f.name for f in folder.iterdir() if marker.encode() in f.read_bytes()]
            assert holding == [], (round_, holding)
    finally:
        services.close()
