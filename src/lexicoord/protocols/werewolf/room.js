"use strict";
// Werewolf's part of a room page (the generic part is static/room.js, whose helpers this uses). Served at
// /adapters/werewolf.js (RoomAdapter.script). The server sends each person only what they may see: the
// game's log is in `you.game`, projected for this person; this file shows it and never asks for more.
// As in room.js, every piece of text goes on the page as text.

const WW_ACTIONS = { kill_vote: "votes to attack", protect: "protects", save: "saves", poison: "poisons",
  check: "checks", vote: "votes to exile", bid: "bids" };
const WW_YOU = { kill_vote: "vote to attack", protect: "protect", save: "save", poison: "poison", check: "check",
  vote: "vote to exile", bid: "bid" };
const WW_ASK = { kill_vote: "Vote for the player the wolves attack", protect: "Protect a player tonight",
  save: "Save the wolves' victim?", poison: "Poison a player?", check: "Check a player", vote: "Vote to exile",
  bid: "How urgently do you want to speak?" };

function wwMe() { return you && you.game ? you.game.log.find((e) => e.t === "role" && e.who === you.name) : null; }

function wwEntryText(e) {
  const who = e.who === you.name ? "You" : e.who;
  switch (e.t) {
    case "role": return e.who === you.name ? `You are the ${e.role}.${e.wolves.length ? ` The wolves: ${e.wolves.join(", ")}.` : ""}`
      : `${e.who} is the ${e.role}.`;
    case "speech": return e.failure ? `${who} is silent (${e.failure}).` : `${who}${e.channel === "wolves" ? " (wolves' channel)" : ""}: ${e.text}`;
    case "action": return `${who} ${(who === "You" ? WW_YOU : WW_ACTIONS)[e.action] || e.action} ${e.target || "nobody"}${e.failure ? ` (no valid move: ${e.failure})` : ""}`;
    case "victim": return `${who} learn${who === "You" ? "" : "s"} that the wolves attacked ${e.victim || "nobody"}.`;
    case "check": return `${who} checked ${e.target}: ${e.role || (e.wolf ? "a wolf" : "not a wolf")}.`;
    case "night": return `What happened: ${e.text}`;
    case "death": return `${e.who}${e.role ? ` (the ${e.role})` : ""} ${e.cause === "night" ? "died in the night" : "was exiled"}.`;
    case "exile": {
      const votes = Object.entries(e.tally).map(([k, v]) => `${k} ${v}`).join(", ") || "no votes";
      return `Votes: ${votes}; ${e.exiled ? `${e.exiled} is exiled` : `nobody is exiled${e.tie ? " (a tie)" : ""}`}.`;
    }
    case "over": return `Game over: ${e.winner === "draw" ? "a draw" : `the ${e.winner} win`}.`;
    default: return "";
  }
}

function wwStage(g) {
  if (!g || !g.stage) return "";
  if (g.stage === "setup") return "the deal";
  if (g.stage === "end") return "the end";
  return g.stage === "night" || g.stage === "dawn" ? `night ${g.day}` : `day ${g.day}${g.stage === "vote" ? " — the vote" : ""}`;
}

function wwWinner(w) { return w === "draw" ? "A draw (the day limit)" : `The ${w} win`; }

function wwPhase(box) {
  const p = state.phase, leader = isLeader(), g = state.game;
  const notice = state.notice ? h("p", { class: "notice" }, state.notice) : null;
  if (p === "lobby" || p === "over") {
    const head = p === "lobby" ? h("h2", {}, "Lobby") : h("h2", {}, `Game ${state.games} is over`);
    const waiting = h("p", { class: "muted" }, leader ? (p === "lobby" ? "Start when everyone is here." : "Start the next game when everyone is ready.") : `Waiting for ${state.leader || "the leader"} to start.`);
    const rules = state.settings;
    const table = h("p", { class: "muted", id: "ww-rules" }, `Werewolves ${rules.wolves}, seers ${rules.seers}, witches ${rules.witches}, guards ${rules.guards}; at most ${rules.max_days} day(s); ${rules.condition}.`);
    fill(box, head, notice, table, waiting, startButton());
    return;
  }
  const me = wwMe();
  let seat;
  if (you.seated && me) seat = h("p", { id: "ww-seat" }, h("strong", {}, `You are the ${me.role}.`), me.wolves.length ? ` The wolves: ${me.wolves.join(", ")}.` : "");
  else if (g && g.dead[you.name]) seat = h("p", { id: "ww-seat", class: "notice" }, "You are out of the game: you watch, and see public events only until it ends.");
  else seat = h("p", { id: "ww-seat", class: "notice" }, "You are watching: public events only until the game ends, then everything.");
  fill(box, h("h2", {}, `Game ${g ? g.number : state.games}`, h("span", { class: "muted" }, ` — ${wwStage(g)}`)), notice, seat,
    endGameButton());
}

function wwRequest() {
  const req = you.request;
  // Kept across updates (dom.js kept) until the seat is asked something new: a new entry in its log is a new turn.
  const key = req && you.game ? `${state.game.number}:${req.kind}:${req.round}:${req.channel}:${you.game.log.length}` : null;
  return kept("ww-request", key, () => {
    let node;
    if (req.kind === "speak") {
      const area = h("textarea", { id: "ww-speech", maxlength: "600", rows: "3", placeholder: req.channel === "wolves" ? "Only the wolves hear this" : "Everyone hears this" });
      node = h("div", { class: "request", id: "ww-request", "data-kind": req.kind }, h("h3", {}, req.channel === "wolves" ? "Talk with the other wolves" : "Your turn to speak"),
        h("p", { class: "muted" }, req.task || ""), area,
        h("button", { id: "ww-speak", onclick: () => send({ type: "speak", round: req.round, text: area.value }) }, "Speak"),
        h("button", { class: "secondary", id: "ww-silent", onclick: () => send({ type: "speak", round: req.round, text: "" }) }, "Say nothing"));
    } else {
      const options = (req.choices || []).map((c, i) => h("label", { class: "option-label", for: `ww-opt-${i}` },
        h("input", { type: "radio", name: "ww-target", value: c, id: `ww-opt-${i}` }), " ", c));
      node = h("div", { class: "request", id: "ww-request", "data-kind": req.kind }, h("h3", {}, WW_ASK[req.kind] || req.kind), h("p", { class: "muted" }, req.task || ""), options,
        h("button", { id: "ww-act", onclick: () => {
          const picked = node.querySelector("input[name=ww-target]:checked");
          if (!picked) { showError("Pick one first."); return; }
          showError("");
          send({ type: "act", round: req.round, action: req.kind, target: picked.value });
        } }, "Submit"));
    }
    return node;
  });
}

function wwGame(box) {
  const g = state.game;
  if (!g || !you.game) { box.hidden = true; return; }
  box.hidden = false;
  const moving = Object.fromEntries(you.game.moving.map((m) => [m.who, m]));
  const rows = g.players.map((p) => {
    const dead = g.dead[p.name];
    const status = dead ? `${dead.cause === "night" ? "died in the night" : "exiled"}${dead.role ? ` (the ${dead.role})` : ""}`
      : moving[p.name] ? `${moving[p.name].kind === "speak" ? "speaking" : WW_ASK[moving[p.name].kind] ? "choosing" : "thinking"}…` : "";
    return h("tr", { "data-player": p.name, class: dead ? "absent" : "" }, h("td", {}, p.name, p.name === you.name ? " (you)" : "", seatNote(p.name)),
      h("td", { class: "muted" }, p.kind === "llm" ? p.model : takenOver(p.name) ? "agent" : "person"), h("td", { class: "status" }, status));
  });
  const pools = you.game.pools.length ? h("div", { id: "ww-pools" }, h("h3", {}, "Terms"), h("ul", {}, you.game.pools.map((t) =>
    h("li", {}, h("strong", {}, t.term), ` = ${t.definition}`, h("span", { class: "muted" }, ` (coined by ${t.coiner}; known to ${t.pool})`))))) : null;
  const log = h("ol", { id: "ww-log" }, you.game.log.map((e) => h("li", { class: e.public ? "" : "clarification", "data-t": e.t },
    h("span", { class: "muted" }, `${e.when}${e.public ? "" : ` · to ${e.to}`} · `), wwEntryText(e))));
  const outcome = g.winner ? h("p", { class: "outcome ok", id: "ww-outcome" }, `${wwWinner(g.winner)}.`) : null;
  fill(box, outcome, h("table", { id: "ww-players" }, h("tbody", {}, rows)), wwRequest(), pools, h("h3", {}, "What you have seen"), log);
}

function wwStats(statsBox, historyBox, base) {
  const w = stats.wins || {};
  fill(statsBox, h("h2", {}, "Statistics"),
    h("p", { id: "ww-wins" }, `villagers ${w.villagers || 0} · wolves ${w.wolves || 0} · draws ${w.draw || 0} — of ${stats.games} games`),
    h("p", {}, h("a", { href: `${base}/export.json`, download: "" }, "export JSON"), " · ", h("a", { href: `${base}/export.csv`, download: "" }, "export CSV")));
  fill(historyBox, h("h2", {}, "History"), stats.history.length ? stats.history.map((g) => h("details", {},
    h("summary", {}, `Game ${g.number}: ${g.winner ? wwWinner(g.winner) : g.status}, after ${g.days || 0} day(s)`),
    h("ul", {}, Object.entries(g.roles).map(([p, r]) => {
      const d = g.deaths.find((x) => x.player === p);
      return h("li", {}, `${p}: ${r}`, d ? h("span", { class: "muted" }, ` — ${d.cause === "night" ? "died in night" : "exiled on day"} ${d.day}`) : "");
    })))) : h("p", { class: "muted" }, "Finished games appear here."));
}

adapters.werewolf = {
  render(phaseBox, gameBox) { wwPhase(phaseBox); wwGame(gameBox); },
  renderStats: wwStats,
};
