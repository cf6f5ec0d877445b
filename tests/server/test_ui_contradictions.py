"""The review page shows a consolidation pass's contradictions: which statement was kept, which superseded,
on what subject and relation, and why (the seeds' rule)."""

from __future__ import annotations

import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.server.test_ui import KEYS, _shot, _sign_in, browser, needs_browser, page  # noqa: F401 - fixtures
from tests.support import ServerThread, shared_embeddings


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("ui-contra"), graph_backend="none", api_keys=KEYS,
                embeddings=shared_embeddings()) as m:
        for text, day in (("User works at Acme", "2025-01-05"), ("User works at Globex", "2025-04-02")):
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T09:00:00+00:00"}], user_id="erin",
                  infer=False)
        report = m.consolidate(user_id="erin")
        assert report["contradictions"] == 1
        with ServerThread(create_app(memory=m)) as srv:
            yield {"url": srv.url, "trace": report["trace_id"]}


@needs_browser
def test_a_pass_shows_its_contradictions(site, page):  # noqa: F811 - the page fixture
    _sign_in(page, site["url"], "key-admin")
    row = page.locator(f"#judgment-table tr[data-trace='{site['trace']}']")
    row.wait_for()
    assert "contradictions" in row.inner_text()
    row.click()
    page.wait_for_selector("#d-contradictions")
    shown = page.inner_text("#d-contradictions")
    assert "User works at Globex" in shown and "User works at Acme" in shown
    assert "works at" in shown and "globex ≠ acme" in shown and "later statement wins" in shown
    assert "superseded" in page.inner_text("#d-archives")
    _shot(page, "contradictions.png")
