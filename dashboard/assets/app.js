// app.js — the page shell: the key form, the window (from, to), and which view the URL's
// fragment names (#fleet, or #loc_… for a location). Without a key only the form shows.

import * as api from "./api.js";
import * as fleet from "./fleet.js";
import * as place from "./location.js";

const $ = (id) => document.getElementById(id);
const DAY = 86400000;
let shown = 0; // the latest show(): an older one that finishes later is dropped

/**
 * The window from the URL (?from=YYYY-MM-DD&to=YYYY-MM-DD), else the last 30 UTC days
 * (today included); a date that is not one is replaced by its default.
 */
function readWindow() {
  const q = new URLSearchParams(window.location.search);
  const date = (v) => (/^\d{4}-\d{2}-\d{2}$/.test(v || "") && !Number.isNaN(Date.parse(v)) ? v : null);
  const tomorrow = new Date(Math.floor(Date.now() / DAY) * DAY + DAY);
  const to = date(q.get("to")) || tomorrow.toISOString().slice(0, 10);
  const from = date(q.get("from")) || new Date(Date.parse(to) - 30 * DAY).toISOString().slice(0, 10);
  return windowOf(from, to);
}

function windowOf(from, to) {
  const start = new Date(`${from}T00:00:00Z`), end = new Date(`${to}T00:00:00Z`);
  return { from, to, start, end, body: { start_time: start.toISOString().replace(".000", ""), end_time: end.toISOString().replace(".000", "") } };
}

/**
 * Takes a key handed over in the fragment (#key=…, as `make run` prints; #key=…&loc_… to
 * open a location) and drops it from the URL.
 */
function keyFromFragment() {
  const m = window.location.hash.match(/^#key=([^&]+)(?:&(.*))?$/);
  if (!m) return;
  api.saveKey(decodeURIComponent(m[1]), false);
  history.replaceState(null, "", `${window.location.pathname}${window.location.search}#${m[2] || "fleet"}`);
}

async function show() {
  const signedIn = api.storedKey() !== "";
  $("key-form").hidden = signedIn;
  $("main").hidden = !signedIn;
  $("forget").hidden = !signedIn;
  const view = $("view");
  if (!signedIn) {
    shown++;
    view.replaceChildren();
    return;
  }
  const win = readWindow();
  $("from").value = win.from;
  $("to").value = win.to;
  $("mode").textContent = api.storedKey().startsWith("sk_live_") ? "live mode" : "test mode";
  const id = window.location.hash.slice(1), seq = ++shown, next = document.createElement("div");
  document.body.dataset.state = "loading";
  view.replaceChildren(Object.assign(document.createElement("p"), { className: "loading", textContent: "Loading…" }));
  try {
    if (id.startsWith("loc_")) await place.render(next, win, id);
    else await fleet.render(next, win);
  } catch (e) {
    next.replaceChildren(Object.assign(document.createElement("p"), { className: "error", textContent: e.message }));
  }
  if (seq !== shown) return;
  view.replaceChildren(next);
  document.body.dataset.view = id.startsWith("loc_") ? id : "fleet";
  document.body.dataset.state = "ready";
}

async function signIn(event) {
  event.preventDefault();
  const key = $("key").value.trim();
  api.saveKey(key, false);
  try {
    await api.get("/locations", { limit: 1 }); // a key the API refuses is not kept
  } catch (e) {
    api.forgetKey();
    $("key-error").textContent = e.status === 401 || e.status === 403 ? "The API refused this key." : e.message;
    return;
  }
  if ($("remember").checked) api.saveKey(key, true);
  $("key").value = "";
  $("key-error").textContent = "";
  show();
}

function setWindow(event) {
  event.preventDefault();
  const q = new URLSearchParams({ from: $("from").value, to: $("to").value });
  history.replaceState(null, "", `${window.location.pathname}?${q}${window.location.hash}`);
  show();
}

keyFromFragment();
$("key-form").addEventListener("submit", signIn);
$("window").addEventListener("submit", setWindow);
$("forget").addEventListener("click", () => { api.forgetKey(); show(); });
window.addEventListener("hashchange", show);
show();
