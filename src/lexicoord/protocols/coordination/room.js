"use strict";
// The coordination game's part of a room page (the generic part is static/room.js, whose helpers this
// uses): its phases, the game, the request form, and the statistics. Served at /adapters/coordination.js
// (RoomAdapter.script). As in room.js, every piece of text goes on the page as text.

const draft = { sentence: "", options: null, optionsKey: null };  // the manual mode's sentence and meanings, across redraws

function sentenceNode(item) {
  const [a, b] = item.span;
  return h("p", { class: "sentence" }, item.sentence.slice(0, a), h("mark", {}, item.sentence.slice(a, b)), item.sentence.slice(b));
}
function renderPhase(box) {
  const p = state.phase, leader = isLeader();
  const notice = state.notice ? h("p", { class: "notice" }, state.notice) : null;
  if (p === "lobby" || p === "over") {
    const head = p === "lobby" ? h("h2", {}, "Lobby") : h("h2", {}, `Game ${state.games} is over`);
    const waiting = h("p", { class: "muted" }, leader ? (p === "lobby" ? "Start when everyone is here." : "Start the next game when everyone is ready.") : `Waiting for ${state.leader || "the leader"} to start.`);
    fill(box, head, notice, waiting, startButton());
  } else if (p === "sentence") {
    if (!leader) return fill(box, h("h2", {}, "Manual mode"), h("p", { class: "muted" }, `${state.leader} is writing a sentence…`));
    return fill(box, kept("manual-sentence", `sentence:${state.games}`, sentenceForm));
  } else if (p === "proposing") {
    renderProposing(box, leader);
    return;
  } else if (p === "confirm") {
    renderConfirm(box);
    return;
  } else if (p === "playing") {
    const g = state.game;
    fill(box, h("h2", {}, `Game ${g.number}`, h("span", { class: "muted" }, g.stage === "announce" ? " — the leader announces" : ` — round ${g.round}`)), notice,
      endGameButton());
  }
}

// The manual mode's forms are kept elements (dom.js kept), each while what it answers stays the same: a redraw (a
// proposal arrives, someone joins) leaves the leader's typing, caret and click where they are.
function sentenceForm() {
  const words = h("div", { class: "words", id: "words" });
  const area = h("textarea", { id: "sentence", maxlength: "400", rows: "2", placeholder: "A sentence with an ambiguous word" });
  area.value = draft.sentence;
  const showWords = () => {
    draft.sentence = area.value;
    fill(words, area.value.split(/\s+/).filter(Boolean).map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "")).filter(Boolean)
      .map((w) => h("button", { type: "button", class: "word", onclick: () => send({ type: "manual_sentence", sentence: area.value, word: w }) }, w)));
  };
  area.addEventListener("input", showWords);
  showWords();
  return h("div", {}, h("h2", {}, "Your sentence"), area, h("p", { class: "muted" }, "Then click the ambiguous word in it:"), words,
    h("button", { class: "secondary", onclick: () => send({ type: "end_game" }) }, "Cancel"));
}

function sentenceLine(manual) {
  if (!manual) return null;
  const i = manual.sentence.toLowerCase().indexOf(manual.word.toLowerCase());
  return sentenceNode({ sentence: manual.sentence, span: i >= 0 ? [i, i + manual.word.length] : [0, 0] });
}

function renderProposing(box, leader) {
  // Every player proposes, people too; nobody sees a proposal until all are in.
  const m = state.manual;
  const waitingFor = [...m.awaiting, ...(m.agents_done ? [] : ["the agents"])];
  const waiting = h("p", { class: "muted", id: "proposal-waiting" }, waitingFor.length ? `Waiting for proposals from ${waitingFor.join(", ")}…` : "");
  const close = kept("close-proposals", leader && m.agents_done && m.awaiting.length ? "Stop waiting" : null,
    () => h("button", { class: "secondary", id: "close-proposals", onclick: () => send({ type: "close_proposals" }) }, "Stop waiting"));
  const request = you.request && you.request.kind === "propose" ? you.request : null;
  // Keyed by the sentence and its word too: every proposal request reads the same, and the game's number stays
  // while manual mode runs, so a new manual game after a cancel gets a new form.
  const key = request && JSON.stringify([state.games, m.sentence, m.word, request]);
  const form = kept("manual-propose", key, () => proposalForm(m));
  if (!form) return fill(box, h("h2", {}, "Proposing meanings"), sentenceLine(m), waiting, close);
  const status = kept("manual-propose-status", key, () => h("div", { id: "proposal-status" }));
  fill(status, waiting, close);  // refilled in place: "Stop waiting" stays where the leader's pointer is
  fill(box, form, status);
}

function proposalForm(m) {
  const meaning = h("input", { id: "proposal-meaning", maxlength: "80", placeholder: "What the word means here (a short gloss)" });
  const why = h("input", { id: "proposal-why", maxlength: "160", placeholder: "Why? (one sentence, at most 160 characters)" });
  return h("div", {}, h("h2", {}, "Propose a meaning"), sentenceLine(m), meaning, why,
    h("button", { id: "submit-proposal", onclick: () => { if (!meaning.value.trim() || !why.value.trim()) { showError("Give a meaning and say why."); return; } showError(""); send({ type: "propose", meaning: meaning.value, justification: why.value }); } }, "Propose"));
}

function renderConfirm(box) {
  const m = state.manual;
  const proposals = h("ul", {}, m.proposals.map((o) => h("li", {}, h("strong", {}, o.text), ` — ${o.proposers.join(", ")}: `, h("em", {}, o.justifications.join(" / ")))));
  const silent = m.silent.length ? h("p", { class: "muted" }, `No usable proposal from ${m.silent.join(", ")}.`) : null;
  if (!isLeader()) return fill(box, h("h2", {}, "Proposed meanings"), sentenceLine(m), proposals, silent, h("p", { class: "muted" }, `${state.leader} is confirming the options…`));
  fill(box, h("h2", {}, "Confirm the meanings"), sentenceLine(m), proposals, silent,
    kept("manual-confirm", JSON.stringify([state.games, m.sentence, m.word]), () => confirmForm(m)));
}

function confirmForm(m) {
  if (draft.optionsKey !== m.sentence + "|" + m.word) { draft.options = [...m.options]; draft.optionsKey = m.sentence + "|" + m.word; }
  const list = h("div", { id: "options" });
  const redraw = () => fill(list, draft.options.map((o, i) => {
    const input = h("input", { class: "option", maxlength: "80", value: o });
    input.addEventListener("input", () => { draft.options[i] = input.value; });
    return h("div", { class: "agent" }, input, h("button", { type: "button", class: "secondary small", onclick: () => { draft.options.splice(i, 1); redraw(); } }, "remove"));
  }));
  redraw();
  const add = h("input", { id: "new-option", maxlength: "80", placeholder: "another meaning" });
  return h("div", {}, list,
    h("div", { class: "agent" }, add, h("button", { type: "button", class: "secondary small", id: "add-option", onclick: () => { if (add.value.trim()) { draft.options.push(add.value.trim()); add.value = ""; redraw(); } } }, "add")),
    h("button", { id: "confirm", onclick: () => send({ type: "manual_confirm", options: draft.options.map((o) => o.trim()).filter(Boolean) }) }, "Play with these meanings"),
    h("button", { class: "secondary", onclick: () => send({ type: "end_game" }) }, "Cancel"));
}

const REASONS = { leader_ended: "the leader ended the game", bound: "clarification bound reached", abandoned: "fewer than two players were left" };

function statusText(st) {
  if (!st) return "—";
  if (st.state === "thinking") {
    const left = st.deadline ? Math.max(0, Math.round(st.deadline - Date.now() / 1000)) : null;
    return left == null ? "thinking…" : `thinking… ${left} s left`;
  }
  if (st.state === "failed") return `no valid move (${st.detail || "failed"})`;
  return st.state === "spoke" ? "done" : "has chosen ✓";
}

function renderGame(box) {
  const g = state.game;
  if (!g || !["playing", "over"].includes(state.phase)) { box.hidden = true; return; }
  box.hidden = false;
  const statusRows = g.players.map((p) => h("tr", { "data-player": p.name }, h("td", {}, p.name, p.name === state.leader ? " (leader)" : "", seatNote(p.name)),
    h("td", { class: "muted" }, p.kind === "llm" ? p.model : takenOver(p.name) ? "agent" : "person"), h("td", { class: "status" }, g.stage === "over" ? "" : statusText(g.status[p.name]))));
  const announce = g.announcement ? h("p", {}, h("strong", {}, `${g.announcement.agent} (leader) announced: `),
    g.announcement.choice || "(no valid announcement)", g.announcement.justification ? h("em", {}, ` — ${g.announcement.justification}`) : null) : null;
  const rounds = g.rounds.map((r) => h("div", { class: "round" },
    r.clarification ? h("p", { class: "clarification" }, `Leader's clarification: `, h("em", {}, r.clarification)) : null,
    h("h3", {}, `Round ${r.round}`, r.converged ? " — converged" : ""),
    h("table", {}, h("tbody", {}, Object.entries(r.decisions).map(([name, d]) => h("tr", {}, h("td", {}, name),
      h("td", { class: d.choice ? "" : "bad" }, d.choice || `no valid move: ${d.failure || ""}`), h("td", {}, h("em", {}, d.justification))))))));
  let outcome = null;
  if (g.outcome) {
    const o = g.outcome;
    outcome = h("p", { class: o.converged ? "outcome ok" : "outcome bad", id: "outcome" }, o.converged
      ? `Converged on “${o.interpretation}” after ${o.depth} clarification round${o.depth === 1 ? "" : "s"}.`
      : `No convergence (${REASONS[o.reason] || o.reason}).`);
  } else if (g.error) outcome = h("p", { class: "outcome bad" }, `The game failed: ${g.error}`);
  const form = requestForm(g);
  fill(box, sentenceNode(g.item), announce, h("table", { class: "status-table" }, h("tbody", {}, statusRows)), form, rounds, outcome);
}

// Built once per request and kept across updates (dom.js kept): another seat's move redraws the game around the form,
// never the form, so the person's typing, caret and click are not lost. Its values are read when it is sent.
function requestForm(g) {
  const req = you.request;
  return kept("coordination-request", req ? JSON.stringify([g.number, req, g.item.options]) : null, () => buildRequestForm(g, req));
}

function buildRequestForm(g, req) {
  if (req.kind === "clarify") {
    const area = h("textarea", { id: "statement", maxlength: "400", rows: "2", placeholder: "Say what you mean by the word (optional)" });
    return h("div", { class: "request" }, h("h3", {}, "No agreement yet: clarify for the next round?"), area,
      h("button", { id: "send-clarification", onclick: () => send({ type: "clarify", round: req.round, statement: area.value }) }, "Send clarification"),
      h("button", { class: "secondary", id: "no-clarification", onclick: () => send({ type: "clarify", round: req.round, statement: "" }) }, "Go on without one"),
      h("button", { class: "secondary", onclick: () => send({ type: "end_game" }) }, "End this game"));
  }
  const radios = g.item.options.map((o, i) => h("input", { type: "radio", name: "choice", value: o, id: `opt-${i}` }));
  const options = g.item.options.map((o, i) => h("label", { class: "option-label", for: `opt-${i}` }, radios[i], " ", o));
  const why = h("input", { id: "justification", maxlength: "160", placeholder: "Why? (one sentence, at most 160 characters)" });
  const title = req.kind === "announce" ? "Announce your meaning of the word" : `Round ${req.round}: your choice`;
  const submit = () => {
    const i = radios.findIndex((r) => r.checked);
    if (i < 0) { showError("Pick a meaning first."); return; }
    if (!why.value.trim()) { showError("Say why, in one sentence."); return; }
    showError("");
    send({ type: "choose", round: req.round, choice: g.item.options[i], justification: why.value });
  };
  return h("div", { class: "request" }, h("h3", {}, title), options, why, h("button", { id: "submit-choice", onclick: submit }, "Submit"));
}

function depthChart(depth, lost) {
  const bars = [...Object.entries(depth).map(([k, v]) => [`depth ${k}`, v]), ["failed", lost]];
  const max = Math.max(1, ...bars.map(([, v]) => v));
  const w = 60, hgt = 120;
  const chart = svg("svg", { viewBox: `0 -12 ${bars.length * w + 10} ${hgt + 52}`, role: "img", "aria-label": "clarification depth distribution", id: "depth-chart" });
  bars.forEach(([label, v], i) => {
    const bh = (v / max) * hgt;
    chart.append(svg("rect", { x: i * w + 10, y: hgt - bh + 10, width: w - 16, height: bh, class: label === "failed" ? "bar bad" : "bar" }));
    chart.append(svg("text", { x: i * w + 10 + (w - 16) / 2, y: hgt - bh + 6, "text-anchor": "middle" }, String(v)));
    chart.append(svg("text", { x: i * w + 10 + (w - 16) / 2, y: hgt + 28, "text-anchor": "middle" }, label));
  });
  return chart;
}

function renderCoordinationStats(statsBox, historyBox, base) {
  fill(statsBox, h("h2", {}, "Statistics"),
    h("p", { id: "winloss" }, h("strong", {}, `${stats.won} won`), " · ", h("strong", {}, `${stats.lost} lost`), ` of ${stats.games} games`),
    stats.games ? depthChart(stats.depth, stats.lost) : h("p", { class: "muted" }, "No game finished yet."),
    h("table", {}, h("tbody", {}, stats.summary.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, v))))),
    h("p", {}, h("a", { href: `${base}/export.json`, download: "" }, "export JSON"), " · ", h("a", { href: `${base}/export.csv`, download: "" }, "export CSV")));
  fill(historyBox, h("h2", {}, "History"), stats.history.length ? stats.history.map((g) => h("details", {},
    h("summary", {}, `Game ${g.number}: `, h("mark", {}, g.word || ""), ` — ${g.converged ? `resolved: “${g.interpretation}” at depth ${g.depth}` : `unresolved (${g.reason || g.status})`}`),
    h("p", {}, g.sentence || ""),
    g.announcement ? h("p", {}, `${g.announcement.agent} announced: ${g.announcement.choice || "(none)"} — `, h("em", {}, g.announcement.justification)) : null,
    g.rounds.map((r) => h("div", {}, r.clarification ? h("p", { class: "clarification" }, "Clarification: ", h("em", {}, r.clarification)) : null,
      h("p", {}, h("strong", {}, `Round ${r.round}`)), h("ul", {}, r.decisions.map((d) => h("li", {}, `${d.agent}: ${d.choice || "no valid move"} — `, h("em", {}, d.justification || d.failure || "")))))))) : h("p", { class: "muted" }, "Finished games appear here."));
}

adapters.coordination = {
  render(phaseBox, gameBox) { renderPhase(phaseBox); renderGame(gameBox); },
  renderStats: renderCoordinationStats,
};

setInterval(() => {  // count down the time left for moves in progress
  if (!state || !state.game || state.phase !== "playing") return;
  for (const row of document.querySelectorAll("tr[data-player]")) {
    const cell = row.querySelector(".status");
    if (cell) cell.textContent = statusText(state.game.status[row.dataset.player]);
  }
}, 1000);

