// ui.js — small DOM and number helpers shared by the views.

/** An element: h("td", {class: "x"}, "text", child…). Attributes with null are left out. */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, v);
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/** A section with a heading, its content, and the error of the call that failed instead. */
export function section(title, content) {
  if (content instanceof Error) return h("section", {}, h("h2", {}, title), h("p", { class: "error" }, content.message));
  return h("section", {}, h("h2", {}, title), content);
}

/**
 * A table: columns [{title, cls}], rows [{key, cells: [text…]}]; each row carries data-key
 * and each cell its column's class.
 */
export function table(id, columns, rows) {
  return h("table", { id },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.cls }, c.title)))),
    h("tbody", {}, rows.map((r) => h("tr", { "data-key": r.key },
      r.cells.map((c, i) => h("td", { class: columns[i].cls }, c))))));
}

// Money arrives with 6 decimals. Sums are kept in whole micro-units, so adding many rows
// never drifts, and shown to the cent, rounded half away from zero.

/** A money value as whole micro-units. */
export const micro = (v) => Math.round(v * 1e6);

/** Micro-units shown with 2 decimals. */
export function money(m) {
  const cents = Math.round(Math.abs(m) / 1e4);
  return (m < 0 && cents > 0 ? "-" : "") + (cents / 100).toFixed(2);
}

/** Whole Wh shown as kWh with 3 decimals. */
export const kwh = (wh) => (wh / 1000).toFixed(3);

/** A location's name for people: its reference, else its city, else its id. */
export const placeName = (loc) => loc.reference_id || (loc.postal_address && loc.postal_address.city) || loc.id;

/** Formats a Date in a zone: "Jan 5, 14:30". */
export function localTime(zone) {
  const f = new Intl.DateTimeFormat("en-GB", { timeZone: zone, month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return (d) => f.format(d);
}

/** Formats a Date in a zone as its day: "5 Jan". */
export function localDay(zone) {
  const f = new Intl.DateTimeFormat("en-GB", { timeZone: zone, month: "short", day: "numeric" });
  return (d) => f.format(d);
}

/** Saves blob as a file named name (the browser's download). */
export function saveBlob(name, blob) {
  const a = h("a", { href: URL.createObjectURL(blob), download: name });
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
