// Small inline-SVG charts and the entity graph layout for the review page. No library: the page ships
// with the package and loads nothing from the internet. Every label goes in through textContent.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, text) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "style") el.style.cssText = v;  // through the CSSOM: the page's CSP allows no inline style attribute
    else el.setAttribute(k, v);
  }
  if (text !== undefined) el.textContent = text;
  return el;
}

function svgRoot(width, height, id) {
  // drawn at its own size at most: a small chart stretched to a wide card would blow its text up
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img", style: `max-width:${width}px` });
  if (id) svg.id = id;
  return svg;
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function yAxis(svg, x0, y0, y1, max, width, fmt) {
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = y0 - ((y0 - y1) * i) / 4;
    svg.appendChild(svgEl("line", { x1: x0, x2: width - 8, y1: y, y2: y, stroke: "#eceef2" }));
    svg.appendChild(svgEl("text", { x: x0 - 6, y: y + 4, "text-anchor": "end" }, fmt ? fmt(v) : String(+v.toFixed(2))));
  }
}

// Vertical bars: items [{label, value, color}].
function barChart(items, { id, height = 240, fmt, unit = "" } = {}) {
  const width = Math.max(440, 100 * items.length + 60);
  const svg = svgRoot(width, height, id);
  const x0 = 48, y0 = height - 28, y1 = 14;
  const max = niceMax(Math.max(0, ...items.map((d) => d.value || 0)));
  yAxis(svg, x0, y0, y1, max, width, fmt);
  const slot = (width - x0 - 8) / Math.max(1, items.length);
  items.forEach((d, i) => {
    const h = ((d.value || 0) / max) * (y0 - y1);
    const x = x0 + i * slot + slot * 0.2;
    const bar = svgEl("rect", { x, y: y0 - h, width: slot * 0.6, height: Math.max(0, h), fill: d.color || "#2f5bd3", rx: 2 });
    bar.appendChild(svgEl("title", {}, `${d.label}: ${d.value ?? "–"}${unit}`));
    svg.appendChild(bar);
    svg.appendChild(svgEl("text", { x: x + slot * 0.3, y: y0 + 16, "text-anchor": "middle" }, d.label));
    if (d.value !== null && d.value !== undefined)
      svg.appendChild(svgEl("text", { x: x + slot * 0.3, y: y0 - h - 4, "text-anchor": "middle" }, (fmt ? fmt(d.value) : String(d.value)) + unit));
  });
  return svg;
}

// Stacked bars per day: rows [{date, ADD, UPDATE, ...}], series [{key, color}].
function stackedBars(rows, series, { id, height = 260 } = {}) {
  const width = Math.max(480, Math.min(1180, 40 * rows.length + 70));
  const svg = svgRoot(width, height, id);
  const x0 = 48, y0 = height - 40, y1 = 14;
  const totals = rows.map((r) => series.reduce((s, k) => s + (r[k.key] || 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  yAxis(svg, x0, y0, y1, max, width, (v) => String(Math.round(v * 10) / 10));
  const slot = Math.min(60, (width - x0 - 8) / Math.max(1, rows.length));
  rows.forEach((r, i) => {
    let y = y0;
    const x = x0 + i * slot + slot * 0.15;
    for (const s of series) {
      const h = ((r[s.key] || 0) / max) * (y0 - y1);
      if (h <= 0) continue;
      y -= h;
      const rect = svgEl("rect", { x, y, width: slot * 0.7, height: h, fill: s.color, "data-series": s.key });
      rect.appendChild(svgEl("title", {}, `${r.date} ${s.key}: ${r[s.key]}`));
      svg.appendChild(rect);
    }
    if (rows.length <= 16 || i % Math.ceil(rows.length / 16) === 0)
      svg.appendChild(svgEl("text", { x: x + slot * 0.35, y: y0 + 14, "text-anchor": "middle" }, r.date.slice(5)));
  });
  return svg;
}

// Points over time: [{t (ms), v}], one dot each plus optional horizontal reference lines [{v, label}].
function scatterChart(points, { id, height = 220, refs = [], unit = "" } = {}) {
  const width = 1180;
  const svg = svgRoot(width, height, id);
  const x0 = 64, y0 = height - 28, y1 = 14;
  const max = niceMax(Math.max(0, ...points.map((p) => p.v), ...refs.map((r) => r.v || 0)));
  yAxis(svg, x0, y0, y1, max, width, (v) => +v.toFixed(max < 10 ? 2 : 0) + unit);
  const ts = points.map((p) => p.t);
  const tmin = Math.min(...ts), tmax = Math.max(...ts);
  const span = tmax - tmin || 1;
  for (const p of points) {
    const x = points.length === 1 ? (x0 + width) / 2 : x0 + 6 + ((p.t - tmin) / span) * (width - x0 - 20);
    const dot = svgEl("circle", { cx: x, cy: y0 - (p.v / max) * (y0 - y1), r: 3.5, fill: "#2f5bd3", "fill-opacity": 0.65 });
    dot.appendChild(svgEl("title", {}, `${new Date(p.t).toISOString()}: ${p.v}${unit}`));
    svg.appendChild(dot);
  }
  for (const r of refs) {
    if (r.v === null || r.v === undefined) continue;
    const y = y0 - (r.v / max) * (y0 - y1);
    svg.appendChild(svgEl("line", { x1: x0, x2: width - 8, y1: y, y2: y, stroke: "#c8423b", "stroke-dasharray": "4 3" }));
    svg.appendChild(svgEl("text", { x: width - 10, y: y - 3, "text-anchor": "end", fill: "#c8423b" }, r.label));
  }
  return svg;
}

// Lines per day: rows [{day, ...}], series [{key, color, label}] read with get(row, key); a gap where a value is
// null (a day nobody verified has no accuracy). Optional fixed max (1 for a ratio) and threshold refs [{v, label}].
function lineChart(rows, series, { id, height = 220, max, fmt, get = (r, k) => r[k], refs = [] } = {}) {
  const width = Math.max(480, Math.min(1180, 36 * rows.length + 90));
  const svg = svgRoot(width, height, id);
  const x0 = 64, y0 = height - 34, y1 = 14;
  const values = rows.flatMap((r) => series.map((s) => get(r, s.key))).filter((v) => v !== null && v !== undefined);
  const top = max || niceMax(Math.max(0, ...values, ...refs.map((r) => r.v || 0)));
  yAxis(svg, x0, y0, y1, top, width, fmt);
  const step = rows.length > 1 ? (width - x0 - 24) / (rows.length - 1) : 0;
  const xAt = (i) => (rows.length > 1 ? x0 + 8 + i * step : (x0 + width) / 2);
  const yAt = (v) => y0 - (v / top) * (y0 - y1);
  for (const s of series) {
    let d = "", pen = false;
    const dots = [];
    rows.forEach((r, i) => {
      const v = get(r, s.key);
      if (v === null || v === undefined) { pen = false; return; }
      d += `${pen ? "L" : "M"}${xAt(i).toFixed(1)},${yAt(v).toFixed(1)} `;
      pen = true;
      const dot = svgEl("circle", { cx: xAt(i), cy: yAt(v), r: 3, fill: s.color, "data-series": s.key, "data-day": r.day });
      dot.appendChild(svgEl("title", {}, `${r.day} ${s.label || s.key}: ${fmt ? fmt(v) : v}`));
      dots.push(dot);
    });
    if (d) svg.appendChild(svgEl("path", { d: d.trim(), fill: "none", stroke: s.color, "stroke-width": 2 }));
    dots.forEach((dot) => svg.appendChild(dot));
  }
  for (const r of refs) {
    svg.appendChild(svgEl("line", { x1: x0, x2: width - 8, y1: yAt(r.v), y2: yAt(r.v), stroke: "#c8423b", "stroke-dasharray": "4 3" }));
    svg.appendChild(svgEl("text", { x: width - 10, y: yAt(r.v) - 3, "text-anchor": "end", fill: "#c8423b" }, r.label));
  }
  rows.forEach((r, i) => {
    if (rows.length <= 16 || i % Math.ceil(rows.length / 16) === 0)
      svg.appendChild(svgEl("text", { x: xAt(i), y: y0 + 16, "text-anchor": "middle" }, r.day.slice(5)));
  });
  return svg;
}

// Entities and relations: nodes on a circle, then a few hundred deterministic force steps (repulsion,
// springs on edges, a pull to the centre). Small graphs (a user's) settle well within a frame.
function layoutGraph(nodes, edges, width, height) {
  const n = nodes.length, cx = width / 2, cy = height / 2;
  const pos = nodes.map((_, i) => ({
    x: cx + Math.cos((2 * Math.PI * i) / Math.max(1, n)) * Math.min(width, height) * 0.35,
    y: cy + Math.sin((2 * Math.PI * i) / Math.max(1, n)) * Math.min(width, height) * 0.35,
  }));
  const index = new Map(nodes.map((d, i) => [d.id, i]));
  const links = edges.map((e) => [index.get(e.source_id), index.get(e.target_id)]).filter(([a, b]) => a !== undefined && b !== undefined);
  const k = Math.sqrt((width * height) / Math.max(1, n)) * 0.6;
  for (let step = 0; step < 300 && n > 1; step++) {
    const t = 1 - step / 300;
    const disp = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++)
      for (let j = i + 1; j < n; j++) {
        let dx = pos[i].x - pos[j].x, dy = pos[i].y - pos[j].y;
        const d = Math.max(1, Math.hypot(dx, dy)), f = (k * k) / d;
        dx /= d; dy /= d;
        disp[i].x += dx * f; disp[i].y += dy * f; disp[j].x -= dx * f; disp[j].y -= dy * f;
      }
    for (const [a, b] of links) {
      if (a === b) continue;
      let dx = pos[a].x - pos[b].x, dy = pos[a].y - pos[b].y;
      const d = Math.max(1, Math.hypot(dx, dy)), f = (d * d) / k;
      dx /= d; dy /= d;
      disp[a].x -= dx * f; disp[a].y -= dy * f; disp[b].x += dx * f; disp[b].y += dy * f;
    }
    for (let i = 0; i < n; i++) {
      disp[i].x += (cx - pos[i].x) * 0.05; disp[i].y += (cy - pos[i].y) * 0.05;
      const d = Math.max(1, Math.hypot(disp[i].x, disp[i].y)), lim = 12 * t + 0.5;
      pos[i].x = Math.min(width - 60, Math.max(60, pos[i].x + (disp[i].x / d) * Math.min(d, lim)));
      pos[i].y = Math.min(height - 24, Math.max(24, pos[i].y + (disp[i].y / d) * Math.min(d, lim)));
    }
  }
  return pos;
}

function graphSvg(entities, relations, { width = 900, height = 560 } = {}) {
  const svg = svgRoot(width, height, "graph-svg");
  const defs = svgEl("defs");
  const marker = svgEl("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 19, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.appendChild(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#98a2b3" }));
  defs.appendChild(marker);
  svg.appendChild(defs);
  const pos = layoutGraph(entities, relations, width, height);
  const at = new Map(entities.map((e, i) => [e.id, pos[i]]));
  for (const r of relations) {
    const a = at.get(r.source_id), b = at.get(r.target_id);
    if (!a || !b) continue;
    const line = svgEl("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: r.valid ? "#98a2b3" : "#d0d5dd",
      "stroke-width": 1.4, "marker-end": "url(#arrow)", class: "edge" });
    if (!r.valid) line.setAttribute("stroke-dasharray", "5 4");
    line.appendChild(svgEl("title", {}, `${r.source} —${r.relation}→ ${r.target}${r.valid ? "" : " (invalidated)"}`));
    svg.appendChild(line);
    svg.appendChild(svgEl("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, "text-anchor": "middle", class: "edge-label" }, r.relation));
  }
  const palette = ["#2f5bd3", "#2e9d5b", "#d08a1c", "#8e44ad", "#c8423b", "#1f8a9e"];
  const types = [...new Set(entities.map((e) => e.entity_type))];
  entities.forEach((e, i) => {
    const g = svgEl("g", { class: "node", "data-name": e.name });
    g.appendChild(svgEl("circle", { cx: pos[i].x, cy: pos[i].y, r: 9, fill: palette[types.indexOf(e.entity_type) % palette.length] }));
    g.appendChild(svgEl("title", {}, `${e.name} (${e.entity_type})`));
    g.appendChild(svgEl("text", { x: pos[i].x, y: pos[i].y - 13, "text-anchor": "middle" }, e.name));
    svg.appendChild(g);
  });
  return svg;
}

window.MXCharts = { barChart, stackedBars, scatterChart, lineChart, graphSvg };
