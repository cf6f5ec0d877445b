// MemoryX judgment review page: vanilla JS over the REST API. Nothing is fetched or drawn before a key is
// accepted by GET /v1/ui/me; the key lives in sessionStorage (this tab only) and goes out as X-API-Key.
// Tenancy is the API's: the page only chooses what to ask for. Model and user text is always inserted as
// textContent (h() below), never as HTML: memories and model answers are untrusted.
"use strict";

const KEY_STORE = "memoryx.apiKey";
const EVENTS = ["ADD", "UPDATE", "DELETE", "NONE"];
const EVENT_COLORS = { ADD: "#2e9d5b", UPDATE: "#d08a1c", DELETE: "#c8423b", NONE: "#8a94a6" };
const S = { key: null, me: null, users: [], user: "", filters: {} };
const $ = (sel, root = document) => root.querySelector(sel);

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;  // through the CSSOM: the page's CSP allows no inline style attribute
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

function toast(msg, isError) {
  const t = $("#toast");
  t.textContent = msg;
  t.style.background = isError ? "#c8423b" : "#1d2430";
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 3500);
}

class ApiError extends Error {
  constructor(status, message, data) { super(message); this.status = status; this.data = data; }
}

async function api(path, { method = "GET", body, params } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== null && v !== undefined) url.searchParams.set(k, v);
  const resp = await fetch(url, { method, headers: { "X-API-Key": S.key || "", ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined });
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const msg = (data.error && data.error.message) || `HTTP ${resp.status}`;
    if (resp.status === 401) signOut(msg);
    throw new ApiError(resp.status, msg, data);
  }
  return data;
}

const fmtTime = (iso) => (iso ? iso.replace("T", " ").slice(0, 19) : "–");
const fmtMs = (v) => (v === null || v === undefined ? "–" : `${Math.round(v)} ms`);
const pct = (v) => (v === null || v === undefined ? "–" : `${Math.round(v * 1000) / 10}%`);
const eventBadges = (events) => Object.entries(events || {}).map(([e, n]) => h("span", { class: `badge ev-${e}` }, n > 1 ? `${e}×${n}` : e));
const verdictBadge = (j) => j.is_verified
  ? h("span", { class: `badge v-${j.verification_result}`, "data-verified": j.verification_result }, j.verification_result)
  : h("span", { class: "badge v-no" }, "unverified");
const kindBadge = (kind) => (kind && kind !== "MEMORY_UPDATE" ? h("span", { class: `badge kind kind-${kind}` }, kind) : null);
// who a judgment belongs to: the user (in a group chat, with the group), else the group, else the agent
const ownerCell = (j) => (j.user_id
  ? (j.group_id ? [j.user_id, h("span", { class: "muted" }, ` in ${j.group_id}`)] : j.user_id)
  : j.group_id ? h("i", {}, `group ${j.group_id}`) : h("i", {}, j.agent_id || j.run_id || "–"));
const traceLink = (t, label) => h("a", { href: `#/judgments/${encodeURIComponent(t)}`, "data-trace": t }, label || t);
const userParam = () => ({ user_id: S.user });
const needUser = (what) => h("p", { class: "empty" }, `Pick a user at the top right to see ${what}.`);

// ---- sign-in --------------------------------------------------------------------------------------------

async function signIn(key) {
  S.key = key;
  try {
    S.me = await api("/v1/ui/me");
  } catch (e) {
    S.key = null;
    sessionStorage.removeItem(KEY_STORE);
    $("#sign-in-error").textContent = e.status === 401 ? "This key was refused: " + e.message : e.message;
    return;
  }
  sessionStorage.setItem(KEY_STORE, key);
  S.users = (await api("/v1/ui/users")).users;
  S.user = S.me.admin ? "" : S.users[0] || "";
  renderWho();
  $("#sign-in-view").hidden = true;
  $("#view").hidden = false;
  $("#tabs").hidden = false;
  $("#who").hidden = false;
  refreshReviewCount();
  route();
}

function signOut(message) {
  S.key = S.me = null;
  sessionStorage.removeItem(KEY_STORE);
  $("#view").replaceChildren();
  $("#view").hidden = $("#tabs").hidden = $("#who").hidden = true;
  $("#sign-in-view").hidden = false;
  $("#sign-in-error").textContent = message || "";
  $("#api-key").value = "";
}

function renderWho() {
  const pick = $("#user-pick");
  const opts = S.me.admin ? [h("option", { value: "" }, "(all users)")] : [];
  for (const u of S.users) opts.push(h("option", { value: u }, u));
  if (S.me.admin) opts.push(h("option", { value: "__other" }, "other user…"));
  pick.replaceChildren(...opts);
  pick.value = S.user;
  $("#who-name").textContent = S.me.admin ? `admin (${S.me.name})` : `${S.me.name}: ${S.me.users.join(", ")}`;
}

// ---- judgments ------------------------------------------------------------------------------------------

function filterForm() {
  const f = S.filters;
  const sel = (id, label, options) => h("label", {}, label, h("select", { id },
    ...options.map(([v, t]) => h("option", { value: v, selected: (f[id] || "") === v }, t))));
  const date = (id, label) => h("label", {}, label, h("input", { id, type: "date", value: f[id] || "" }));
  return h("form", { class: "filters card", id: "filters", onsubmit: (ev) => {
      ev.preventDefault();
      for (const id of ["f-event", "f-verified", "f-status", "f-since", "f-until"]) S.filters[id] = $("#" + id).value;
      renderJudgments();
    } },
    sel("f-event", "Event", [["", "any"], ...EVENTS.map((e) => [e, e])]),
    sel("f-verified", "Verified", [["", "any"], ["true", "verified"], ["false", "not verified"]]),
    sel("f-status", "Status", [["", "any"], ["done", "done"], ["awaiting_review", "awaiting review"], ["failed", "failed"], ["running", "running"]]),
    date("f-since", "From"), date("f-until", "To"),
    h("button", { type: "submit", id: "apply-filters" }, "Apply"));
}

async function renderJudgments() {
  const f = S.filters;
  const data = await api("/v1/ui/judgments", { params: { ...userParam(), event: f["f-event"], verified: f["f-verified"],
    status: f["f-status"], since: f["f-since"], until: f["f-until"], limit: 200 } });
  const rows = data.results.map((j) => h("tr", { class: "clickable", "data-trace": j.trace_id,
      onclick: () => { location.hash = `#/judgments/${encodeURIComponent(j.trace_id)}`; } },
    selectCell(j.trace_id), h("td", {}, fmtTime(j.created_at)), h("td", {}, ownerCell(j)),
    h("td", {}, kindBadge(j.operation_type), eventBadges(j.events), eventBadges(j.consolidation),
      j.rolled_back_by ? h("span", { class: "badge rolled-back", title: `rolled back by ${j.rolled_back_by}` }, "rolled back") : null),
    h("td", { class: `st st-${j.status}` }, j.status), h("td", {}, verdictBadge(j)),
    h("td", {}, fmtMs(j.latency_ms)), h("td", { class: "muted" }, j.model_name || "–"), h("td", {}, j.input_preview)));
  show(filterForm(), h("div", { class: "card" },
    h("h2", {}, `Judgments (${data.results.length}${data.results.length === 200 ? "+" : ""})`),
    rows.length ? batchBar(renderJudgments) : null,
    rows.length ? h("table", { id: "judgment-table" },
      h("thead", {}, h("tr", {}, selectAllCell(data.results.map((j) => j.trace_id)), ...["When (UTC)", "User", "Operations", "Status", "Verified", "Latency", "Model", "Input"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)) : h("p", { class: "empty" }, "No judgment matches these filters.")));
}

function opsTable(ops, id) {
  if (!ops || !ops.length) return h("p", { class: "empty" }, "none");
  return h("table", { id }, h("thead", {}, h("tr", {}, ...["Event", "Text", "Previous", "Memory id", "Reason"].map((t) => h("th", {}, t)))),
    h("tbody", {}, ops.map((op) => h("tr", {}, h("td", {}, h("span", { class: `badge ev-${op.event}` }, op.event)),
      h("td", {}, op.text || op.memory || ""), h("td", { class: "muted" }, op.old_memory || op.previous_memory || ""),
      h("td", { class: "muted" }, op.id || ""), h("td", {}, op.reason || "")))));
}

// An executed operation keeps what was written; its reason is the decision's (same memory and event, else
// the same fact's), so the Executed table says why as the decided one does.
function withReasons(executed, decided) {
  const ops = Array.isArray(decided) ? decided : [];
  const find = (op) => ops.find((d) => d.id && d.id === op.id && d.event === op.event)
    || ops.find((d) => d.fact !== undefined && d.fact === op.fact && d.event === op.event)
    || ops.find((d) => (d.text || "") === (op.text || op.memory || "") && d.event === op.event);
  return (Array.isArray(executed) ? executed : []).map((op) => (op.reason ? op : { ...op, reason: (find(op) || {}).reason || "" }));
}

async function renderDetail(traceId, done) {
  const [j, links] = await Promise.all([api(`/v1/judgments/${encodeURIComponent(traceId)}`),
    api(`/v1/ui/judgments/${encodeURIComponent(traceId)}/rollback-links`)]);
  const kind = j.operation_type || "MEMORY_UPDATE";
  const section = (title, ...body) => h("div", { class: "card" }, h("h3", {}, title), ...body);
  const facts = (j.extracted_facts || []).map((f) => h("li", {}, typeof f === "string" ? f : f.text,
    f.owner && f.owner !== "user" ? h("span", { class: "muted" }, ` (${f.owner})`) : null,
    f.category ? h("span", { class: "muted" }, ` · ${f.category}`) : null));
  const cands = j.existing_memories || [];
  const verify = h("form", { class: "verify", id: "verify-form", onsubmit: async (ev) => {
      ev.preventDefault();
      const choice = $("input[name=verdict]:checked");
      if (!choice) return toast("Choose correct, partial or incorrect first.", true);
      try {
        await api(`/v1/judgments/${encodeURIComponent(j.trace_id)}/verify`, { method: "POST",
          body: { result: choice.value, notes: $("#verify-notes").value || null } });
        toast("Verification saved.");
        await renderDetail(j.trace_id);
      } catch (e) { toast(e.message, true); }
    } },
    ...[["CORRECT", "correct"], ["PARTIAL", "partly correct"], ["INCORRECT", "incorrect"]].map(([v, t]) =>
      h("label", {}, h("input", { type: "radio", name: "verdict", value: v, checked: j.verification_result === v }), " ", t)),
    h("textarea", { id: "verify-notes", placeholder: "Notes (what was wrong, what it should have done)" }, j.verification_notes || ""),
    h("div", { class: "actions" }, h("button", { type: "submit", id: "verify-save" }, j.is_verified ? "Update verification" : "Save verification")));
  show(
    h("p", {}, h("a", { href: "#/judgments" }, "← all judgments")),
    h("div", { class: "card" }, h("h2", {}, "Judgment ", h("span", { id: "verified-badge" }, verdictBadge(j))),
      h("dl", { class: "meta" },
        ...[["Trace id", j.trace_id], ["Kind", kind], ["Scope", ["user_id", "agent_id", "run_id", "group_id"].filter((k) => j[k]).map((k) => `${k}=${j[k]}`).join("  ")],
          ["Status", j.status], ["When (UTC)", `${fmtTime(j.created_at)} (updated ${fmtTime(j.updated_at)})`],
          ["Judge model", j.model_name || "–"], ["Judge latency", fmtMs(j.latency_ms)],
          ["Executed", j.execution_success === null ? "not yet" : j.execution_success ? "yes" : "no"],
          ["Verified", j.is_verified ? `${j.verification_result} at ${fmtTime(j.verified_at)}` : "no"]]
          .flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      j.status === "awaiting_review" ? h("p", {}, "This run waits for review: ", h("a", { href: "#/reviews" }, "open the review queue")) : null,
      j.error_message ? h("p", { class: "error" }, j.error_message) : null,
      rollbackBar(j, kind, links)),
    done ? rollbackResult(done) : null,
    kind !== "MEMORY_UPDATE" ? section("Input", h("pre", { id: "d-input" }, j.input_content || "")) : h("div", { class: "grid2" },
      section("Input", h("pre", { id: "d-input" }, j.input_content || "")),
      section("Extracted facts", facts.length ? h("ol", { id: "d-facts" }, facts) : h("p", { class: "empty" }, "none"))),
    kind !== "MEMORY_UPDATE" ? null : section("Candidate memories (what the judge compared against)", cands.length
      ? h("table", {}, h("thead", {}, h("tr", {}, ...["Ref", "Memory", "Score", "Id"].map((t) => h("th", {}, t)))),
        h("tbody", {}, cands.map((c) => h("tr", {}, h("td", {}, c.ref ?? ""), h("td", {}, c.memory || ""),
          h("td", {}, c.score === undefined ? "" : Number(c.score).toFixed(3)), h("td", { class: "muted" }, c.id || "")))))
      : h("p", { class: "empty" }, "none (every fact was new)")),
    section("Model's raw answer", h("pre", { id: "d-raw" }, j.llm_response || "(no model call: decided by rule)")),
    ...(kind === "CONSOLIDATE" ? consolidationSections(j, section) : [
      section("Operations decided, with reasons", opsTable(j.parsed_operations, "d-ops")),
      section("Executed", opsTable(withReasons(j.executed_operations, j.parsed_operations), "d-executed"))]),
    section("Reasoning and notes", h("pre", {}, j.reasoning || "")),
    section("Verify this judgment", verify));
}

// ---- rollback and consolidation (detail view) -----------------------------------------------------------

function rollbackBar(j, kind, links) {
  if (kind === "ROLLBACK") return h("p", { id: "rollback-of" }, "This is the rollback of ", traceLink(links.rollback_of || j.input_content), ".");
  if (links.rolled_back_by) return h("p", { id: "rolled-back-by" }, h("span", { class: "badge rolled-back" }, "rolled back"), " by ", traceLink(links.rolled_back_by), ".");
  if (j.status === "awaiting_review") return null;  // nothing executed yet: approve or reject it instead
  return h("div", { class: "actions" }, h("button", { type: "button", class: "danger", id: "rollback-btn", onclick: () => confirmRollback(j) }, "Roll back this run"));
}

// A modal <dialog> (not window.confirm): it can list the later runs a conflict names and offer to take them too.
function confirmRollback(j) {
  const dlg = h("dialog", { id: "rollback-dialog" });
  const close = () => { dlg.close(); dlg.remove(); };
  const post = async (force, buttons) => {
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const out = await api(`/v1/judgments/${encodeURIComponent(j.trace_id)}/rollback`, { method: "POST", params: { force: force ? "true" : "" } });
      close();
      toast(`Rolled back: trace ${out.trace_id}.`);
      await renderDetail(j.trace_id, out);
    } catch (e) {
      if (e.status === 409 && !force) return conflict(e.data.error || {});
      close();
      toast(e.message, true);
    }
  };
  const ask = () => {
    const go = h("button", { type: "button", class: "danger", id: "rollback-confirm" }, "Roll back");
    const cancel = h("button", { type: "button", class: "secondary", id: "rollback-cancel", onclick: close }, "Cancel");
    go.addEventListener("click", () => post(false, [go, cancel]));
    dlg.replaceChildren(h("h2", {}, "Roll back this run?"),
      h("p", {}, "Every memory this run changed returns to its state before it: updated texts get their old text back, "
        + "deleted memories come back, added ones are removed; its relations are invalidated or made valid again."),
      h("p", { class: "muted" }, "The rollback is recorded as a new run (its own trace id, ROLLBACK history) and can be reviewed like any other."),
      h("div", { class: "actions" }, go, cancel));
  };
  const conflict = async (err) => {
    const later = err.later_traces || [];
    const items = await Promise.all(later.map(async (t) => {
      let what = h("span", { class: "muted" }, " a direct change (update, delete or import): no judgment record");
      try {
        const r = await api(`/v1/judgments/${encodeURIComponent(t)}`);
        what = h("span", {}, ` ${fmtTime(r.created_at)} · ${(r.input_content || "").slice(0, 120)}`);
      } catch (e) { /* no judgment for this trace: keep the generic words */ }
      return h("li", { "data-trace": t }, h("code", {}, t), what);
    }));
    const force = h("button", { type: "button", class: "danger", id: "rollback-force" }, `Roll back ${later.length > 1 ? "those" : "that one"} too`);
    const cancel = h("button", { type: "button", class: "secondary", id: "rollback-cancel", onclick: close }, "Cancel");
    force.addEventListener("click", () => post(true, [force, cancel]));
    dlg.replaceChildren(h("h2", {}, "Later runs changed the same memories"),
      h("p", {}, err.message || ""),
      h("ol", { id: "rollback-later" }, items),
      h("p", { class: "muted" }, "Rolling back those too undoes them first, newest first, each as its own rollback run; then this one."),
      h("div", { class: "actions" }, force, cancel));
  };
  ask();
  document.body.append(dlg);
  dlg.showModal();
}

function rollbackResult(out) {
  const rel = out.relations || {};
  return h("div", { class: "card result", id: "rollback-result" },
    h("h3", {}, "Rolled back"),
    h("dl", { class: "meta" },
      h("dt", {}, "Rollback trace"), h("dd", {}, traceLink(out.trace_id)),
      ...(out.also_rolled_back || []).flatMap((x) => [h("dt", {}, "Also rolled back"),
        h("dd", {}, h("code", {}, x.trace_id), " by ", traceLink(x.rollback_trace_id))]),
      h("dt", {}, "Relations"), h("dd", {}, `${(rel.deleted_entities || []).length} invalidated, ${(rel.added_entities || []).length} valid again or re-extracted`)),
    h("h3", {}, "Memories restored"),
    opsTable(out.results, "rollback-ops"),
    (out.not_undone || []).length ? h("div", {}, h("h3", {}, "Not undone"), h("ul", {},
      out.not_undone.map((p) => h("li", {}, `${p.event} ${p.memory_id}: ${p.reason}`)))) : null);
}

function consolidationSections(j, section) {
  const ops = j.parsed_operations || {};
  const ex = j.executed_operations || {};
  const table = (id, cols, rows) => (rows.length
    ? h("table", { id }, h("thead", {}, h("tr", {}, ...cols.map((t) => h("th", {}, t)))), h("tbody", {}, rows))
    : h("p", { class: "empty" }, "none"));
  const merges = (ops.merges || []).map((m) => h("tr", {}, h("td", {}, (m.texts || {}).survivor || m.survivor),
    h("td", { class: "muted" }, (m.texts || {}).merged || m.merged), h("td", {}, m.similarity ?? ""), h("td", {}, m.by || ""), h("td", {}, m.reason || "")));
  const summaries = (ops.summaries || []).map((x) => h("tr", {}, h("td", {}, x.text || ""),
    h("td", {}, h("ul", {}, (x.source_texts || x.sources || []).map((t) => h("li", { class: "muted" }, t)))), h("td", {}, x.level || ""), h("td", {}, x.reason || "")));
  const archives = (ops.archives || []).map((a) => h("tr", {}, h("td", {}, a.text || a.id),
    h("td", {}, a.retention ?? ""), h("td", {}, a.idle_days ?? ""), h("td", {}, a.reason || "")));
  const count = (v) => (Array.isArray(v) ? v.length : Number(v) || 0);
  const names = (n) => (n && typeof n === "object" ? Object.values(n).join(" / ") : n || "");
  const entityMerges = (ops.entity_merges || []).map((m) => h("tr", {}, h("td", {}, (m.names || {}).survivor || m.survivor),
    h("td", { class: "muted" }, (m.names || {}).merged || m.merged), h("td", {}, m.similarity ?? ""), h("td", {}, m.reason || "")));
  const kept = (ops.entity_decisions || []).filter((d) => !d.merge).map((d) => h("tr", {}, h("td", {}, names(d.names)),
    h("td", {}, d.similarity ?? ""), h("td", {}, d.reason || "")));
  const links = (ops.links || []).map((l) => h("tr", {}, h("td", { class: "muted" }, l.source_id || ""), h("td", {}, l.relation || ""),
    h("td", { class: "muted" }, l.target_id || ""), h("td", {}, l.reason || "")));
  const contradictions = (ops.contradictions || []).map((c) => h("tr", {}, h("td", {}, (c.texts || [])[0] || c.winner),
    h("td", { class: "muted" }, (c.texts || [])[1] || c.loser), h("td", {}, `${c.subject || ""} · ${c.relation || ""}`),
    h("td", {}, (c.values || []).join(" ≠ ")), h("td", {}, c.reason || "")));
  const promotions = (ops.promotions || []).map((x) => h("tr", {}, h("td", { class: "muted" }, x.id || ""), h("td", {}, x.layer || ""), h("td", {}, x.reason || "")));
  const optional = (rows, ...args) => (rows.length ? section(...args) : null);  // graph upkeep and layers: shown when they acted
  return [
    section(`Merges (${merges.length}): the second memory folds into the first`, table("d-merges", ["Kept", "Merged into it", "Similarity", "By", "Reason"], merges)),
    optional(contradictions, `Contradictions (${contradictions.length}): the kept statement supersedes the other`, table("d-contradictions", ["Kept", "Superseded", "Subject · relation", "Values", "Reason"], contradictions)),
    section(`Summaries (${summaries.length}): sources replaced by one memory`, table("d-summaries", ["Summary", "Sources", "Level", "Reason"], summaries)),
    section(`Archives (${archives.length}): faded by the forgetting curve, or superseded`, table("d-archives", ["Memory", "Retention", "Idle days", "Reason"], archives)),
    optional(entityMerges, `Entity merges (${entityMerges.length})`, table("d-entity-merges", ["Kept", "Merged into it", "Similarity", "Reason"], entityMerges)),
    optional(kept, `Entity pairs kept apart (${kept.length})`, table("d-entity-kept", ["Names", "Similarity", "Reason"], kept)),
    optional(links, `Memory links found (${links.length})`, table("d-links", ["From", "Link", "To", "Reason"], links)),
    optional(promotions, `Layer changes (${promotions.length})`, table("d-promotions", ["Memory", "Layer", "Reason"], promotions)),
    section("Executed", h("dl", { class: "meta", id: "d-executed" },
      h("dt", {}, "Memories changed"), h("dd", {}, String(ex.changed ?? 0)),
      h("dt", {}, "Summaries written"), h("dd", {}, (ex.summary_ids || []).join(", ") || "none"),
      h("dt", {}, "Relations re-pointed"), h("dd", {}, String(count(ex.relations) + count(ex.relations_repointed))),
      h("dt", {}, "Entities merged"), h("dd", {}, String(count(ex.entities_merged))),
      h("dt", {}, "Links written"), h("dd", {}, String(count(ex.links))),
      h("dt", {}, "Skipped (changed meanwhile)"), h("dd", {}, (ex.skipped || []).join(", ") || "none")))].filter(Boolean);
}

// ---- review queue ---------------------------------------------------------------------------------------

async function refreshReviewCount() {
  try {
    const n = (await api("/v1/ui/reviews", { params: userParam() })).results.length;
    $("#review-count").textContent = n ? String(n) : "";
  } catch (e) { /* the count is a hint; the queue itself reports errors */ }
}

function reviewCard(r) {
  const rows = r.pending_operations.map((op) => {
    const text = h("input", { type: "text", value: op.text || "", class: "op-text", size: 60 });
    const event = h("select", { class: "op-event" }, ...EVENTS.map((e) => h("option", { value: e, selected: e === op.event }, e)));
    const keep = h("input", { type: "checkbox", class: "op-keep", checked: true, title: "keep this operation" });
    return { op, el: h("div", { class: "op" }, keep, event, h("div", {}, text,
      op.old_memory ? h("div", { class: "muted" }, `was: ${op.old_memory}`) : null, h("div", { class: "muted" }, op.reason || ""))), text, event, keep };
  });
  const send = async (body, what) => {
    try {
      const out = await api(`/v1/reviews/${encodeURIComponent(r.trace_id)}`, { method: "POST", body });
      const n = (out.results || []).length;
      toast(`${what}: ${n} memor${n === 1 ? "y" : "ies"} changed.`);
      await renderReviews();
      refreshReviewCount();
    } catch (e) { toast(e.message, true); }
  };
  const edited = () => rows.filter((x) => x.keep.checked).map((x) => ({ ...x.op, event: x.event.value, text: x.text.value }));
  return h("div", { class: "card review-card", "data-trace": r.trace_id },
    h("h3", {}, `${r.user_id || r.agent_id} · ${fmtTime(r.created_at)} `, h("a", { href: `#/judgments/${encodeURIComponent(r.trace_id)}`, class: "muted" }, r.trace_id)),
    h("pre", {}, r.input_content || ""),
    h("h3", {}, "Proposed operations"), ...rows.map((x) => x.el),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "approve", onclick: () => send({}, "Approved") }, "Approve"),
      h("button", { type: "button", class: "secondary approve-edited", onclick: () => send({ operations: edited() }, "Approved with edits") }, "Approve as edited"),
      h("button", { type: "button", class: "danger reject", onclick: () => send({ operations: [] }, "Rejected") }, "Reject all")));
}

async function renderReviews() {
  const data = await api("/v1/ui/reviews", { params: userParam() });
  show(h("div", { class: "card" }, h("h2", {}, `Review queue (${data.results.length})`),
    h("p", { class: "muted" }, "Add runs stopped at the review interrupt. Nothing is written until you approve: as proposed, "
      + "as edited (unticked operations are dropped), or reject them all.")),
  h("div", { id: "review-list" }, data.results.length ? data.results.map(reviewCard) : h("p", { class: "empty card", id: "review-empty" }, "No run is waiting for review.")));
}

// ---- stats ----------------------------------------------------------------------------------------------

async function renderStats() {
  if (!S.me.admin && !S.user) return show(needUser("stats"));
  const [st, tl] = await Promise.all([api("/v1/judgments/stats", { params: userParam() }), api("/v1/ui/timeline", { params: userParam() })]);
  const C = window.MXCharts;
  const kpi = (v, label, id) => h("div", { class: "kpi", id }, h("b", {}, v), h("span", {}, label));
  const lat = st.latency_ms || {};
  show(h("div", { class: "grid4" }, kpi(String(st.total), "judgments", "k-total"), kpi(`${st.verified}`, "verified by a human", "k-verified"),
      kpi(pct(st.accuracy), "accuracy (correct / verified)", "k-accuracy"), kpi(pct(st.success_rate), "executed successfully", "k-success")),
    h("div", { class: "grid2" },
      h("div", { class: "card" }, h("h3", {}, "Verified judgments"),
        C.barChart([["CORRECT", "#2e9d5b"], ["PARTIAL", "#d08a1c"], ["INCORRECT", "#c8423b"]].map(([k, color]) => ({ label: k, value: st.by_result[k] || 0, color })), { id: "chart-verdicts" })),
      h("div", { class: "card" }, h("h3", {}, "Judge latency percentiles"),
        C.barChart(["p50", "p90", "p99", "mean"].map((k) => ({ label: k, value: lat[k] === null || lat[k] === undefined ? null : Math.round(lat[k]), color: "#2f5bd3" })), { id: "chart-latency", unit: " ms" }))),
    h("div", { class: "card" }, h("h3", {}, "Operations decided per day (UTC)"),
      h("div", { class: "legend" }, EVENTS.map((e) => h("span", {}, h("i", { style: `background:${EVENT_COLORS[e]}` }), e))),
      tl.days.length ? C.stackedBars(tl.days, EVENTS.map((e) => ({ key: e, color: EVENT_COLORS[e] })), { id: "chart-events" }) : h("p", { class: "empty" }, "no judgments yet")),
    h("div", { class: "card" }, h("h3", {}, "Latency of each judgment over time"),
      tl.latency.length ? C.scatterChart(tl.latency.map((p) => ({ t: Date.parse(p.created_at), v: p.latency_ms })),
        { id: "chart-latency-time", unit: " ms", refs: [{ v: lat.p50, label: "p50" }, { v: lat.p99, label: "p99" }] }) : h("p", { class: "empty" }, "no latencies yet")));
}

// ---- memories and graph ---------------------------------------------------------------------------------

// Why a memory is remembered (GET /v1/memories/{id}/explain): importance and its four factors, confidence,
// layer, retention, and the judge's reason of each run that touched it.
function explainSection(x) {
  const num = (v) => (v === null || v === undefined ? "–" : Number(v).toFixed(3));
  const f = x.importance.factors || {};
  const factors = x.importance.weights
    ? h("table", { class: "factors" }, h("tbody", {}, Object.entries(x.importance.weights).map(([k, w]) =>
        h("tr", { "data-factor": k }, h("td", {}, k), h("td", {}, num(f[k])), h("td", { class: "muted" }, `× ${w}`)))))
    : h("p", { class: "muted" }, "importance as written (no factors)");
  return h("div", { id: "explain" }, h("h4", {}, "Why remembered"),
    h("p", {}, `importance ${num(x.importance.score)} · confidence ${num(x.confidence)} · layer ${x.layer} · `
      + `retention ${x.retention} (strength ${x.strength_days} days)`), factors,
    h("ul", { class: "reasons" }, x.judgments.map((j) => h("li", {}, h("strong", { class: "why-event" }, j.event || "–"), " ",
      j.reason || "", " ", h("a", { href: `#/judgments/${encodeURIComponent(j.trace_id)}` }, j.trace_id),
      ...(j.source_messages || []).map((msg) => h("div", { class: "muted" }, `${msg.name || msg.role || ""}: ${msg.content}`))))),
    x.links.length ? h("ul", { class: "links" }, x.links.map((l) => h("li", {}, `${l.relation} ${l.direction === "out" ? "→" : "←"} ${l.other_memory || l.other_id}`))) : null);
}

async function renderMemories() {
  if (!S.user) return show(needUser("memories"));
  const data = await api("/v1/memories", { params: { user_id: S.user, limit: 1000 } });
  const pane = h("div", { class: "card", id: "history" }, h("h3", {}, "History"), h("p", { class: "empty" }, "Click a memory to see its history."));
  const open = async (m, tr) => {
    document.querySelectorAll("#memory-table tr.selected").forEach((x) => x.classList.remove("selected"));
    tr.classList.add("selected");
    const [events, why] = await Promise.all([api(`/v1/memories/${encodeURIComponent(m.id)}/history`),
      api(`/v1/memories/${encodeURIComponent(m.id)}/explain`)]);
    pane.replaceChildren(h("h3", {}, "History of ", h("q", {}, m.memory)), explainSection(why), h("ol", { class: "history" }, events.map((e) => h("li", {},
      h("span", { class: `badge ev-${e.event}` }, e.event), " ", fmtTime(e.created_at), " ", h("span", { class: "muted" }, e.actor || ""),
      e.old_memory ? h("div", { class: "muted" }, `before: ${e.old_memory}`) : null, e.new_memory ? h("div", {}, `after: ${e.new_memory}`) : null,
      e.trace_id ? h("div", {}, h("a", { href: `#/judgments/${encodeURIComponent(e.trace_id)}` }, `judgment ${e.trace_id}`)) : null))));
  };
  const rows = data.results.map((m) => {
    const tr = h("tr", { class: "clickable", "data-id": m.id }, h("td", {}, m.memory), h("td", { class: "muted" }, m.category || ""),
      h("td", { class: "muted" }, m.agent_id || ""), h("td", {}, fmtTime(m.updated_at)));
    tr.addEventListener("click", () => open(m, tr).catch((e) => toast(e.message, true)));
    return tr;
  });
  show(h("div", { class: "split" }, h("div", { class: "card" }, h("h2", {}, `Memories of ${S.user} (${data.results.length})`),
    rows.length ? h("table", { id: "memory-table" }, h("thead", {}, h("tr", {}, ...["Memory", "Category", "Agent", "Updated (UTC)"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)) : h("p", { class: "empty" }, "No memories.")), pane));
}

async function renderGraph() {
  if (!S.user) return show(needUser("the entity graph"));
  const withOld = !!S.filters.graphInvalid;
  const g = await api("/v1/ui/graph", { params: { user_id: S.user, include_invalid: withOld } });
  const toggle = h("label", {}, h("input", { type: "checkbox", id: "g-invalid", checked: withOld,
    onchange: (ev) => { S.filters.graphInvalid = ev.target.checked; renderGraph(); } }), " show invalidated relations (dashed)");
  show(h("div", { class: "card" }, h("h2", {}, `Entities and relations of ${S.user} (${g.entities.length} entities, ${g.relations.length} relations)`), toggle,
      g.entities.length ? window.MXCharts.graphSvg(g.entities, g.relations) : h("p", { class: "empty" }, "No entities yet (the graph may be disabled: MEMORYX_GRAPH_BACKEND).")),
    h("div", { class: "card" }, h("h3", {}, "Relations"), g.relations.length ? h("table", { id: "relation-table" },
      h("thead", {}, h("tr", {}, ...["Source", "Relation", "Target", "Valid", "Since (UTC)"].map((t) => h("th", {}, t)))),
      h("tbody", {}, g.relations.map((r) => h("tr", {}, h("td", {}, r.source), h("td", {}, r.relation), h("td", {}, r.target),
        h("td", {}, r.valid ? "yes" : `no (${fmtTime(r.invalidated_at)})`), h("td", {}, fmtTime(r.created_at)))))) : h("p", { class: "empty" }, "none")));
}

// ---- routing --------------------------------------------------------------------------------------------

function show(...nodes) { $("#view").replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false)); }

// One view at a time: each route() waits for the one before it. Two in flight (pick a user on one tab, then
// click another tab at once) each awaited their own request, and the slower one drew its view over the newer
// one's: the memory tab could show the judgment it was switched away from.
let routing = Promise.resolve();
function route() {
  routing = routing.then(drawRoute, drawRoute);
  return routing;
}

async function drawRoute() {
  if (!S.me) return;
  const [, tab = "judgments", arg] = location.hash.split("/");
  document.querySelectorAll("#tabs a").forEach((a) => a.classList.toggle("active", a.dataset.tab === tab));
  const views = { judgments: () => (arg ? renderDetail(decodeURIComponent(arg)) : renderJudgments()), reviews: renderReviews,
    stats: renderStats, memories: renderMemories, graph: renderGraph, findings: renderFindings, report: renderReport };
  try {
    await (views[tab] || renderJudgments)();
  } catch (e) {
    if (S.me) show(h("div", { class: "card" }, h("p", { class: "error" }, e.message)));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("#sign-in-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("#api-key").value.trim()); });
  $("#sign-out").addEventListener("click", () => signOut());
  $("#user-pick").addEventListener("change", (ev) => {
    let v = ev.target.value;
    if (v === "__other") {
      v = (prompt("User id") || "").trim();
      if (v && !S.users.includes(v)) S.users.push(v);
      renderWho();
    }
    S.user = v;
    $("#user-pick").value = v;
    refreshReviewCount();
    route();
  });
  window.addEventListener("hashchange", route);
  const saved = sessionStorage.getItem(KEY_STORE);
  if (saved) signIn(saved);
});
