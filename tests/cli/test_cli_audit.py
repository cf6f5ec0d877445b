"""`memoryx audit` (table and --json), `memoryx judgments verify T1 T2 --result R` and `memoryx judgments report`,
run as subprocesses on their own data directory."""

from __future__ import annotations

import json

from memoryx.api.memory import Memory
from tests.cli.test_cli import run
from tests.support import shared_embeddings


def test_audit_verify_and_report(tmp_path):
    user = "cli-jazz"
    # the two adds the audit finds, written in this process (closed before the commands run): the commands on
    # trial are audit and judgments
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        traces = [m.add(text, user_id=user)["trace_id"] for text in ("I like jazz.", "I don't like jazz anymore.")]

    table = run(tmp_path, "audit", "--user-id", user, "--kind", "add_then_delete").stdout
    assert "add_then_delete" in table and "KIND" in table and "1 new, 1 stored" in table
    found = json.loads(run(tmp_path, "audit", "--user-id", user, "--json").stdout)
    undone = [f for f in found["findings"] if f["kind"] == "add_then_delete"]
    assert len(undone) == 1 and undone[0]["trace_ids"] == traces and not undone[0]["new"]  # stored once
    bad = run(tmp_path, "audit", "--kind", "nonsense", check=1)
    assert "add_then_delete" in bad.stderr

    out = json.loads(run(tmp_path, "judgments", "verify", *traces, "no-such", "--result", "correct", "--notes", "fine",
                         "--json").stdout)
    assert out["verified"] == 2 and {r["status"] for r in out["results"]} == {"verified", "not_found"}
    record = json.loads(run(tmp_path, "judgments", "show", traces[1], "--json").stdout)
    assert record["verification_result"] == "CORRECT" and record["verification_notes"] == "fine"
    assert "marked INCORRECT" in run(tmp_path, "judgments", "verify", traces[0], "incorrect").stdout  # older form

    report = json.loads(run(tmp_path, "judgments", "report", "--days", "2", "--user-id", user, "--json").stdout)
    today = report["days"][-1]
    assert today["total"] == 2 and today["by_result"] == {"CORRECT": 1, "INCORRECT": 1, "PARTIAL": 0}
    assert today["accuracy"] == 0.5
    assert "ACCURACY" in run(tmp_path, "judgments", "report", "--days", "2", "--user-id", user).stdout
