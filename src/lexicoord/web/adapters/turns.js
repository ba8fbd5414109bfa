"use strict";
// Rooms played in written turns (the leader-follower debate, COGENT): the task, who is thinking, your own
// transcript (only lines your seat may read, as the server sent them), and the request you are asked,
// as a form drawn from its answer schema. Uses room.js's helpers; every text goes on the page as text.

function turnPhase(box) {
  const p = state.phase, leader = isLeader();
  const notice = state.notice ? h("p", { class: "notice" }, state.notice) : null;
  if (p === "lobby" || p === "over") {
    const head = h("h2", {}, p === "lobby" ? "Lobby" : `Game ${state.games} is over`);
    const waiting = h("p", { class: "muted" }, leader ? "Start when everyone is here." : `Waiting for ${state.leader || "the leader"} to start.`);
    return fill(box, head, notice, waiting, startButton());
  }
  fill(box, h("h2", {}, `Game ${state.game ? state.game.number : ""}`), notice,
    endGameButton());
}

function taskNode(item) {
  if (!item) return null;
  return h("div", { class: "task" }, Object.entries(item).map(([k, v]) => h("div", {}, h("h3", {}, k), h("pre", { class: "task-text" }, String(v)))));
}

// The form is kept (dom.js kept) while the request is the same one, so other seats' moves redrawing the game leave
// what the person typed, their caret and their click alone; the values are read from the form when it is sent.
function requestNode(req) {
  const key = req ? JSON.stringify([state.game ? state.game.number : 0, req]) : null;
  return kept("turn-request", key, () => {
    const read = new Map();  // each field's name -> what it holds now
    const inputs = req.fields.map((f) => {
      if (f.kind === "choice") {
        const radios = f.choices.map((c, i) => h("input", { type: "radio", name: `field-${f.name}`, id: `field-${f.name}-${i}` }));
        read.set(f.name, () => { const i = radios.findIndex((r) => r.checked); return i < 0 ? undefined : f.choices[i]; });
        return h("div", { class: "choice", "data-field": f.name }, h("strong", {}, f.name, ": "), f.choices.map((c, i) =>
          h("label", { class: "option-label", for: `field-${f.name}-${i}` }, radios[i], " ", String(c))));
      }
      const area = h("textarea", { id: `field-${f.name}`, rows: f.max_length > 300 ? "6" : "2", maxlength: String(f.max_length), placeholder: f.name });
      read.set(f.name, () => area.value);
      return h("label", {}, f.name, area);
    });
    const submit = () => {
      const value = {};
      for (const [name, now] of read) if (now() !== undefined) value[name] = now();
      showError("");
      send({ type: "reply", kind: req.kind, round: req.round, value });
    };
    return h("div", { class: "request", id: "request" }, h("h3", {}, `You are asked to ${req.kind}`),
      h("details", { open: true }, h("summary", {}, "what you are asked (as a model would read it)"), h("pre", { class: "prompt", id: "request-prompt" }, req.prompt)),
      inputs, h("button", { id: "submit-reply", onclick: submit }, "Send"),
      req.actions.map((a) => h("button", { class: "secondary", onclick: () => send({ type: "reply", kind: req.kind, round: req.round, action: a }) }, a)));
  });
}

function transcriptNode(lines) {
  return h("ol", { class: "transcript", id: "transcript" }, lines.map((l) => h("li", {},
    l.round != null ? h("span", { class: "muted" }, `r${l.round} `) : null, l.text,
    h("span", { class: "audience muted" }, ` (${l.to})`))));
}

function turnGame(box) {
  const g = state.game, a = adapter();
  if (!g) { box.hidden = true; return; }
  box.hidden = false;
  const statusRows = g.players.map((p) => { const st = g.status[p.name] || {};
    return h("tr", { "data-player": p.name }, h("td", {}, p.name, p.role ? ` (${p.role})` : "", seatNote(p.name)), h("td", { class: "muted" }, p.kind === "llm" ? p.model : takenOver(p.name) ? "agent" : "person"),
      h("td", { class: "status" }, st.state === "thinking" ? `thinking (${st.kind})…` : st.state === "failed" ? `no valid move (${st.detail || "failed"})` : st.state || "")); });
  const lines = you && you.transcript ? you.transcript : state.spectators;
  fill(box, a.task(g.item), a.extra(g), h("table", { class: "status-table" }, h("tbody", {}, statusRows)),
    requestNode(you ? you.request : null),
    g.error ? h("p", { class: "outcome bad" }, `The game failed: ${g.error}`) : null,
    h("h3", {}, "What you have seen"), transcriptNode(lines));
}

function turnStats(statsBox, historyBox, base) {
  fill(statsBox, h("h2", {}, "Games"), h("p", { id: "winloss" }, `${stats.done} played, ${stats.failed} failed, of ${stats.games} games`),
    h("p", {}, h("a", { href: `${base}/export.json`, download: "" }, "export JSON"), " · ", h("a", { href: `${base}/export.csv`, download: "" }, "export CSV")));
  fill(historyBox, h("h2", {}, "History"), stats.history.length
    ? h("ul", { id: "history" }, stats.history.map((g) => h("li", { class: "outcome" }, `Game ${g.number} (${g.item}): ${g.outcome}`)))
    : h("p", { class: "muted" }, "Finished games appear here."));
}

// Served for every protocol played in turns: it draws the protocol the room plays (loaded once that is known).
// A room's own part, served after this one (RoomAdapter.scripts), may replace what it draws of a game: `task`
// (the item, as the room's item_view gave it) and `extra` (anything more, above the seats; nothing by default).
adapters[state.protocol] = {
  render(phaseBox, gameBox) { turnPhase(phaseBox); turnGame(gameBox); }, renderStats: turnStats,
  task: taskNode, extra: () => null,
};
