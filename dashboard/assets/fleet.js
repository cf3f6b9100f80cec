// fleet.js — the fleet view: cost per day and per month (chart and table, import and
// export, per currency), each location's total with a link to its page, CSV downloads.

import * as api from "./api.js";
import { barChart } from "./chart.js";
import { h, section, table, micro, money, kwh, placeName, saveBlob } from "./ui.js";

const COLUMNS = [
  { title: "Import kWh", cls: "import-kwh" }, { title: "Import cost", cls: "import-cost" },
  { title: "Export kWh", cls: "export-kwh" }, { title: "Export earnings", cls: "export-earn" },
  { title: "Net cost", cls: "net" },
];

/** Sums rows of both directions into buckets by keyOf(row) and currency. */
function buckets(imports, exports, keyOf) {
  const out = new Map();
  const add = (rows, dir) => {
    for (const r of rows) {
      const k = `${r.currency_code}|${keyOf(r)}`;
      if (!out.has(k)) out.set(k, { key: keyOf(r), currency: r.currency_code, import: { wh: 0, m: 0 }, export: { wh: 0, m: 0 } });
      const b = out.get(k)[dir];
      b.wh += r.energy.value;
      b.m += micro(r.tariff.value);
    }
  };
  add(imports, "import");
  add(exports, "export");
  return [...out.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const cells = (b) => [kwh(b.import.wh), money(b.import.m), kwh(b.export.wh), money(b.export.m), money(b.import.m - b.export.m)];

/** A chart and a table of buckets keyed by local date or month, one pair per currency. */
function perCurrency(kind, title, list) {
  const currencies = [...new Set(list.map((b) => b.currency))].sort();
  if (currencies.length === 0) return h("p", { class: "empty" }, "No priced readings in this window.");
  return currencies.map((cur) => {
    const rows = list.filter((b) => b.currency === cur);
    const labels = rows.map((b) => b.key);
    return h("div", { class: "currency" }, h("h3", {}, `${title} (${cur})`),
      barChart({ labels, unit: cur, series: [
        { name: "import cost", cls: "import", values: rows.map((b) => b.import.m / 1e6) },
        { name: "export earnings", cls: "export", values: rows.map((b) => b.export.m / 1e6) }] }),
      h("div", { class: "scroll" }, table(`fleet-${kind}-${cur}`, [{ title: kind === "days" ? "Date" : "Month", cls: "key" }, ...COLUMNS],
        rows.map((b) => ({ key: b.key, cells: [b.key, ...cells(b)] })))));
  });
}

function csvButtons(win, aggregation) {
  return h("p", { class: "downloads" }, ["IMPORT", "EXPORT"].map((direction) => {
    const b = h("button", { type: "button", class: "csv", "data-aggregation": aggregation, "data-direction": direction },
      `${direction.toLowerCase()} CSV`);
    b.addEventListener("click", async () => {
      const body = { ...win.body, aggregation, direction };
      saveBlob(`fleet-${aggregation.toLowerCase()}-${direction.toLowerCase()}-${win.from}.csv`, await api.fleetCSV(body));
    });
    return b;
  }));
}

function skippedNote(skipped) {
  if (!skipped || skipped.count === 0) return null;
  return h("p", { class: "warning" }, `${skipped.count} with readings could not be priced: `,
    skipped.data.map((s) => `${s.id} (${s.code})`).join(", "));
}

/** Renders the fleet's costs over the window win into view. */
export async function render(view, win) {
  const ask = (aggregation, direction) => api.fleet({ ...win.body, aggregation, direction }).catch((e) => e);
  const [locs, dI, dE, mI, mE] = await Promise.all([api.locations().catch((e) => e),
    ask("DAY", "IMPORT"), ask("DAY", "EXPORT"), ask("MONTH", "IMPORT"), ask("MONTH", "EXPORT")]);
  const failed = [locs, dI, dE, mI, mE].find((r) => r instanceof Error);
  if (failed) {
    view.replaceChildren(section("Fleet", failed));
    return;
  }
  const byDate = (r) => r.date;
  const names = new Map(locs.map((l) => [l.id, l]));
  const totals = buckets(mI.rows, mE.rows, (r) => r.location_id); // a location's months make its window
  view.replaceChildren(...[
    h("h2", { class: "title" }, `Fleet: ${locs.length} locations`),
    skippedNote(dI.skipped), skippedNote(dE.skipped),
    section("Daily cost", [perCurrency("days", "Per local day", buckets(dI.rows, dE.rows, byDate)), csvButtons(win, "DAY")]),
    section("Monthly cost", [perCurrency("months", "Per local month", buckets(mI.rows, mE.rows, byDate)), csvButtons(win, "MONTH")]),
    section("Locations", table("fleet-locations",
      [{ title: "Location", cls: "key" }, { title: "Currency", cls: "currency" }, ...COLUMNS],
      totals.map((b) => ({ key: b.key, cells: [
        h("a", { href: `#${b.key}` }, names.has(b.key) ? placeName(names.get(b.key)) : b.key), b.currency, ...cells(b)] }))))].filter(Boolean));
}
