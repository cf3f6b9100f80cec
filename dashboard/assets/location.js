// location.js — one location's page: its tariffs, daily cost (import vs export), the
// price timeline with HIGH and LOW slots shaded, and its priced meter readings.

import * as api from "./api.js";
import { barChart, stepChart } from "./chart.js";
import { h, section, table, micro, money, kwh, placeName, localTime, localDay } from "./ui.js";

/** The share of the window's time shaded as HIGH and as LOW (GET /slots/threshold's relative). */
export const SLOT_SHARE = 0.25;

const settle = (p) => p.catch((e) => e);

function tariffList(tariffs) {
  if (tariffs.length === 0) return h("p", { class: "empty" }, "No tariffs.");
  return h("ul", {}, tariffs.map((t) => h("li", {},
    `${t.direction} ${t.type}: ${t.display_name || t.id}`, t.market_id ? ` (market ${t.market_id})` : "",
    `, ${t.contract_start_date.slice(0, 10)} to ${t.contract_end_date.slice(0, 10)}`)));
}

/** Daily import cost and export earnings; a direction without a tariff counts as none. */
function dailyCost(imp, exp, zone) {
  const days = new Map();
  const add = (res, dir) => {
    if (res instanceof Error) return;
    for (const d of res.data) {
      if (!days.has(d.start_time)) days.set(d.start_time, { start: d.start_time, IMPORT: { wh: 0, m: 0 }, EXPORT: { wh: 0, m: 0 } });
      days.get(d.start_time)[dir] = { wh: d.energy.value, m: micro(d.tariff.value) };
    }
  };
  add(imp, "IMPORT");
  add(exp, "EXPORT");
  const rows = [...days.values()].sort((a, b) => (a.start < b.start ? -1 : 1));
  const note = [imp, exp].filter((r) => r instanceof Error).map((e) => h("p", { class: "warning" }, e.message));
  if (rows.length === 0) return [note, h("p", { class: "empty" }, "No priced readings in this window.")];
  const day = localDay(zone);
  const labels = rows.map((r) => day(new Date(r.start)));
  return [note,
    barChart({ labels, unit: imp.currency_code || exp.currency_code, series: [
      { name: "import cost", cls: "import", values: rows.map((r) => r.IMPORT.m / 1e6) },
      { name: "export earnings", cls: "export", values: rows.map((r) => r.EXPORT.m / 1e6) }] }),
    h("div", { class: "scroll" }, table("loc-days", [{ title: "Day", cls: "key" }, { title: "Import kWh", cls: "import-kwh" },
      { title: "Import cost", cls: "import-cost" }, { title: "Export kWh", cls: "export-kwh" },
      { title: "Export earnings", cls: "export-earn" }, { title: "Net cost", cls: "net" }],
    rows.map((r, i) => ({ key: r.start, cells: [labels[i], kwh(r.IMPORT.wh), money(r.IMPORT.m),
      kwh(r.EXPORT.wh), money(r.EXPORT.m), money(r.IMPORT.m - r.EXPORT.m)] }))))];
}

function timeline(win, rates, high, low, zone) {
  if (rates instanceof Error) return rates;
  const shades = [];
  for (const [res, cls] of [[high, "slot-high"], [low, "slot-low"]]) {
    if (res instanceof Error) return res;
    for (const s of res.data) shades.push({ from: new Date(s.start_time), to: new Date(s.end_time), cls,
      start: s.start_time, end: s.end_time, title: `${cls === "slot-high" ? "HIGH" : "LOW"} average ${s.tariff.rate_avg}` });
  }
  return [h("p", { class: "legend" }, h("span", { class: "key-high" }, "HIGH"), ` and `, h("span", { class: "key-low" }, "LOW"),
    `: the dearest and the cheapest ${SLOT_SHARE * 100}% of the window's time (GET /slots/threshold).`),
  stepChart({ start: win.start, end: win.end, unit: `${rates.currency_code}/kWh`, fmt: axis(win, zone), shades,
    periods: rates.data.map((p) => ({ from: new Date(p.valid_from), to: new Date(p.valid_to), value: p.tariff.rate })) })];
}

function readings(win, res, zone) {
  if (res instanceof Error) return res;
  if (res.data.length === 0) return h("p", { class: "empty" }, "No readings in this window.");
  const at = localTime(zone), last = res.data.slice(-48);
  return [
    stepChart({ start: new Date(res.start_time), end: new Date(res.end_time), unit: "kWh", fmt: axis(win, zone), shades: [],
      periods: res.data.map((d) => ({ from: new Date(d.start_time), to: new Date(d.end_time), value: d.energy.value / 1000 })) }),
    h("details", {}, h("summary", {}, `The last ${last.length} of ${res.data.length} readings (import), priced`),
      table("loc-readings", [{ title: "Start", cls: "key" }, { title: "kWh", cls: "import-kwh" },
        { title: `Cost ${res.currency_code}`, cls: "import-cost" }, { title: "Confidence", cls: "confidence" }],
      last.map((d) => ({ key: d.start_time, cells: [at(new Date(d.start_time)), kwh(d.energy.value),
        money(micro(d.tariff.value)), String(d.tariff.confidence)] }))))];
}

/** The time axis's labels: days, or days and hours over a window of a few days. */
const axis = (win, zone) => (win.end - win.start <= 4 * 86400000 ? localTime(zone) : localDay(zone));

/** Renders location id's page over the window win into view. */
export async function render(view, win, id) {
  const span = { start_time: win.body.start_time, end_time: win.body.end_time };
  const cost = (direction, aggregation) => settle(api.post(`/costs/interval/${id}`, span,
    aggregation ? { direction, aggregation } : { direction }));
  const slots = (segment) => settle(api.get(`/slots/threshold/${id}`, { ...span, segment, relative: SLOT_SHARE }));
  const loc = await settle(api.get(`/locations/${id}`));
  if (loc instanceof Error) {
    view.replaceChildren(section("Location", loc));
    return;
  }
  const [tariffs, dI, dE, rates, high, low, raw] = await Promise.all([
    settle(api.get("/tariffs/elements", { location_id: id, limit: 100 })),
    cost("IMPORT", "DAY"), cost("EXPORT", "DAY"), settle(api.get(`/tariffs/rates/${id}`, span)),
    slots("HIGH"), slots("LOW"), cost("IMPORT")]);
  const zone = loc.timezone;
  view.replaceChildren(
    h("p", { class: "crumbs" }, h("a", { href: "#fleet" }, "Fleet"), " › ", placeName(loc)),
    h("h2", { class: "title" }, placeName(loc), h("small", {}, ` ${zone}, ${loc.currency_code}`)),
    section("Tariffs", tariffs instanceof Error ? tariffs : tariffList(tariffs.data)),
    section("Daily cost", dailyCost(dI, dE, zone)),
    section("Price timeline (import)", timeline(win, rates, high, low, zone)),
    section("Meter readings", readings(win, raw, zone)));
}
