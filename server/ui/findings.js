// The review page's view of the judgment log's audit: the Findings tab (scan now, dismiss), the Report tab
// (accuracy and judgment latency per day) and the judgments table's multi-select for batch verification.
// Uses app.js's helpers (h, api, show, toast, S); every text goes in through textContent.
"use strict";

const KINDS = ["add_then_delete", "churn", "parsed_vs_executed", "slow", "failed", "unverified"];
const SEVERITY_COLORS = { error: "#c8423b", warning: "#d08a1c", info: "#667085" };

// ---- findings -------------------------------------------------------------------------------------------

async function renderFindings() {
  if (!S.me.admin && !S.user) return show(needUser("findings"));
  const f = S.filters;
  const dismissed = f["fd-dismissed"] === "true";
  const data = await api("/v1/judgments/findings", { params: { ...userParam(), kind: f["fd-kind"], dismissed, limit: 500 } });
  const sel = (id, label, options) => h("label", {}, label, h("select", { id, onchange: (ev) => { S.filters[id] = ev.target.value; renderFindings(); } },
    ...options.map(([v, t]) => h("option", { value: v, selected: (f[id] || "") === v }, t))));
  const scan = h("button", { type: "button", id: "run-audit", onclick: async () => {
    scan.disabled = true;
    try {
      const out = await api("/v1/judgments/audit", { method: "POST", body: { user_id: S.user || null } });
      toast(`Scanned ${out.scanned} records: ${out.findings.length} findings, ${out.stored} new.`);
      await renderFindings();
    } catch (e) { toast(e.message, true); scan.disabled = false; }
  } }, "Scan now");
  const dismiss = (finding) => h("button", { type: "button", class: "secondary", "data-dismiss": finding.id, onclick: async (ev) => {
    ev.target.disabled = true;
    try {
      await api(`/v1/judgments/findings/${encodeURIComponent(finding.id)}/settle`, { method: "POST",
        body: { dismiss: true, reason: "dismissed on the review page" } });
      toast("Finding dismissed.");
      await renderFindings();
    } catch (e) { toast(e.message, true); ev.target.disabled = false; }
  } }, "Dismiss");
  const rows = data.results.map((x) => h("tr", { "data-finding": x.id, "data-kind": x.kind },
    h("td", {}, fmtTime(x.event_at)), h("td", {}, h("span", { class: "badge", style: `background:${SEVERITY_COLORS[x.severity] || "#667085"}` }, x.kind)),
    h("td", {}, x.user_id || h("i", {}, x.agent_id || "–")), h("td", { class: "finding-detail" }, x.detail),
    h("td", {}, x.trace_ids.map((t, i) => h("div", {}, traceLink(t, `run ${i + 1}`)))),
    h("td", {}, x.dismissed ? h("span", { class: "muted" }, x.dismissed_reason || "dismissed")
      : x.verification_trace_id ? h("span", { class: "muted" }, "settled by ", traceLink(x.verification_trace_id, "a verified run")) : dismiss(x))));
  show(h("div", { class: "card filters" }, sel("fd-kind", "Kind", [["", "any"], ...KINDS.map((k) => [k, k])]),
      sel("fd-dismissed", "Shown", [["", "open"], ["true", "dismissed"]]), scan),
    h("div", { class: "card" }, h("h2", {}, `Findings (${data.results.length})`),
      h("p", { class: "muted" }, "What the audit of the judgment log found for a human to look at: an ADD undone soon after, "
        + "a memory that churns, an operation decided but not executed as decided, slow or failed runs, old unverified runs."),
      rows.length ? h("table", { id: "finding-table" }, h("thead", {}, h("tr", {}, ...["When (UTC)", "Kind", "User", "Detail", "Runs", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)) : h("p", { class: "empty", id: "finding-empty" }, "No findings. Scan now to audit the log.")));
}

// ---- daily report ---------------------------------------------------------------------------------------

async function renderReport() {
  if (!S.me.admin && !S.user) return show(needUser("the daily report"));
  const days = Number(S.filters["rp-days"] || 30);
  const data = await api("/v1/judgments/report", { params: { ...userParam(), days } });
  const C = window.MXCharts;
  const pick = h("label", {}, "Days ", h("select", { id: "rp-days", onchange: (ev) => { S.filters["rp-days"] = ev.target.value; renderReport(); } },
    ...[7, 14, 30, 90].map((n) => h("option", { value: n, selected: n === days }, String(n)))));
  const rows = data.days.slice().reverse().map((d) => h("tr", { "data-day": d.day, class: d.latency_alert ? "alert-row" : null },
    h("td", {}, d.day), h("td", {}, String(d.total)), h("td", {}, String(d.verified)),
    h("td", {}, String(d.by_result.CORRECT)), h("td", {}, String(d.by_result.INCORRECT)), h("td", {}, String(d.by_result.PARTIAL)),
    h("td", { class: "acc" }, pct(d.accuracy)), h("td", {}, fmtMs(d.latency_ms.p50)), h("td", {}, fmtMs(d.latency_ms.p95)),
    h("td", {}, String(d.failed)), h("td", {}, eventBadges(d.by_event))));
  show(h("div", { class: "card filters" }, pick),
    h("div", {},
      h("div", { class: "card" }, h("h3", {}, "Accuracy per day (correct / verified)"),
        C.lineChart(data.days, [{ key: "accuracy", color: "#2e9d5b", label: "accuracy" }], { id: "chart-accuracy", max: 1, fmt: pct })),
      h("div", { class: "card" }, h("h3", {}, "Judgment latency per day"),
        h("div", { class: "legend" }, h("span", {}, h("i", { style: "background:#2f5bd3" }), "p50"), h("span", {}, h("i", { style: "background:#c8423b" }), "p95")),
        C.lineChart(data.days, [{ key: "p50", color: "#2f5bd3" }, { key: "p95", color: "#c8423b" }],
          { id: "chart-report-latency", get: (r, k) => r.latency_ms[k], fmt: (v) => `${v < 10 ? v.toFixed(1) : Math.round(v)} ms` }))),
    h("div", { class: "card" }, h("h2", {}, `Daily report (${days} days, UTC)`),
      h("table", { id: "report-table" }, h("thead", {}, h("tr", {}, ...["Day", "Runs", "Verified", "Correct", "Incorrect", "Partial", "Accuracy",
        "p50", "p95", "Failed", "Executed"].map((t) => h("th", {}, t)))), h("tbody", {}, rows))));
}

// ---- batch verification on the judgments table ----------------------------------------------------------

const picked = new Set();

function selectCell(traceId) {
  return h("td", { class: "pick", onclick: (ev) => ev.stopPropagation() },
    h("input", { type: "checkbox", "data-pick": traceId, checked: picked.has(traceId), onchange: (ev) => {
      if (ev.target.checked) picked.add(traceId); else picked.delete(traceId);
      updateBatchBar();
    } }));
}

function selectAllCell(traceIds) {
  return h("th", { class: "pick" }, h("input", { type: "checkbox", id: "pick-all", title: "select every row", onchange: (ev) => {
    for (const t of traceIds) if (ev.target.checked) picked.add(t); else picked.delete(t);
    document.querySelectorAll("input[data-pick]").forEach((box) => { box.checked = ev.target.checked; });
    updateBatchBar();
  } }));
}

function updateBatchBar() {
  const n = $("#batch-count");
  if (n) n.textContent = `${picked.size} selected`;
  const go = $("#batch-verify");
  if (go) go.disabled = picked.size === 0;
}

function batchBar(onDone) {
  const verdict = h("select", { id: "batch-result" }, ...["CORRECT", "PARTIAL", "INCORRECT"].map((v) => h("option", { value: v }, v)));
  const notes = h("input", { id: "batch-notes", placeholder: "notes (optional)" });
  const go = h("button", { type: "button", id: "batch-verify", disabled: picked.size === 0, onclick: async () => {
    go.disabled = true;
    try {
      const out = await api("/v1/judgments/verify", { method: "POST",
        body: { trace_ids: [...picked], result: verdict.value, notes: notes.value || null } });
      const missed = out.results.filter((r) => r.status !== "verified").length;
      toast(`${out.verified} marked ${verdict.value}` + (missed ? `, ${missed} not found` : "") + ".", missed > 0);
      picked.clear();
      await onDone();
    } catch (e) { toast(e.message, true); go.disabled = false; }
  } }, "Verify selected");
  return h("div", { class: "batch", id: "batch-bar" }, h("span", { id: "batch-count", class: "muted" }, `${picked.size} selected`), verdict, notes, go);
}
