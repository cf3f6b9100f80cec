// chart.js — small SVG charts drawn in the browser: grouped bars over labels, and a
// stepped line over time with shaded stretches. No library; styles live in style.css.

const NS = "http://www.w3.org/2000/svg";
const W = 900, H = 270, PAD = { left: 64, right: 12, top: 24, bottom: 36 };

function el(name, attrs, parent, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

/** Round numbers between lo and hi for the y axis: about n of them, 0 included. */
function ticks(lo, hi, n = 5) {
  lo = Math.min(lo, 0); hi = Math.max(hi, 0);
  if (hi === lo) hi = lo + 1;
  const raw = (hi - lo) / n, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step / 2; v += step) out.push(+v.toFixed(10));
  return out;
}

function frame(cls, yTicks, unit) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: `chart ${cls}`, role: "img" });
  const lo = yTicks[0], hi = yTicks[yTicks.length - 1];
  const y = (v) => PAD.top + (H - PAD.top - PAD.bottom) * (hi - v) / (hi - lo);
  for (const t of yTicks) {
    el("line", { x1: PAD.left, x2: W - PAD.right, y1: y(t), y2: y(t), class: t === 0 ? "axis" : "grid" }, svg);
    el("text", { x: PAD.left - 6, y: y(t) + 4, class: "ylabel" }, svg, t.toLocaleString());
  }
  el("text", { x: 4, y: 12, class: "unit" }, svg, unit);
  return { svg, y };
}

/** Labels shown under the x axis: at most about 12, evenly spread. */
function xLabels(svg, labels, xOf) {
  const every = Math.max(1, Math.ceil(labels.length / 12));
  labels.forEach((l, i) => {
    if (i % every === 0) el("text", { x: xOf(i), y: H - PAD.bottom + 16, class: "xlabel" }, svg, l);
  });
}

/**
 * Grouped bars: one group per label, one bar per series ({name, cls, values}).
 * Returns the SVG element; each bar carries data-label and data-value.
 */
export function barChart({ labels, series, unit }) {
  const all = series.flatMap((s) => s.values);
  const { svg, y } = frame("bars", ticks(Math.min(0, ...all), Math.max(0, ...all)), unit);
  const slot = (W - PAD.left - PAD.right) / Math.max(1, labels.length);
  const bw = Math.max(1, (slot * 0.8) / series.length);
  labels.forEach((label, i) => {
    series.forEach((s, j) => {
      const v = s.values[i] || 0;
      const bar = el("rect", { x: PAD.left + i * slot + slot * 0.1 + j * bw, y: Math.min(y(v), y(0)),
        width: bw, height: Math.abs(y(v) - y(0)), class: `bar ${s.cls}`, "data-label": label, "data-value": v }, svg);
      el("title", {}, bar, `${label} ${s.name}: ${v}`);
    });
  });
  xLabels(svg, labels, (i) => PAD.left + i * slot + slot / 2);
  series.forEach((s, j) => { // the legend, top right
    const x = W - PAD.right - 150 * (series.length - j);
    el("rect", { x, y: 3, width: 10, height: 10, class: `bar ${s.cls}` }, svg);
    el("text", { x: x + 14, y: 12, class: "legend" }, svg, s.name);
  });
  return svg;
}

/**
 * A stepped line over [start, end): periods [{from, to, value}] (Dates), with shades
 * [{from, to, cls, title, start, end}] drawn behind it as full-height bands carrying
 * data-start and data-end (the API's own timestamps). fmt formats a Date for the x axis.
 */
export function stepChart({ start, end, periods, shades, unit, fmt }) {
  const values = periods.map((p) => p.value);
  const { svg, y } = frame("steps", ticks(Math.min(0, ...values), Math.max(0, ...values)), unit);
  const t0 = start.getTime(), span = end.getTime() - t0;
  const x = (d) => PAD.left + (W - PAD.left - PAD.right) * Math.min(1, Math.max(0, (d.getTime() - t0) / span));
  for (const s of shades) {
    const band = el("rect", { x: x(s.from), y: PAD.top, width: Math.max(0.5, x(s.to) - x(s.from)),
      height: H - PAD.top - PAD.bottom, class: `slot ${s.cls}`, "data-start": s.start, "data-end": s.end }, svg);
    el("title", {}, band, s.title);
  }
  const d = periods.map((p, i) => `${i ? "L" : "M"}${x(p.from).toFixed(1)},${y(p.value).toFixed(1)}H${x(p.to).toFixed(1)}`);
  if (d.length) el("path", { d: d.join(""), class: "line" }, svg);
  const n = 8, labels = [];
  for (let i = 0; i <= n; i++) labels.push(fmt(new Date(t0 + (span * i) / n)));
  xLabels(svg, labels, (i) => x(new Date(t0 + (span * i) / n)));
  return svg;
}
