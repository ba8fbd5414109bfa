"use strict";
// The run viewer (read-only). Every string from the store (replies, prompts, names, items) goes on the page
// as a text node (textContent), never as HTML, so nothing a model or a person wrote can become markup.
// A transcript is fetched one page at a time; at most MAX_PAGES pages are on the page at once and a page
// left behind is dropped, so the browser never holds a whole run.

const MAX_PAGES = 3;
const enc = encodeURIComponent;

const when = (ts) => (ts ? new Date(ts * 1000).toLocaleString() : "");
const json = (v) => JSON.stringify(v, null, 2);
const pairs = (obj) => Object.entries(obj || {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ");

async function api(path) {
  const res = await fetch(path, { headers: { Accept: "application/json" } });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(typeof data.detail === "string" ? data.detail : `The server answered ${res.status}.`);
  return data;
}
function crumbs(...links) {
  fill($("#crumbs"), links.map(([text, href], i) => [i ? " / " : "", href ? h("a", { href }, text) : h("span", {}, text)]));
}

// ------------------------------------------------------------------------------------------- run list
let runsAfter = null;
async function showRuns() {
  $("#runs-view").hidden = false;
  crumbs(["runs"]);
  $("#runs-more").onclick = () => loadRuns();
  await loadRuns();
}
async function loadRuns() {
  const page = await api(`/api/runs${runsAfter ? `?after=${enc(runsAfter)}` : ""}`);
  const body = $("#runs-table tbody");
  for (const r of page.runs) {
    body.append(h("tr", { class: "run-row" },
      h("td", {}, h("a", { href: `/runs/${enc(r.id)}` }, r.id)), h("td", {}, r.kind), h("td", {}, r.protocol),
      h("td", {}, h("span", { class: `pill ${r.status === "done" ? "ok" : r.status === "running" ? "" : "bad"}` }, r.status)),
      h("td", {}, String(r.episodes)), h("td", {}, String(r.done)), h("td", {}, String(r.failed)),
      h("td", {}, when(r.created_at))));
  }
  if (!body.children.length) body.append(h("tr", {}, h("td", { colspan: "8" }, "No runs in this store yet.")));
  runsAfter = page.next;
  $("#runs-more").hidden = !page.next;
}

// ------------------------------------------------------------------------------------- one run
let runId = null;
async function showRun(run) {
  runId = run;
  $("#run-view").hidden = false;
  crumbs(["runs", "/runs"], [run]);
  const head = await api(`/api/runs/${enc(run)}`);
  document.title = `${head.id} · LexiCoord runs`;
  $("#run-title").textContent = `${head.id}`;
  $("#run-meta").textContent = `${head.protocol} ${head.kind} · ${head.status} · ${head.done} done, ${head.failed} failed` +
    ` of ${head.episodes} · started ${when(head.created_at)}, last change ${when(head.updated_at)}`;
  $("#run-report").textContent = head.report;
  $("#run-config").textContent = json(head.config);
  const params = new URLSearchParams(location.search);
  const chosen = { outcome: params.getAll("outcome"), setting: params.getAll("setting") };
  $("#filters [name=status]").value = params.get("status") || "";
  const fields = [];
  for (const [part, param] of [["settings", "setting"], ["outcome", "outcome"]]) {
    for (const [key, values] of Object.entries(head.facets[part] || {})) {
      const select = h("select", { "data-param": param, "data-key": key, name: `${param}:${key}` },
        h("option", { value: "" }, "any"),
        values.map((v) => h("option", { value: `${key}=${typeof v === "string" ? v : JSON.stringify(v)}` },
          typeof v === "string" ? v : JSON.stringify(v))));
      const wanted = chosen[param].find((p) => p.split("=")[0] === key);
      if (wanted) select.value = wanted;
      fields.push(h("label", {}, `${param === "setting" ? "" : "outcome "}${key} `, select));
    }
  }
  fill($("#facet-fields"), fields);
  $("#filters").onchange = () => loadEpisodes({});
  $("#clear-filters").onclick = () => { for (const s of $("#filters").querySelectorAll("select")) s.value = ""; loadEpisodes({}); };
  await loadEpisodes({ keepUrl: true });
}

function filterQuery() {
  const q = new URLSearchParams();
  const status = $("#filters [name=status]").value;
  if (status) q.append("status", status);
  for (const s of $("#facet-fields").querySelectorAll("select")) if (s.value) q.append(s.dataset.param, s.value);
  return q;
}
async function loadEpisodes({ after, before, keepUrl }) {
  const q = filterQuery();
  if (!keepUrl) history.replaceState(null, "", `${location.pathname}${q.toString() ? `?${q}` : ""}`);
  if (after) q.set("after", after);
  if (before) q.set("before", before);
  const page = await api(`/api/runs/${enc(runId)}/episodes?${q}`);
  $("#episode-count").textContent = `(${page.count} match)`;
  fill($("#episodes-table tbody"), page.episodes.map((e) => h("tr", { class: "episode-row" },
    h("td", {}, String(e.position)),
    h("td", {}, h("a", { href: `/runs/${enc(runId)}/episodes/${e.id}` }, e.item_id), e.repetition ? ` (rep ${e.repetition})` : ""),
    h("td", {}, h("span", { class: `pill ${e.status === "done" ? "ok" : "bad"}` }, e.status),
      e.error ? h("div", { class: "error" }, e.error) : null),
    h("td", {}, pairs(e.settings)), h("td", {}, pairs(e.outcome)),
    h("td", {}, e.lineup.map((s) => `${s.name}${s.model ? ` (${s.model})` : s.kind ? ` (${s.kind})` : ""}`).join(", ")),
    h("td", {}, String(e.model_calls)), h("td", {}, `${e.prompt_tokens}+${e.completion_tokens}`))));
  if (!page.episodes.length) $("#episodes-table tbody").append(h("tr", {}, h("td", { colspan: "8" }, "No episode matches.")));
  const prev = $("#episodes-prev"), next = $("#episodes-next");
  prev.hidden = !page.prev; next.hidden = !page.next;
  prev.onclick = () => loadEpisodes({ before: page.prev });
  next.onclick = () => loadEpisodes({ after: page.next });
}

// ---------------------------------------------------------------------------------- one episode
let base = null, head = null, pages = [], busy = false;

async function showEpisode(run, id) {
  base = `/api/runs/${enc(run)}/episodes/${enc(id)}`;
  $("#episode-view").hidden = false;
  crumbs(["runs", "/runs"], [run, `/runs/${enc(run)}`], [`episode ${id}`]);
  head = await api(base);
  document.title = `${head.item_id} · ${run} · LexiCoord runs`;
  $("#episode-title").textContent = `${head.item_id} (episode ${head.position}${head.repetition ? `, repetition ${head.repetition}` : ""})`;
  $("#episode-meta").textContent = [
    head.status, `attempt ${head.attempt}`, `seed ${head.seed}`, `started ${when(head.started_at)}`,
    `${(head.finished_at - head.started_at).toFixed(1)} s`, `${head.model_calls} model calls`,
    `seats: ${head.lineup.map((s) => `${s.name}${s.model ? ` (${s.model})` : ""}`).join(", ")}`,
  ].join(" · ");
  $("#episode-error").textContent = head.error || "";
  $("#episode-detail").textContent = json({ item: head.item, settings: head.settings_full, outcome: head.outcome_full });
  $("#events-first").onclick = () => jump({});
  $("#events-last").onclick = () => jump({ before: head.events.last + 1 });
  $("#events-earlier").onclick = () => more(false);
  $("#events-later").onclick = () => more(true);
  await jump({});
}

async function jump(cursor) {
  for (const p of pages) for (const n of p.nodes) n.remove();
  pages = [];
  await load(cursor, true);
}
async function more(later) {
  if (!pages.length) return jump({});
  const cursor = later ? { after: pages[pages.length - 1].last } : { before: pages[0].first };
  await load(cursor, later);
}

async function load(cursor, later) {
  if (busy) return;
  busy = true;
  // The moves are off until the page and its board are in: a click meanwhile would otherwise do nothing, unseen.
  for (const id of ["#events-earlier", "#events-first", "#events-later", "#events-last"]) $(id).disabled = true;
  try {
    const q = new URLSearchParams();
    if (cursor.after != null) q.set("after", cursor.after);
    if (cursor.before != null) q.set("before", cursor.before);
    const page = await api(`${base}/events?${q}`);
    if (!page.events.length) return;
    const nodes = page.events.map(eventNode);
    const entry = { first: page.events[0].seq, last: page.events[page.events.length - 1].seq, nodes, prev: page.prev, next: page.next };
    const list = $("#transcript");
    if (later) { list.append(...nodes); pages.push(entry); } else { list.prepend(...nodes); pages.unshift(entry); }
    while (pages.length > MAX_PAGES) {  // drop the page farthest from where the reader is going
      const gone = later ? pages.shift() : pages.pop();
      for (const n of gone.nodes) n.remove();
    }
    await showBoard(pages[pages.length - 1].last);
  } catch (err) {
    showError(err.message);
  } finally {
    busy = false;
    updateButtons();
  }
}

function updateButtons() {
  const atStart = !pages.length || pages[0].prev == null;
  const atEnd = !pages.length || pages[pages.length - 1].next == null;
  $("#events-earlier").disabled = atStart;
  $("#events-first").disabled = atStart;
  $("#events-later").disabled = atEnd;
  $("#events-last").disabled = atEnd;
  const shown = pages.reduce((n, p) => n + p.nodes.length, 0);
  $("#transcript-span").textContent = pages.length
    ? `(events ${pages[0].first}–${pages[pages.length - 1].last} of ${head.events.count}; ${shown} on the page)`
    : `(${head.events.count} events)`;
}

function eventNode(e) {
  const where = [e.round != null ? `round ${e.round}` : null, e.phase].filter(Boolean).join(" ");
  const li = h("li", { class: `ev ev-${e.type}`, "data-seq": String(e.seq) },
    h("div", { class: "ev-head" },
      h("span", { class: "seq" }, `#${e.seq}`), where ? h("span", { class: "where" }, where) : null,
      e.agent ? h("b", { class: "who" }, e.agent) : null, h("span", { class: "type" }, e.type),
      h("span", { class: `aud aud-${e.audience.kind}`, title: "who may see this event" }, `seen by ${e.audience.text}`)),
    e.line != null ? h("div", { class: "line" }, e.line) : null);
  if (e.call) {
    const c = e.call;
    li.append(h("div", { class: "call" },
      `${c.model} · ${c.prompt_tokens ?? "?"} prompt + ${c.completion_tokens ?? "?"} completion tokens · ` +
      `${(c.latency || 0).toFixed(2)} s${c.cached ? " · cached" : ""}${c.attempts > 1 ? ` · ${c.attempts} attempts` : ""}`,
      c.parse_error ? h("span", { class: "bad" }, ` · unparsed: ${c.parse_error}`) : null),
    c.reply ? h("div", { class: "reply" }, `reply: ${c.reply}`) : null);
    li.append(lazyDetails(e.seq, `prompt (${c.messages} messages), raw reply and usage`, callDetail));
  } else if (e.type === "terms_shared" && Array.isArray(e.fields.snapshot)) {
    li.append(snapshotTable(e.fields.snapshot));
  }
  if (!e.call && (e.clipped || Object.keys(e.fields).length)) {
    li.append(e.clipped ? lazyDetails(e.seq, "the whole event", (data) => [h("pre", { class: "json" }, json(data))])
      : h("details", {}, h("summary", {}, "fields"), h("pre", { class: "json" }, json(e.fields))));
  }
  return li;
}

function lazyDetails(seq, label, render) {
  const box = h("div", { class: "detail" });
  const details = h("details", { class: "more" }, h("summary", {}, label), box);
  details.addEventListener("toggle", async () => {
    if (!details.open || box.childElementCount) return;
    try {
      const full = await api(`${base}/events/${seq}`);
      fill(box, render(full.data));
    } catch (err) { fill(box, h("p", { class: "error" }, err.message)); }
  });
  return details;
}

function callDetail(d) {
  const usage = d.usage || {};
  return [
    h("h3", {}, "Prompt"),
    (d.messages || []).map((m) => h("div", { class: `msg msg-${m.role}` }, h("b", {}, m.role), h("pre", { class: "prompt" }, m.content))),
    h("h3", {}, "Raw reply"), h("pre", { class: "prompt raw-reply" }, d.text ?? "(no reply)"),
    d.parsed != null ? [h("h3", {}, "Parsed"), h("pre", { class: "json" }, json(d.parsed))] : null,
    d.parse_error ? h("p", { class: "bad" }, `Parse error: ${d.parse_error}`) : null,
    d.error ? h("p", { class: "bad" }, `Error: ${d.error}`) : null,
    h("h3", {}, "Usage"),
    h("p", { class: "usage" }, `${usage.prompt_tokens ?? "?"} prompt tokens, ${usage.completion_tokens ?? "?"} completion tokens, ` +
      `${(d.latency || 0).toFixed(2)} s, ${d.attempts} attempt(s)${d.cached ? ", from the cache" : ""}`),
    h("details", {}, h("summary", {}, "call settings"), h("pre", { class: "json" }, json(d.config || {}))),
  ];
}

function snapshotTable(snapshot) {
  return h("table", { class: "snapshot" }, h("tbody", {}, snapshot.map((s) => h("tr", {},
    h("td", {}, String(s.term ?? "")), h("td", {}, String(s.definition ?? "")),
    h("td", {}, String((s.provenance && s.provenance.agent) || ""))))));
}

async function showBoard(upto) {
  const b = await api(`${base}/board?upto=${upto}`);
  $("#board-upto").textContent = `(up to #${upto})`;
  $("#board-empty").hidden = b.entries.length > 0;
  fill($("#board tbody"), b.entries.map((t) => h("tr", { class: "term" },
    h("td", {}, t.term), h("td", {}, t.definition), h("td", {}, `${t.coiner ?? ""} (#${t.coined})`),
    h("td", {}, t.seen_by), h("td", {}, `${t.uses}${t.users.length ? ` (${t.users.join(", ")})` : ""}`))));
  fill($("#board-steps"), b.steps.map((s) => h("li", { class: s.accepted ? "" : "muted" }, `#${s.seq} ${s.agent ?? ""} ${s.line}`)));
}

// ---------------------------------------------------------------------------------------- route
(async () => {
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts.length === 4 && parts[2] === "episodes") await showEpisode(parts[1], parts[3]);
    else if (parts.length === 2) await showRun(parts[1]);
    else await showRuns();
  } catch (err) {
    showError(err.message);
  }
})();
