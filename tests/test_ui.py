"""The judgment review page (/ui) in a real headless Chromium driven by Playwright: sign-in with a key,
real clicks that verify a judgment and approve a review, what the page shows afterwards, tenancy of a user
key, and the screenshots in docs/screenshots/ for the README. The server is uvicorn on 127.0.0.1 over a
Memory with the offline model and the embedded FalkorDB."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn

from memoryx import Memory
from memoryx.server.app import create_app
from memoryx.server.ui_routes import matches, summary

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
KEYS = {"key-admin": {"admin": True}, "key-alice": ["alice"], "key-bob": ["bob"]}

needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The server with a few judgments: alice (two adds, one of them an update of the first), bob, and one
    alice run stopped at the review interrupt."""
    with Memory(data_dir=tmp_path_factory.mktemp("ui-data"), api_keys=KEYS) as m:
        m.add("I live in Oslo and I work at Acme.", user_id="alice")
        m.add("My sister Anna lives in Bergen.", user_id="alice")
        m.add("I moved from Oslo to Bergen last month, I no longer live in Oslo.", user_id="alice")
        bob = m.add("I drink green tea every morning.", user_id="bob")
        pending = m.add("I have a dog named Rex.", user_id="alice", review=True)
        assert pending["status"] == "awaiting_review"
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(create_app(memory=m), host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        yield {"url": f"http://127.0.0.1:{port}", "memory": m, "pending": pending["trace_id"], "bob": bob["trace_id"]}
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the browser is Debian's chromium)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    yield p
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _shot(page, name: str) -> None:
    page.evaluate("(t => { t.style.transition = 'none'; t.classList.remove('show'); })(document.querySelector('#toast'))")
    page.screenshot(path=str(SHOTS / name), full_page=True)


def _sign_in(page, url: str, key: str) -> None:
    page.goto(f"{url}/ui/")
    page.fill("#api-key", key)
    page.click("#sign-in")
    page.wait_for_selector("#judgment-table tbody tr")


# ---------------------------------------------------------------------------------------------------- unit


def test_filters_match_on_events_verification_and_days():
    j = {"trace_id": "t", "user_id": "u", "status": "done", "created_at": "2026-03-04T10:00:00+00:00",
         "is_verified": False, "parsed_operations": [{"event": "ADD"}, {"event": "NONE"}], "input_content": "x" * 500}
    assert matches(j, event="ADD", verified=False, status="done", since="2026-03-04", until="2026-03-04")
    assert not matches(j, event="DELETE", verified=None, status=None, since=None, until=None)
    assert not matches(j, event=None, verified=True, status=None, since=None, until=None)
    assert not matches(j, event=None, verified=None, status=None, since="2026-03-05", until=None)
    assert not matches(j, event=None, verified=None, status=None, since=None, until="2026-03-03")
    row = summary(j)
    assert row["events"] == {"ADD": 1, "NONE": 1} and len(row["input_preview"]) == 201


# ----------------------------------------------------------------------------------------------- browser


@needs_browser
def test_nothing_without_a_valid_key(site, page):
    page.goto(f"{site['url']}/ui")  # redirected to /ui/
    assert page.is_visible("#sign-in-view") and not page.is_visible("#view")
    page.fill("#api-key", "not-a-key")
    page.click("#sign-in")
    page.wait_for_selector("#sign-in-error:has-text('refused')")
    assert not page.is_visible("#tabs") and page.locator("#judgment-table").count() == 0
    assert page.evaluate("sessionStorage.getItem('memoryx.apiKey')") is None
    with httpx.Client(base_url=site["url"]) as c:  # the data routes answer nothing without a key
        for path in ("/v1/ui/judgments", "/v1/ui/reviews", "/v1/ui/timeline", "/v1/ui/graph?user_id=alice"):
            assert c.get(path).status_code == 401, path


@needs_browser
def test_verify_a_judgment_and_approve_a_review(site, page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    url = site["url"]
    _sign_in(page, url, "key-admin")
    assert page.evaluate("sessionStorage.getItem('memoryx.apiKey')") == "key-admin"
    assert page.inner_text("#review-count") == "1"
    everything = site["memory"].list_judgments(limit=100)
    assert page.locator("#judgment-table tbody tr").count() == len(everything) == 5
    _shot(page, "judgments.png")

    # filters: only the run waiting for review
    page.select_option("#f-status", "awaiting_review")
    page.click("#apply-filters")
    page.wait_for_function("document.querySelectorAll('#judgment-table tbody tr').length === 1")
    assert page.get_attribute("#judgment-table tbody tr", "data-trace") == site["pending"]
    page.select_option("#f-status", "")
    page.select_option("#f-event", "ADD")
    page.click("#apply-filters")
    with_add = [j["trace_id"] for j in everything if any(op["event"] == "ADD" for op in j["parsed_operations"] or [])]
    page.wait_for_function(f"document.querySelectorAll('#judgment-table tbody tr').length === {len(with_add)}")
    assert page.eval_on_selector_all("#judgment-table tbody tr", "els => els.map(e => e.dataset.trace)") == with_add

    # detail of bob's judgment, then verify it with real clicks
    page.click(f"#judgment-table tr[data-trace='{site['bob']}']")
    page.wait_for_selector("#d-input")
    assert "green tea" in page.inner_text("#d-input")
    assert "green tea" in page.inner_text("#d-facts").lower()
    assert "ADD" in page.inner_text("#d-ops") and "ADD" in page.inner_text("#d-executed")
    assert page.locator("#verified-badge [data-verified]").count() == 0
    page.check("input[name=verdict][value=CORRECT]")
    page.fill("#verify-notes", "Right call: a new preference.")
    page.click("#verify-save")
    page.wait_for_selector("#verified-badge [data-verified=CORRECT]")
    assert site["memory"].judgments(site["bob"])["verification_notes"] == "Right call: a new preference."
    page.click("text=← all judgments")
    page.wait_for_selector(f"#judgment-table tr[data-trace='{site['bob']}'] [data-verified=CORRECT]")
    judged = [j for j in everything if j["existing_memories"] and j["status"] == "done"]  # a judgment by the model
    page.click(f"#judgment-table tr[data-trace='{judged[0]['trace_id']}']")
    page.wait_for_selector("#d-raw")
    assert page.inner_text("#d-raw").strip() == (judged[0]["llm_response"] or "").strip()
    _shot(page, "judgment-detail.png")

    # the review queue: approve the waiting run
    page.click("#tabs a[data-tab=reviews]")
    card = page.locator(f".review-card[data-trace='{site['pending']}']")
    card.wait_for()
    assert "Rex" in card.inner_text()
    card.locator("button.approve").click()
    page.wait_for_selector("#review-empty")
    page.wait_for_function("document.querySelector('#review-count').textContent === ''")

    # the approved memory is now in alice's memories, with its history
    page.select_option("#user-pick", "alice")
    page.click("#tabs a[data-tab=memories]")
    page.wait_for_selector("#memory-table")
    rex = page.locator("#memory-table tr", has_text="Rex")
    assert rex.count() == 1
    rex.click()
    page.wait_for_selector("#history .history li")
    assert "ADD" in page.inner_text("#history")

    # stats: verdicts, latency, the event mix per day
    page.select_option("#user-pick", "")
    page.click("#tabs a[data-tab=stats]")
    page.wait_for_selector("#chart-events rect[data-series=ADD]")
    assert page.inner_text("#k-total").startswith("5") and page.inner_text("#k-accuracy").startswith("100")
    assert page.locator("#chart-verdicts rect").count() == 3
    _shot(page, "stats.png")

    # alice's entities and relations
    page.select_option("#user-pick", "alice")
    page.click("#tabs a[data-tab=graph]")
    page.wait_for_selector("#graph-svg")
    graph = site["memory"].services.sql.list_entities(None)
    alice_names = {e["name"] for e in graph if e["user_id"] == "alice"}
    drawn = set(page.eval_on_selector_all("#graph-svg g.node", "els => els.map(e => e.dataset.name)"))
    assert drawn == alice_names
    _shot(page, "graph.png")


@needs_browser
def test_a_user_key_sees_only_its_user(site, page):
    _sign_in(page, site["url"], "key-bob")
    users = page.eval_on_selector_all("#judgment-table tbody tr td:nth-child(2)", "els => els.map(e => e.textContent)")
    assert users and set(users) == {"bob"}
    assert page.eval_on_selector_all("#user-pick option", "els => els.map(e => e.value)") == ["bob"]
    # what the page would get if it asked for alice: refused by the API
    status = page.evaluate("""async () => (await fetch('/v1/ui/judgments?user_id=alice',
                               {headers: {'X-API-Key': 'key-bob'}})).status""")
    assert status == 403
    page.goto(f"{site['url']}/ui/#/judgments/{site['pending']}")  # alice's judgment by its trace id
    page.wait_for_selector("#view .error")
    assert "No judgment" in page.inner_text("#view")
