// The page: reads the choices from the form, prices them through the API (the comparison
// table, the roofline and the tokens/s chart at once, on every change), and keeps them in
// the address: built-in choices in the query string, pasted text compressed in the fragment.

const TYPES = ["bf16", "fp16", "fp8", "fp8-b128", "fp6", "int8", "mxfp4", "nvfp4", "fp4",
  "int4", "int4-g128", "int4-g128-sym", "int4-g64", "int4-g64-asym", "int4-g32",
  "int4-g32-asym", "fp32", "tf32"];
// The chart's sweep: tokens/s at every power of two of batch up to 1024.
const CHART_AXIS = "batch=1..=1024:x2";
// Longest compressed pasted text a link carries (its fragment), in characters.
const LINK_LIMIT = 32 * 1024;
// Params the form sets, each with its input.
const PARAMS = ["batch", "context", "tokens", "tp", "pp", "ep"];
const DEFAULT_CHIPS = ["h200", "b200"];
// The server's access token, when it has one: the address it printed carries it
// (`?token=...`), every API request sends it, and the page's own address keeps it.
const TOKEN = new URLSearchParams(location.search).get("token");

const $ = (id) => document.getElementById(id);
const page = {
  workloads: new Map(), // id -> row of GET /api/workloads
  facts: null, // params and fusion plans of the chosen workload
  seq: 0,
  controller: null,
  pastedError: null,
  renderMs: [], // input to drawn, per complete render (the browser tests read it)
};
window.stepcostRenderMs = page.renderMs;

class ApiError extends Error {}

async function api(path, body, as, signal) {
  const response = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(TOKEN ? { "x-stepcost-token": TOKEN } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error; } catch { /* not JSON */ }
    throw new ApiError(message);
  }
  if (as === "text") return response.text();
  if (as === "blob") return response.blob();
  return response.json();
}

// ---------- numbers for people ----------

function significant(x, digits = 3) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const magnitude = Math.floor(Math.log10(Math.abs(x)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  return x.toFixed(Math.min(decimals, 6));
}
function scaled(x, unit, base = 1000) {
  const prefixes = ["", "k", "M", "G", "T", "P"];
  let i = 0;
  while (Math.abs(x) >= base && i < prefixes.length - 1) { x /= base; i++; }
  return `${significant(x)} ${prefixes[i]}${unit}`;
}
function seconds(s) {
  if (s >= 1) return `${significant(s)} s`;
  if (s >= 1e-3) return `${significant(s * 1e3)} ms`;
  return `${significant(s * 1e6)} µs`;
}
const percent = (x) => `${significant(x * 100)}%`;
const count = (x) => (Math.abs(x) >= 1e4 ? scaled(x, "") : Number.isInteger(x) ? String(x) : significant(x, 4));

// The 80 % band (expected mode) after a number, its ends in the scale the number is shown
// in, to two significant digits (whole from 10 up), as the command line's tables write it:
// "65.1 ms (60-81)". None where the row has no band (roofline mode).
function ends(lo, hi, scale) {
  const two = (x) => {
    x /= scale;
    return x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2);
  };
  return ` (${two(lo)}-${two(hi)})`;
}
const timeScale = (s) => (s >= 1 ? 1 : s >= 1e-3 ? 1e-3 : 1e-6);
function countScale(x) {
  let scale = 1;
  if (Math.abs(x) < 1e4) return scale;
  while (Math.abs(x) / scale >= 1000 && scale < 1e15) scale *= 1000;
  return scale;
}
const banded = (row) => row.step_time_low_us !== null && row.step_time_low_us !== undefined;
// A step-time band's multipliers, applied to another time (ms per token) or rate of the row.
const timeBand = (row, v, scale) =>
  ends(v * row.step_time_low_us / row.step_time_us, v * row.step_time_high_us / row.step_time_us, scale);
const rateBand = (row, v) =>
  ends(v * row.tokens_per_s_low / row.tokens_per_s, v * row.tokens_per_s_high / row.tokens_per_s, countScale(v));

// The table's rows: label, column of the API's rows, how a value reads, and (where a number
// has an 80 % band) how its band reads.
const ROWS = [
  ["step time", "step_time_us", (v) => seconds(v * 1e-6),
    (row, v) => ends(row.step_time_low_us * 1e-6, row.step_time_high_us * 1e-6, timeScale(v * 1e-6))],
  ["on the roofline", "roofline_step_time_us", (v) => seconds(v * 1e-6)],
  ["engine host work", "host_time_us", (v) => seconds(v * 1e-6)],
  ["tokens per second", "tokens_per_s", count,
    (row, v) => ends(row.tokens_per_s_low, row.tokens_per_s_high, countScale(v))],
  ["ms per output token", "ms_per_token", (v) => significant(v), (row, v) => timeBand(row, v, 1)],
  ["tokens/s per chip", "tokens_per_s_per_chip", count, (row, v) => rateBand(row, v)],
  ["chips per replica", "chips_per_replica", count],
  ["USD per hour", "usd_per_hour", (v) => (v === null ? "no price" : significant(v))],
  ["USD per million tokens", "usd_per_million_tokens", (v) => (v === null ? "no price" : significant(v))],
  ["MFU", "mfu", percent],
  ["MBU", "mbu", percent],
  ["time compute-bound", "compute_bound_share", percent],
  ["weights", "weight_bytes", (v) => scaled(v, "B")],
  ["KV cache", "kv_bytes", (v) => scaled(v, "B")],
  ["memory needed", "footprint_bytes", (v) => scaled(v, "B")],
  ["memory usable", "usable_bytes", (v) => scaled(v, "B")],
  ["fits", "fits", (v) => (v ? "yes" : "no")],
  ["largest batch that fits", "max_batch", count],
  ["speed vs first chip", "relative_speed", (v) => `${significant(v)}x`],
];

// ---------- the form ----------

function option(value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  return o;
}

function pastedKind() {
  const v = $("workload").value;
  return v === "__yaml" ? "workload_yaml" : v === "__config" ? "hf_config" : null;
}

function chosenChips() {
  return [...document.querySelectorAll("#chip-list input:checked")].map((c) => c.value);
}

function paramFact(name) {
  return page.facts?.params.find((p) => p.name === name && p.settable);
}

// `NAME=VALUE` for each param the form holds that differs from the workload's default.
function sets() {
  const out = [];
  for (const name of PARAMS) {
    const fact = paramFact(name);
    const value = $(name).value.trim();
    if (fact && value !== "" && Number(value) !== fact.default) out.push(`${name}=${value}`);
  }
  return out;
}

function dtypes() {
  return [...document.querySelectorAll("select.dtype")]
    .filter((s) => s.value !== "")
    .map((s) => `${s.dataset.key}=${s.value}`);
}

// The scenario as the API takes it.
function scenario() {
  const request = { chips: chosenChips(), set: sets(), dtype: dtypes() };
  const kind = pastedKind();
  if (kind) request[kind] = $("pasted").value;
  else request.workload = $("workload").value;
  const fusion = $("fusion").value;
  if (page.facts && fusion && fusion !== page.facts.default_fusion) request.fusion = fusion;
  if ($("mode").value !== "expected") request.mode = $("mode").value;
  if ($("engine").value) request.engine = $("engine").value;
  if ($("cost").value !== "cloud") request.cost = $("cost").value;
  return request;
}

// Puts the workload's params and plans on the form; `keep` holds values to restore.
function applyFacts(facts, keep = {}) {
  page.facts = facts;
  for (const name of PARAMS) {
    const fact = facts?.params.find((p) => p.name === name && p.settable);
    const input = $(name);
    input.disabled = !fact;
    input.closest("label").classList.toggle("absent", !fact);
    input.value = keep[name] ?? (fact ? fact.default : "");
  }
  syncRange();
  const fusion = $("fusion");
  fusion.replaceChildren(...(facts?.fusion_plans ?? []).map((p) =>
    option(p, p === facts.default_fusion ? `${p} (the workload's default)` : p)));
  fusion.value = keep.fusion && facts?.fusion_plans.includes(keep.fusion) ? keep.fusion : facts?.default_fusion ?? "";
  const row = page.workloads.get($("workload").value);
  for (const select of document.querySelectorAll("select.dtype")) {
    const key = select.dataset.key;
    const own = row ? row[`${key}_dtype`] : null;
    const keepValue = keep[key] ?? select.value;
    select.replaceChildren(option("", own ? `checkpoint (${own})` : "the file's"), ...TYPES.map((t) => option(t, t)));
    select.value = TYPES.includes(keepValue) ? keepValue : "";
  }
}

function syncRange() {
  const batch = Number($("batch").value);
  $("batch-range").value = batch > 0 ? Math.round(Math.log2(batch)) : 0;
}

async function workloadChanged(keep = {}) {
  const kind = pastedKind();
  $("paste").hidden = !kind;
  $("pasted-label").textContent = kind === "hf_config" ? "a Hugging Face config.json" : "a workload file (YAML)";
  if (!kind) {
    applyFacts(page.workloads.get($("workload").value), keep);
    return render();
  }
  return pastedChanged(keep);
}

// Pasted text is checked as the command line checks a file; its error is shown beside it.
async function pastedChanged(keep = {}) {
  const kind = pastedKind();
  const error = $("paste-error");
  try {
    const facts = await api("/api/workload", { [kind]: $("pasted").value });
    error.hidden = true;
    page.pastedError = null;
    applyFacts(facts, keep);
  } catch (e) {
    error.textContent = e.message;
    error.hidden = false;
    page.pastedError = e.message;
    applyFacts(null, keep);
  }
  return render();
}

// ---------- drawing ----------

function drawTable(compared) {
  const thead = $("table").tHead;
  const tbody = $("table").tBodies[0];
  const head = document.createElement("tr");
  head.append(document.createElement("th"));
  for (const row of compared.rows) {
    const th = document.createElement("th");
    th.textContent = row.chip;
    th.dataset.chip = row.chip;
    head.append(th);
  }
  thead.replaceChildren(head);
  tbody.replaceChildren(...ROWS.map(([label, key, shown, band]) => {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.textContent = label;
    tr.dataset.key = key;
    tr.append(th);
    for (const row of compared.rows) {
      const td = document.createElement("td");
      const v = row[key];
      td.dataset.chip = row.chip;
      td.dataset.value = JSON.stringify(v);
      td.textContent = v === undefined ? "" : shown(v);
      if (band && typeof v === "number" && banded(row)) {
        const span = document.createElement("span");
        span.className = "band";
        span.title = "80% band: the measured set's cross-validated errors";
        span.textContent = band(row, v);
        td.append(span);
      }
      if (key === "fits") td.className = v ? "fits" : "unfit";
      tr.append(td);
    }
    return tr;
  }));
  $("title").textContent = `${compared.name}: ${compared.rows[0]?.mode} mode, fusion ${compared.rows[0]?.fusion}, ` +
    `weights ${compared.rows[0]?.weight_dtype}, KV ${compared.rows[0]?.kv_dtype}`;
  $("verdicts").replaceChildren(...compared.verdicts.filter((v) => v.advice).map((v) => {
    const li = document.createElement("li");
    li.textContent = v.advice;
    li.className = v.fits ? "advice" : "unfit";
    li.dataset.chip = v.chip;
    return li;
  }));
  $("command").textContent = compared.command;
  $("sweep-command").textContent = compared.sweep_command ?? "";
}

function drawPicture(id, result) {
  const box = $(id);
  if (result.status === "fulfilled") {
    box.innerHTML = result.value; // SVG made by stepcost's own exporter
  } else {
    const p = document.createElement("p");
    p.className = "note";
    p.textContent = result.reason.message;
    box.replaceChildren(p);
  }
}

function showError(message) {
  $("status").textContent = message;
  $("status").hidden = !message;
}

// Prices the form's scenario: the table, the roofline and the chart, requested together;
// a newer change aborts an older one's requests.
async function render() {
  const seq = ++page.seq;
  page.controller?.abort();
  const controller = new AbortController();
  page.controller = controller;
  const started = performance.now();
  document.body.dataset.state = "busy";
  const request = scenario();
  await saveAddress(request);
  const finish = (state) => {
    if (seq !== page.seq) return;
    document.body.dataset.state = state;
    document.body.dataset.seq = String(seq);
  };
  if (page.pastedError) {
    showError(page.pastedError);
    return finish("error");
  }
  if (request.chips.length === 0) {
    showError("choose at least one chip");
    return finish("error");
  }
  const swept = { ...request, sweep: { set: [CHART_AXIS] } };
  const [compared, roofline] = await Promise.allSettled([
    api("/api/compare", swept, "json", controller.signal),
    api("/api/plot/roofline", request, "text", controller.signal),
  ]);
  // The chart once the table says some chip fits at some batch (else it has no line).
  let sweep = { status: "rejected", reason: new ApiError("this workload has no batch to sweep") };
  if (compared.status === "fulfilled" && paramFact("batch")) {
    const fits = compared.value.rows.some((r) => r.max_batch >= 1);
    sweep = fits
      ? (await Promise.allSettled([api("/api/plot/sweep", swept, "text", controller.signal)]))[0]
      : { status: "rejected", reason: new ApiError("no chip fits this scenario at any batch: the chart has no line") };
  }
  if (seq !== page.seq) return;
  if (compared.status === "rejected") {
    if (compared.reason.name === "AbortError") return;
    showError(compared.reason.message);
    return finish("error");
  }
  showError("");
  drawTable(compared.value);
  drawPicture("roofline", roofline);
  drawPicture("chart", sweep);
  page.renderMs.push(performance.now() - started);
  finish("ready");
}

// ---------- the address ----------

function toBase64Url(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
function fromBase64Url(code) {
  const text = atob(code.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}
async function pack(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return toBase64Url(new Uint8Array(await new Response(stream).arrayBuffer()));
}
async function unpack(code) {
  const stream = new Blob([fromBase64Url(code)]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).text();
}

// Built-in choices go in the query string; pasted text, compressed, in the fragment (never
// sent to a server), unless it is too long for a link, which the page then says.
async function saveAddress(request) {
  const query = new URLSearchParams();
  if (TOKEN) query.set("token", TOKEN);
  query.set("workload", request.workload ?? (pastedKind() === "hf_config" ? "config" : "yaml"));
  query.set("chips", request.chips.join(","));
  for (const s of request.set) query.set(...s.split("="));
  for (const d of request.dtype) query.set(...d.split("="));
  if (request.fusion) query.set("fusion", request.fusion);
  if (request.mode) query.set("mode", request.mode);
  if (request.engine) query.set("engine", request.engine);
  if (request.cost) query.set("cost", request.cost);
  let fragment = "";
  const note = $("link-note");
  note.hidden = true;
  const kind = pastedKind();
  if (kind) {
    const packed = await pack($("pasted").value);
    if (packed.length <= LINK_LIMIT) {
      fragment = `#${kind === "hf_config" ? "config" : "yaml"}=${packed}`;
    } else {
      note.textContent = `The pasted text is ${Math.ceil(packed.length / 1024)} KB compressed, over the ${LINK_LIMIT / 1024} KB a link carries: the link leaves it out.`;
      note.hidden = false;
    }
  }
  history.replaceState(null, "", `?${query}${fragment}`);
}

async function restoreAddress() {
  const query = new URLSearchParams(location.search);
  const keep = {};
  for (const name of [...PARAMS, "fusion", "weight", "activation", "kv"]) {
    if (query.has(name)) keep[name] = query.get(name);
  }
  const workload = query.get("workload");
  const chips = (query.get("chips") ?? DEFAULT_CHIPS.join(",")).split(",");
  for (const box of document.querySelectorAll("#chip-list input")) box.checked = chips.includes(box.value);
  if (query.get("mode")) $("mode").value = query.get("mode");
  if (query.get("engine") && [...$("engine").options].some((o) => o.value === query.get("engine"))) {
    $("engine").value = query.get("engine");
  }
  if (query.get("cost")) $("cost").value = query.get("cost");
  const hash = new URLSearchParams(location.hash.slice(1));
  if ((workload === "yaml" || workload === "config") && hash.has(workload)) {
    $("workload").value = workload === "yaml" ? "__yaml" : "__config";
    try { $("pasted").value = await unpack(hash.get(workload)); } catch { $("pasted").value = ""; }
  } else if (workload && page.workloads.has(workload)) {
    $("workload").value = workload;
  }
  return keep;
}

// ---------- downloads ----------

async function download(path, body, file) {
  try {
    const blob = body instanceof Blob ? body : await api(path, body, "blob");
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = file;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  } catch (e) {
    showError(e.message);
  }
}

// ---------- start ----------

async function start() {
  const [workloads, chips, engines] = await Promise.all([
    api("/api/workloads"), api("/api/chips"), api("/api/engines"),
  ]);
  $("engine").append(...engines.map((e) => option(e.engine, `${e.engine}: ${e.name}`)));
  const select = $("workload");
  for (const w of workloads) {
    page.workloads.set(w.workload, w);
    select.append(option(w.workload, `${w.name}${w.kind === "kernel" ? " (kernel)" : ""}`));
  }
  select.append(option("__yaml", "paste a workload file (YAML)…"), option("__config", "paste a Hugging Face config.json…"));
  select.value = page.workloads.has("llama-3.1-70b") ? "llama-3.1-70b" : workloads[0].workload;
  const names = new Map(chips.map((c) => [c.chip, c.name]));
  $("chip-list").replaceChildren(...[...names].map(([id, name]) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = id;
    box.name = "chip";
    label.title = name;
    label.append(box, ` ${id}`);
    return label;
  }));
  const keep = await restoreAddress();

  select.addEventListener("change", () => {
    const { batch, context, tokens, weight, activation, kv } = currentValues();
    workloadChanged({ batch, context, tokens, weight, activation, kv });
  });
  $("pasted").addEventListener("input", () => pastedChanged(currentValues()));
  $("form").addEventListener("input", (e) => {
    if (e.target === select || e.target.id === "pasted") return;
    if (e.target.id === "batch-range") $("batch").value = 2 ** Number(e.target.value);
    if (e.target.id === "batch") syncRange();
    render();
  });
  $("form").addEventListener("submit", (e) => e.preventDefault());
  $("download-table").addEventListener("click", () =>
    download("/api/compare", { ...scenario(), format: "csv" }, "compare.csv"));
  const swept = (format) => ({ ...scenario(), format, sweep: { set: [CHART_AXIS] } });
  $("download-sweep").addEventListener("click", () => download("/api/sweep", swept("csv"), "sweep.csv"));
  $("download-parquet").addEventListener("click", () => download("/api/sweep", swept("parquet"), "sweep.parquet"));
  $("download-command").addEventListener("click", () =>
    download(null, new Blob([`${$("command").textContent}\n${$("sweep-command").textContent} > sweep.csv\n`], { type: "text/x-shellscript" }), "stepcost.sh"));
  await workloadChanged(keep);
}

// The form's values, kept across a change of workload facts.
function currentValues() {
  const keep = { fusion: $("fusion").value };
  for (const name of PARAMS) keep[name] = $(name).value;
  for (const s of document.querySelectorAll("select.dtype")) keep[s.dataset.key] = s.value;
  return keep;
}

start().catch((e) => showError(`the page could not start: ${e.message}`));
