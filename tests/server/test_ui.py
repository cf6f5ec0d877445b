"""The judgment review page (/ui) in a real headless Chromium driven by Playwright: sign-in with a key,
real clicks that verify a judgment and approve a review, what the page shows afterwards, tenancy of a user
key, and the screenshots in docs/screenshots/ for the README. The server is uvicorn on 127.0.0.1 over a
Memory with the offline model and the embedded FalkorDB."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from memoryx import Memory
from memoryx.core.scope import Scope
from memoryx.server.app import create_app
from memoryx.server.ui_routes import consolidation_counts, matches, summary
from tests.support import ServerThread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The README's screenshots are refreshed only when asked (MEMORYX_UPDATE_SCREENSHOTS=1): a test run must not
# change tracked files. Otherwise they go to a temporary folder, still taken (rendering errors still fail).
SHOTS = (Path(__file__).resolve().parents[2] / "docs" / "screenshots"
         if os.environ.get("MEMORYX_UPDATE_SCREENSHOTS") == "1"
         else Path(tempfile.gettempdir()) / "memoryx-ui-screenshots")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
KEYS = {"key-admin": {"admin": True}, "key-alice": ["alice"], "key-bob": ["bob"]}

needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)")


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
        with ServerThread(create_app(memory=m)) as srv:
            yield {"url": srv.url, "memory": m, "pending": pending["trace_id"], "bob": bob["trace_id"]}


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


def _shot(page, name: str, full_page: bool = True) -> None:
    page.evaluate("(t => { t.style.transition = 'none'; t.classList.remove('show'); })(document.querySelector('#toast'))")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=full_page)


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
    assert row["operation_type"] == "MEMORY_UPDATE" and row["consolidation"] == {}
    passed = {"operation_type": "CONSOLIDATE", "parsed_operations": {"merges": [{}], "summaries": [], "archives": [{}, {}]}}
    assert consolidation_counts(passed) == {"merges": 1, "archives": 2}


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
    page.wait_for_function("() => document.querySelectorAll('#judgment-table tbody tr').length === 1")
    assert page.get_attribute("#judgment-table tbody tr", "data-trace") == site["pending"]
    page.select_option("#f-status", "")
    page.select_option("#f-event", "ADD")
    page.click("#apply-filters")
    with_add = [j["trace_id"] for j in everything if any(op["event"] == "ADD" for op in j["parsed_operations"] or [])]
    page.wait_for_function(f"() => document.querySelectorAll('#judgment-table tbody tr').length === {len(with_add)}")
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
    page.wait_for_function("() => document.querySelector('#review-count').textContent === ''")

    # the approved memory is now in alice's memories, with its history
    page.select_option("#user-pick", "alice")
    page.click("#tabs a[data-tab=memories]")
    page.wait_for_selector("#memory-table")
    rex = page.locator("#memory-table tr", has_text="Rex")
    assert rex.count() == 1
    rex.click()
    page.wait_for_selector("#history .history li")
    assert "ADD" in page.inner_text("#history")
    # and why it is remembered: the four importance factors and the judge's reason with its trace
    for factor in ("scarcity", "impact", "recency", "certainty"):
        assert page.locator(f"#explain tr[data-factor={factor}]").count() == 1
    assert site["pending"] in page.inner_text("#explain .reasons")

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
    # the user column, after the row's select box
    users = page.eval_on_selector_all("#judgment-table tbody tr td:nth-child(3)", "els => els.map(e => e.textContent)")
    assert users and set(users) == {"bob"}
    assert page.eval_on_selector_all("#user-pick option", "els => els.map(e => e.value)") == ["bob"]
    # what the page would get if it asked for alice: refused by the API
    status = page.evaluate("""async () => (await fetch('/v1/ui/judgments?user_id=alice',
                               {headers: {'X-API-Key': 'key-bob'}})).status""")
    assert status == 403
    page.goto(f"{site['url']}/ui/#/judgments/{site['pending']}")  # alice's judgment by its trace id
    page.wait_for_selector("#view .error")
    assert "No judgment" in page.inner_text("#view")
    with httpx.Client(base_url=site["url"], headers={"X-API-Key": "key-bob"}) as c:  # nor its rollback
        assert c.get(f"/v1/ui/judgments/{site['pending']}/rollback-links").status_code == 404
        assert c.post(f"/v1/judgments/{site['pending']}/rollback").status_code == 404


# ------------------------------------------------------------------------------- rollback, consolidation
# (last in the file: they add runs the counts of the test above do not expect)


@needs_browser
def test_roll_back_an_update_with_real_clicks(site, page):
    """'I live in Berlin' then 'I moved to Munich' (an UPDATE by the offline model), then a direct edit of the
    same memory: rolling back the UPDATE first answers 409 naming the edit; 'roll back that one too' undoes
    both, and the memory browser shows Berlin again."""
    m = site["memory"]
    m.add("I live in Berlin.", user_id="carol")
    moved = m.add("I moved to Munich.", user_id="carol")
    assert [r["event"] for r in moved["results"]] == ["UPDATE"]
    edit = m.update(moved["results"][0]["id"], "I live in Munich, near the Isar.")

    _sign_in(page, site["url"], "key-admin")
    page.click(f"#judgment-table tr[data-trace='{moved['trace_id']}']")
    page.click("#rollback-btn")
    page.wait_for_selector("dialog#rollback-dialog[open]")
    page.click("#rollback-confirm")
    page.wait_for_selector("#rollback-later li")  # the 409: the later direct edit is named
    assert page.eval_on_selector_all("#rollback-later li", "els => els.map(e => e.dataset.trace)") == [edit["trace_id"]]
    _shot(page, "rollback-conflict.png", full_page=False)  # the modal covers the viewport only
    page.click("#rollback-force")
    page.wait_for_selector("#rollback-result")
    assert not page.is_visible("dialog#rollback-dialog")
    rollback_id = page.get_attribute("#rollback-result dd a[data-trace]", "data-trace")
    assert m.judgments(rollback_id)["operation_type"] == "ROLLBACK"
    assert m.judgments(rollback_id)["input_content"] == moved["trace_id"]
    assert "Berlin" in page.inner_text("#rollback-ops")
    assert page.get_attribute("#rolled-back-by a", "data-trace") == rollback_id
    assert page.locator("#rollback-btn").count() == 0  # a run is rolled back once
    _shot(page, "rollback.png")

    # the judgment list gains the ROLLBACK records; the undone run is marked
    page.click("text=← all judgments")
    row = page.locator(f"#judgment-table tr[data-trace='{rollback_id}']")
    row.wait_for()
    assert page.locator("#view").inner_text().count("null") == 0
    assert "ROLLBACK" in row.inner_text()
    assert "rolled back" in page.inner_text(f"#judgment-table tr[data-trace='{moved['trace_id']}']")
    row.click()
    page.wait_for_selector("#rollback-of")
    assert page.get_attribute("#rollback-of a", "data-trace") == moved["trace_id"]

    # the memory browser: Berlin again, Munich gone
    page.select_option("#user-pick", "carol")
    page.click("#tabs a[data-tab=memories]")
    page.wait_for_selector("#memory-table")
    texts = page.eval_on_selector_all("#memory-table tbody tr td:first-child", "els => els.map(e => e.textContent)")
    assert len(texts) == 1 and "Berlin" in texts[0] and "Munich" not in texts[0]
    page.click("#memory-table tbody tr")
    page.wait_for_selector("#history .history li")
    assert page.locator("#history .badge.ev-ROLLBACK").count() == 2  # the edit's undo, then the UPDATE's


@needs_browser
def test_a_consolidation_judgment_reads_as_merges_and_archives(site, page):
    m = site["memory"]
    dave = Scope(user_id="dave")
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    ids = [m.services.sql.insert_memory(scope=dave, text=text, memory_type=kind, created_at=t0)["id"]
           for text, kind in (("I live in Paris", "semantic"), ("I live in Paris.", "semantic"),
                              ("Had a sandwich for lunch", "episodic"))]
    m.services.projector.sync_memories(ids)
    report = m.consolidate(user_id="dave", now=t0 + timedelta(days=365))
    assert report["merged"] == 1 and report["archived"] >= 1

    _sign_in(page, site["url"], "key-admin")
    row = page.locator(f"#judgment-table tr[data-trace='{report['trace_id']}']")
    row.wait_for()
    assert "CONSOLIDATE" in row.inner_text() and "merges" in row.inner_text()
    row.click()
    page.wait_for_selector("#d-merges")
    merges = page.inner_text("#d-merges")
    assert "I live in Paris" in merges and "cosine" in merges
    archives = page.inner_text("#d-archives")
    assert "sandwich" in archives and "R = exp" in archives
    assert page.locator("#rollback-btn").count() == 1  # a consolidation pass can be rolled back too
    _shot(page, "consolidation.png")


@needs_browser
def test_the_newest_view_is_drawn_when_an_older_one_answers_last(site, page):
    """Picking a user redraws the open judgment; clicking the memories tab right after must end on the
    memories even when the judgment's answer arrives last (it used to draw itself over the memory table)."""
    _sign_in(page, site["url"], "key-admin")
    page.click(f"#judgment-table tr[data-trace='{site['bob']}']")
    page.wait_for_selector("#d-input")
    # the browser's own fetch, with the judgment's answers held back 800 ms
    page.evaluate("""() => { const real = window.fetch;
        window.fetch = (url, opts) => String(url).includes('/v1/judgments/')
          ? real(url, opts).then((r) => new Promise((done) => setTimeout(() => done(r), 800)))
          : real(url, opts); }""")
    page.select_option("#user-pick", "bob")
    page.click("#tabs a[data-tab=memories]")
    page.wait_for_selector("#memory-table")
    page.wait_for_timeout(1500)  # past the held-back answer
    assert page.is_visible("#memory-table")
    assert "green tea" in page.inner_text("#memory-table")
    assert page.locator("#d-input").count() == 0


@needs_browser
def test_what_a_reviewer_sees_first(site, page):
    """Before sign-in nothing but the form; a group chat's row names the group; executed operations say why;
    a consolidation row reads as a date; every history event has a visible badge."""
    m = site["memory"]
    group = m.add([{"role": "user", "name": "Caroline", "content": "I moved to Boston."},
                   {"role": "user", "name": "Melanie", "content": "I like painting."}], group_id="book-club")
    page.goto(f"{site['url']}/ui/")
    page.wait_for_selector("#sign-in-form")
    for hidden in ("#who", "#sign-out", "#user-pick", "#tabs"):
        assert not page.is_visible(hidden), hidden
    _sign_in(page, site["url"], "key-admin")
    assert page.is_visible("#sign-out") and page.is_visible("#user-pick")

    row = page.locator(f"#judgment-table tr[data-trace='{group['trace_id']}']")
    row.wait_for()
    assert "group book-club" in row.locator("td").nth(2).inner_text()  # after the select box and the time
    for text in page.locator("#judgment-table tbody tr td:nth-child(3)").all_inner_texts():
        assert text.strip() not in ("", "–")

    first = m.list_judgments(user_id="alice", limit=50)[-1]["trace_id"]  # "I live in Oslo and I work at Acme."
    page.goto(f"{site['url']}/ui/#/judgments/{first}")
    page.wait_for_selector("#d-executed tbody tr")
    reasons = page.locator("#d-executed tbody tr td:nth-child(5)").all_inner_texts()
    assert reasons and all(r.strip() for r in reasons), reasons

    dave = Scope(user_id="erin")
    t0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
    ids = [m.services.sql.insert_memory(scope=dave, text=t, memory_type="semantic", created_at=t0)["id"]
           for t in ("I live in Rome", "I live in Rome.")]
    m.services.projector.sync_memories(ids)
    report = m.consolidate(user_id="erin", now=t0 + timedelta(days=30))
    page.goto(f"{site['url']}/ui/#/judgments")
    row = page.locator(f"#judgment-table tr[data-trace='{report['trace_id']}']")
    row.wait_for()
    preview = row.locator("td").last.inner_text()
    assert "as of 2025-03-31" in preview and not re.search(r"\d{9,}", preview), preview

    colours = page.evaluate("""(events) => events.map((e) => {
        const b = document.createElement('span'); b.className = `badge ev-${e}`; b.textContent = e;
        document.body.append(b); const c = getComputedStyle(b).backgroundColor; b.remove(); return c; })""",
                            ["PROMOTE", "ARCHIVE", "MERGE", "MERGED", "SUMMARY", "SUMMARIZED", "RESTORE", "ROLLBACK",
                             "ADD", "UPDATE", "DELETE", "NONE", "SOMETHING_NEW"])
    assert all(c not in ("rgba(0, 0, 0, 0)", "transparent", "rgb(255, 255, 255)") for c in colours), colours
