// api.js — the only module that talks to the server: the public API, with the key the
// user entered as a bearer credential.

const KEY = "kwhouse.key";

/** The key in use: this tab's, else the one remembered on this device, else "". */
export function storedKey() {
  return sessionStorage.getItem(KEY) || localStorage.getItem(KEY) || "";
}

/** Keeps the key for this tab, and on this device when remember is set. */
export function saveKey(key, remember) {
  sessionStorage.setItem(KEY, key);
  if (remember) localStorage.setItem(KEY, key);
}

/** Forgets the key everywhere this page kept it. */
export function forgetKey() {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

/** An API error: the HTTP status and the error body's code and message. */
export class APIError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

// Cost queries are admitted a few at a time per account (limits.account_queries): the page
// sends them one after another, and retries one answered 503 too_busy after a pause.
let costs = Promise.resolve();
const RETRIES = 3;

function inTurn(send) {
  const turn = costs.then(send, send);
  costs = turn.catch(() => {});
  return turn;
}

async function send(url, init) {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, init);
    if (res.status !== 503 || attempt > RETRIES) return res;
    const wait = Number(res.headers.get("Retry-After")) || attempt;
    await new Promise((done) => setTimeout(done, wait * 1000));
  }
}

async function call(method, path, params, body, accept) {
  const url = params ? `${path}?${new URLSearchParams(params)}` : path;
  const headers = { Authorization: `Bearer ${storedKey()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (accept) headers.Accept = accept;
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  const res = path.startsWith("/costs/") ? await inTurn(() => send(url, init)) : await send(url, init);
  if (!res.ok) {
    let err = null;
    try { err = await res.json(); } catch { /* not JSON: the status says enough */ }
    throw new APIError(res.status, err);
  }
  return accept === "text/csv" ? res.blob() : res.json();
}

/** GET path?params as JSON. */
export const get = (path, params) => call("GET", path, params);

/** POST a JSON body to path?params, answered as JSON. */
export const post = (path, body, params) => call("POST", path, params, body);

/** Every location of the account (the list is paged by 100). */
export async function locations() {
  const out = [];
  for (let after = ""; ;) {
    const page = await get("/locations", after ? { limit: 100, starting_after: after } : { limit: 100 });
    out.push(...page.data);
    if (!page.has_more || page.data.length === 0) return out;
    after = page.data[page.data.length - 1].id;
  }
}

/** Every row of POST /costs/fleet for body, following next_cursor; skipped from the first page. */
export async function fleet(body) {
  const first = await post("/costs/fleet", { limit: 10000, ...body });
  const rows = [...first.data];
  for (let page = first; page.has_more;) {
    page = await post("/costs/fleet", { limit: 10000, ...body, starting_after: page.next_cursor });
    rows.push(...page.data);
  }
  return { rows, skipped: first.skipped };
}

/** POST /costs/fleet answered as CSV (every row, no paging), as a Blob. */
export const fleetCSV = (body) => call("POST", "/costs/fleet", undefined, body, "text/csv");
