"use strict";
// The person's page of a gate check (/g/ID?t=TOKEN): the instruction, the gate's question, and the person's
// answer (an option, their own words, or "Don't do it"). It speaks to /g/ID/state and /g/ID/answer with the
// link's token. Everything the server or anyone else wrote goes onto the page as text nodes (dom.js's h()),
// never as HTML.

const gateId = decodeURIComponent(location.pathname.split("/")[2] || "");
const token = new URLSearchParams(location.search).get("t") || "";
const base = `/g/${encodeURIComponent(gateId)}`;
const query = `?t=${encodeURIComponent(token)}`;
const LABELS = { ask: "Your answer is needed", pending: "Checking…", clear: "Clear", refuse: "Not to be done",
                 error: "Could not decide" };
let view = null, shown = "", sending = false, timer = null;
// What the person answered on this page: shown until the verdict lists the clarifications itself (a check still
// asking does not list the answers it already took).
const mine = [];

function message(data, status) {
  const said = data && data.detail;
  if (typeof said === "string") return said;
  if (Array.isArray(said)) return said.map((e) => String((e && e.msg) || "").replace(/^Value error, /, "")).join("; ");
  if (status === 403) return "This link is not valid: ask whoever sent it for the link again.";
  if (status === 404) return "No such check: ask whoever sent the link for a new one.";
  return `The server answered ${status}; try again.`;
}

async function call(method, path, body) {
  const res = await fetch(base + path + query, {
    method, cache: "no-store", headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  let data = {};
  try { data = await res.json(); } catch (e) { data = {}; }
  if (!res.ok) { const err = new Error(message(data, res.status)); err.status = res.status; throw err; }
  return data;
}

function when(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function said(c) {
  if (c.refused) return `${c.question} — you said not to do it`;
  return `${c.question} — ${[c.choice, c.text].filter(Boolean).join(" - ")}`;
}

function renderAsk(box) {
  const asksAgain = mine.length > 0;
  const text = h("textarea", { id: "answer-text", maxlength: "400", rows: "3",
                               placeholder: "Say what you mean in your own words" });
  fill(box,
    asksAgain ? h("p", { class: "notice", id: "asks-again" }, "Thank you. The gate asks again:") : null,
    h("p", { class: "question", id: "question" }, view.question || "What do you mean exactly?"),
    view.options.length
      ? h("div", { class: "options", id: "options" },
          view.options.map((o) => h("button", { type: "button", class: "option", onclick: () => send({ choice: o }) }, o)))
      : null,
    h("label", { for: "answer-text" }, view.options.length ? "Or answer in your own words" : "Your answer"),
    text,
    h("button", { type: "button", id: "send-text", class: "send", onclick: () => {
      const value = text.value.trim();
      if (!value) { showError("Write an answer first, or choose an option."); return; }
      send({ text: value });
    } }, "Send"),
    h("button", { type: "button", id: "refuse", class: "refuse", onclick: () => send({ refuse: true }) }, "Don't do it"),
    view.expires_at ? h("p", { class: "muted" }, `Please answer before ${when(view.expires_at)}; after that it will not be done.`) : null,
  );
}

function renderOutcome(box) {
  const s = view.status;
  const ok = s === "clear";
  const head = s === "clear" ? "Clear: it is understood as follows."
    : s === "refuse" ? "It will not be done."
    : s === "error" ? "The gate could not decide, so it will not be done."
    : "Checking your answer…";
  fill(box,
    h("p", { class: `outcome ${ok ? "ok" : s === "pending" ? "wait" : "bad"}`, id: "outcome", "data-status": s }, head),
    s === "clear" && view.interpretation ? h("p", { class: "interpretation", id: "interpretation" }, view.interpretation) : null,
    s !== "clear" && s !== "pending" && view.reason ? h("p", { class: "muted", id: "reason" }, `Why: ${view.reason}`) : null,
    s === "pending" ? null : h("p", { class: "muted" }, "You can close this page."),
  );
}

function show(next) {
  view = next;
  const history = view.answered.length ? view.answered : mine;
  const key = JSON.stringify([view.status, view.question, view.options, history.length]);
  const pill = $("#status");
  pill.textContent = LABELS[view.status] || view.status;
  pill.className = `pill ${view.status === "clear" ? "ok" : ["refuse", "error"].includes(view.status) ? "bad" : ""}`;
  $("#instruction").textContent = view.instruction;
  $("#context").textContent = view.context;
  $("#context-box").hidden = !view.context;
  $("#history-box").hidden = history.length === 0;
  fill($("#history"), history.map((c) => h("li", {}, said(c))));
  if (key !== shown) {  // a poll that finds nothing new leaves a half-written answer alone
    shown = key;
    const box = $("#stage");
    box.dataset.status = view.status;
    if (view.status === "ask") renderAsk(box); else renderOutcome(box);
  }
  clearTimeout(timer);
  if (view.status === "pending") timer = setTimeout(refresh, 1500);
  else if (view.status === "ask") timer = setTimeout(refresh, 15000);  // the question may expire meanwhile
}

async function refresh() {
  try { show(await call("GET", "/state")); }
  catch (e) { showError(e.message); if (e.status !== 403 && e.status !== 404) timer = setTimeout(refresh, 5000); }
}

async function send(body) {
  if (sending) return;
  sending = true;
  showError("");
  const buttons = [...document.querySelectorAll("#stage button")];
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const question = view.question || "";
    const next = await call("POST", "/answer", view.asked ? { ...body, question: view.asked } : body);
    mine.push({ question, choice: body.choice || null, text: body.text || null, refused: !!body.refuse });
    show(next);
  } catch (e) {
    showError(e.message);
    if (e.status === 409) { shown = ""; refresh(); }
  } finally {
    sending = false;
    buttons.forEach((b) => { b.disabled = false; });
  }
}

if (!token) { showError("This link has no token: open the whole link you were sent."); fill($("#stage")); }
else refresh();
