"use strict";
// A participant's page. The server decides every stage; this page shows the one it is told and answers it,
// naming the stage it answers. Text from the study file's Markdown arrives as HTML the server rendered with
// raw HTML escaped; everything else is put on the page as text nodes.

const sid = decodeURIComponent(location.pathname.split("/")[2] || "");
const params = new URLSearchParams(location.search);
const pid = params.get("PROLIFIC_PID") || params.get("pid") || "";
const tokenKey = `lexicoord:study:${sid}:${pid}`;
const api = `/api/studies/${encodeURIComponent(sid)}`;
let pages = null, view = null, polling = null;

function headers() {
  const out = { "Content-Type": "application/json", "X-Participant": pid };
  const token = localStorage.getItem(tokenKey);
  if (token) out.Authorization = `Bearer ${token}`;
  return out;
}
async function call(method, path, body) {
  const res = await fetch(`${api}${path}`, { method, headers: headers(), body: body ? JSON.stringify(body) : undefined });
  let data = {};
  try { data = await res.json(); } catch (e) { data = { message: `The server answered ${res.status}.` }; }
  if (!res.ok) { const err = new Error(data.message || "Something went wrong."); err.status = res.status; err.data = data; throw err; }
  return data;
}
function markdown(html) { const div = h("div", { class: "markdown" }); div.innerHTML = html; return div; }

async function start() {
  if (!pid) { showError("This link has no participant id; open the study from the link you were given."); fill($("#stage")); return; }
  $("#who").textContent = pid;
  try {
    pages = await call("GET", "/pages");
    $("#title").textContent = pages.title; document.title = pages.title;
    const entered = await call("POST", "/enter", { pid, study_id: params.get("STUDY_ID"), session_id: params.get("SESSION_ID") });
    if (entered.token) localStorage.setItem(tokenKey, entered.token);
    show(entered.view);
  } catch (e) { showError(e.message); fill($("#stage")); }
}

async function answer(body) {
  showError("");
  try {
    const told = await call("POST", "/answer", { stage: view.stage, ...body });
    show(told.view, told);
  } catch (e) { showError(e.message); if (e.status === 409) refresh(); }
}
async function refresh() { try { show(await call("GET", "/me")); } catch (e) { showError(e.message); } }

function show(next, told) {  // what it renders, once rendered (a game's frame needs its seat first)
  const changed = !view || view.stage !== next.stage;
  view = next;
  const box = $("#stage");
  box.dataset.stage = view.stage;
  let rendered = null;
  if (view.stage === "consent") renderConsent(box);
  else if (view.stage === "instructions") renderInstructions(box);
  else if (view.stage === "quiz") renderQuiz(box, told);
  else if (view.stage === "lobby") renderLobby(box);
  else if (view.stage === "game") { if (changed || !box.querySelector("iframe")) rendered = renderGame(box); }
  else if (view.stage === "survey") { if (changed) renderSurvey(box); }
  else if (view.stage === "done") renderDone(box);
  if (view.stage === "lobby" || view.stage === "game") wait(view.stage);
  return rendered;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let lost = false;

async function wait(stage) {  // one poll loop at a time: it follows the participant until they are elsewhere
  if (polling === stage) return;
  polling = stage;
  let delay = 1000;
  while (polling === stage && view.stage === stage) {
    // The long poll answers when the participant is elsewhere, or (ready=0) when the game this page waits
    // for is ready, at once if it already is. After a lost connection the page asks at once, to say as soon
    // as it is back.
    const preparing = stage === "game" && !$("#stage iframe");
    try {
      const next = await call("GET", lost ? "/me" : `/me?stage=${stage}${preparing ? "&ready=0" : ""}`);
      if (lost) { lost = false; showError(""); }
      delay = 1000;
      if (next.stage !== stage || stage === "lobby" || (stage === "game" && next.ready && !$("#stage iframe"))) await show(next);
    } catch (e) {
      if (e.status === 401 || e.status === 403) { showError(e.message); break; }
      // The server is restarting, or the network is gone for a moment: keep trying, a little less often.
      lost = true;
      showError(e.status ? e.message : "The connection to the server was lost; trying again…");
      await sleep(delay);
      delay = Math.min(delay * 2, 5000);
    }
  }
  if (polling === stage) polling = null;
}

function renderConsent(box) {
  fill(box, h("h2", {}, "Consent"), markdown(pages.consent),
    h("p", {}, h("button", { id: "agree", onclick: () => answer({ agree: true }) }, "I agree to take part"), " ",
      h("button", { id: "decline", class: "secondary", onclick: () => answer({ agree: false }) }, "I do not agree")));
}
function renderInstructions(box) {
  fill(box, h("h2", {}, "Instructions"), markdown(pages.instructions),
    h("button", { id: "continue", onclick: () => answer({}) }, "Continue"));
}
function renderQuiz(box, told) {
  const wrong = new Set(view.wrong || []);
  const form = h("form", { id: "quiz" }, pages.quiz.map((q) => h("fieldset", { class: wrong.has(q.id) ? "question wrong" : "question", "data-question": q.id },
    h("legend", {}, q.text), h("div", { class: "options" }, q.options.map((o) => h("label", {}, h("input", { type: "radio", name: q.id, value: o, required: true }), o))))),
    h("button", { type: "submit", id: "submit-quiz" }, "Check my answers"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const data = new FormData(form), answers = {};
    for (const q of pages.quiz) answers[q.id] = data.get(q.id);
    answer({ answers });
  });
  const note = wrong.size ? h("p", { class: "error" }, "Some answers were not right; the marked questions need another look.") : null;
  const left = view.attempts_left ?? pages.attempts;
  fill(box, h("h2", {}, "A few questions"), h("p", { class: "muted" }, "Check that the instructions are clear."), note,
    h("p", { id: "quiz-attempts" }, attemptsLeft(left), left === 1 ? " (this is the last)" : ""), form);
}
const attemptsLeft = (n) => `${n} ${n === 1 ? "attempt" : "attempts"} left`;
function renderLobby(box) {
  fill(box, h("h2", {}, "Waiting for other participants"),
    h("p", { id: "lobby-status" }, `You are number ${view.place || "?"} of ${view.waiting} waiting; a game needs ${view.needed}.`),
    h("p", { class: "muted" }, `The game starts as soon as a group is complete (at most about ${view.timeout < 90 ? `${Math.round(view.timeout)} seconds` : `${Math.round(view.timeout / 60)} minutes`}). Keep this page open.`));
}
let seating = null;
function renderGame(box) {  // one seat request at a time: each one gives the seat a new token
  if (!view.ready) { fill(box, h("h2", {}, "Your game"), h("p", { class: "muted" }, "Your game is being prepared…")); return null; }
  if (!seating) seating = takeSeat(box).finally(() => { seating = null; });
  return seating;
}
async function takeSeat(box) {
  try {
    const seat = await call("POST", "/play");
    localStorage.setItem(`lexicoord:token:${seat.room}`, seat.token);
    fill(box, h("h2", {}, `Your game — you are ${view.seat}`),
      h("p", { class: "muted" }, `Play ${view.games} game(s); this page moves on by itself when they are done.`),
      view.brief ? h("div", { id: "brief" }, markdown(view.brief)) : null,
      h("iframe", { class: "game", src: seat.path, title: "Your game", id: "game-frame" }));
  } catch (e) { showError(e.message); }
}
function renderSurvey(box) {
  const form = h("form", { id: "survey" }, pages.survey.map((q) => h("fieldset", { class: "question", "data-question": q.id },
    h("legend", {}, q.text, q.required ? " *" : ""), field(q))), h("button", { type: "submit", id: "submit-survey" }, "Submit"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const data = new FormData(form), answers = {};
    for (const q of pages.survey) {
      const v = data.get(q.id);
      if (v === null || v === "") continue;
      answers[q.id] = q.kind === "likert" ? Number(v) : String(v);
    }
    answer({ answers });
  });
  fill(box, h("h2", {}, "A few last questions"), form);
}
function field(q) {
  if (q.kind === "text") return h("textarea", { name: q.id, maxlength: q.max_length, required: q.required });
  if (q.kind === "choice") return h("div", { class: "options" }, q.options.map((o) => h("label", {}, h("input", { type: "radio", name: q.id, value: o, required: q.required }), o)));
  const points = Array.from({ length: q.scale }, (_, i) => i + 1);
  return h("div", { class: "scale" }, h("span", { class: "muted" }, q.labels[0]),
    points.map((n) => h("label", {}, h("input", { type: "radio", name: q.id, value: n, required: q.required }), n)), h("span", { class: "muted" }, q.labels[1]));
}
// The code and the address are each one unbroken line (scrolled sideways if the page is narrow), so a copy
// of either is whole: a line broken by the page could lose or add characters when copied.
function renderDone(box) {
  fill(box, h("h2", {}, "Thank you"), h("p", { id: "done-message" }, view.message),
    h("p", {}, "Your completion code:"), h("div", { class: "code", id: "code" }, view.code),
    view.redirect ? [h("p", {}, h("a", { href: view.redirect, id: "redirect", class: "button" }, "Return to the recruitment site")),
      h("p", { class: "muted" }, "If the button does not work, copy this address into your browser:"),
      h("div", { class: "address", id: "redirect-address" }, view.redirect)] : null);
}

document.addEventListener("DOMContentLoaded", start);
