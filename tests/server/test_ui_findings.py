"""The review page's Findings and Report tabs and the judgments table's batch verification, in a real headless
Chromium (Playwright) against uvicorn on 127.0.0.1: alice's ADD undone by a DELETE found by a click on "Scan
now", dismissed; two runs verified at once; the daily report's charts; bob's key sees none of alice's."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memoryx import Memory
from memoryx.server.app import create_app
from tests.server.test_ui import _shot, _sign_in, browser, needs_browser, page  # noqa: F401 - fixtures
from tests.support import ServerThread

KEYS = {"key-admin": {"admin": True}, "key-alice": ["alice"], "key-bob": ["bob"]}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with Memory(data_dir=tmp_path_factory.mktemp("ui-audit"), api_keys=KEYS) as m:
        first = m.add("I like jazz.", user_id="alice")
        second = m.add("I don't like jazz anymore.", user_id="alice")
        m.add("I drink green tea every morning.", user_id="bob")
        m.add("I no longer drink green tea.", user_id="bob")
        with ServerThread(create_app(memory=m)) as srv:
            yield {"url": srv.url, "memory": m, "traces": [first["trace_id"], second["trace_id"]]}


@needs_browser
def test_findings_tab_scans_and_dismisses(site, page):
    _sign_in(page, site["url"], "key-alice")
    page.click("#tabs a[data-tab=findings]")
    page.wait_for_selector("#finding-empty")
    page.click("#run-audit")
    row = page.wait_for_selector("#finding-table tr[data-kind=add_then_delete]")
    detail = row.inner_text()
    assert "jazz" in detail and "deleted" in detail
    assert page.eval_on_selector_all("#finding-table tr[data-kind=add_then_delete] a[data-trace]",
                                     "els => els.map(e => e.dataset.trace)") == site["traces"]
    assert "tea" not in page.inner_text("#finding-table")  # bob's run stays bob's
    _shot(page, "findings.png")
    finding_id = row.get_attribute("data-finding")
    page.click(f"button[data-dismiss='{finding_id}']")
    page.wait_for_selector(f"#finding-table tr[data-finding='{finding_id}']", state="detached")
    page.select_option("#fd-dismissed", "true")
    page.wait_for_selector(f"#finding-table tr[data-finding='{finding_id}']")
    assert site["memory"].findings(user_id="alice", dismissed=True)[0]["id"] == finding_id


@needs_browser
def test_batch_verify_and_report(site, page):
    _sign_in(page, site["url"], "key-alice")
    for trace in site["traces"]:
        page.check(f"input[data-pick='{trace}']")
    assert page.inner_text("#batch-count") == "2 selected"
    page.select_option("#batch-result", "CORRECT")
    page.fill("#batch-notes", "both right")
    page.click("#batch-verify")
    for trace in site["traces"]:
        page.wait_for_selector(f"#judgment-table tr[data-trace='{trace}'] [data-verified=CORRECT]")
    for trace in site["traces"]:
        record = site["memory"].judgments(trace)
        assert record["verification_result"] == "CORRECT" and record["verification_notes"] == "both right"

    page.click("#tabs a[data-tab=report]")
    today = datetime.now(timezone.utc).date().isoformat()
    page.wait_for_selector(f"#report-table tr[data-day='{today}']")
    assert page.inner_text(f"#report-table tr[data-day='{today}'] td.acc") == "100%"
    assert page.locator(f"#chart-accuracy circle[data-day='{today}']").count() == 1
    assert page.locator("#chart-report-latency circle[data-series=p95]").count() >= 1
    assert page.locator("#report-table tbody tr").count() == 30
    _shot(page, "report.png")


@needs_browser
def test_other_key_sees_none_of_them(site, page):
    site["memory"].audit(user_id="alice")
    _sign_in(page, site["url"], "key-bob")
    page.click("#tabs a[data-tab=findings]")
    page.wait_for_selector("#finding-table, #finding-empty")
    assert "jazz" not in page.inner_text("#view")
