"use strict";
// A room page. Every piece of text from the server or another person is put on the page as a text
// node (textContent, never as HTML), so nothing anyone types can become markup or script.

const code = decodeURIComponent(location.pathname.split("/r/")[1] || "");
const tokenKey = `lexicoord:token:${code}`;
let ws = null, state = null, you = null, stats = null, backoff = 500, closedForGood = false;

// A move made while the connection is down is not queued (the room may have moved on when it comes back): the
// person is told it was not sent, rather than the click doing nothing.
function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  else if (!closedForGood) showError("Not connected, so that was not sent: try again once the page says connected.");  // else the reason stays
}

// ------------------------------------------------------------------------------ joining and connecting
async function join(name) {
  const res = await fetch(`/api/rooms/${encodeURIComponent(code)}/join`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }),
  });
  const data = await res.json();
  if (!res.ok) { showError(data.message || "Could not join."); return; }
  localStorage.setItem(tokenKey, data.token);
  $("#join-box").hidden = true;
  connect();
}

function connect() {
  const token = localStorage.getItem(tokenKey);
  if (!token) { $("#join-box").hidden = false; return; }
  const proto = location.protocol === "https:" ? "wss" : "ws";
  ws = new WebSocket(`${proto}://${location.host}/ws/${encodeURIComponent(code)}`);
  $("#conn").textContent = "connecting";
  ws.onopen = () => { backoff = 500; send({ type: "hello", token }); };
  ws.onmessage = (ev) => receive(JSON.parse(ev.data));
  ws.onclose = (ev) => {
    $("#conn").textContent = "disconnected";
    $("#conn").className = "pill bad";
    // The server says why it closed with a code and a sentence (src/lexicoord/web/socket.py). A refusal
    // before the connection opens (a host this server does not answer to) arrives as 1006: retried.
    if (ev.code === 4401) {  // the token is no one's here (or no room has this code): join again
      localStorage.removeItem(tokenKey); $("#join-box").hidden = false; $("#room").hidden = true;
      showError(ev.reason); return;
    }
    if (ev.code === 4409) { closedForGood = true; showError(ev.reason || "This seat was opened in another page."); return; }
    if (ev.code === 4410) { closedForGood = true; localStorage.removeItem(tokenKey); showError(ev.reason || "This room has closed."); return; }
    if (ev.code === 4403) { closedForGood = true; showError(ev.reason || "This page may not connect to this server."); return; }
    if (ev.code === 4429) { showError(ev.reason || "Too many requests; wait a little."); backoff = Math.max(backoff, 5000); }
    if (closedForGood) return;
    setTimeout(connect, backoff);  // a reload or a lost connection gets the seat back with the same token
    backoff = Math.min(backoff * 2, 5000);
  };
}

function receive(msg) {
  if (msg.type === "welcome") { $("#conn").textContent = `connected as ${msg.name}`; $("#conn").className = "pill ok"; showError(""); }
  else if (msg.type === "state") { state = msg.room; you = msg.you; render(); if (!statsShown) renderStats(); }
  else if (msg.type === "stats") { stats = msg; renderStats(); }
  else if (msg.type === "error") showError(msg.message);
}

// ------------------------------------------------------------------------------------------ rendering
// A study's room (state.managed) runs on the study's schedule: nobody has a leader's controls there.
const isLeader = () => you && you.leader && !state.managed;

// Each protocol's room adapter registers how its phases, its game and its statistics look; the server
// serves its script at /adapters/<protocol>.js, loaded once the room says what it plays. This file knows
// only what every room has: people, the lead, the connection.
const adapters = {};
let adapterScript = null;
const adapter = () => adapters[state.protocol];

function loadAdapter() {
  if (adapterScript) return;
  adapterScript = document.createElement("script");
  adapterScript.src = `/adapters/${encodeURIComponent(state.protocol)}.js`;
  adapterScript.onload = () => { render(); renderStats(); };
  adapterScript.onerror = () => showError(`This page cannot show ${state.protocol} rooms.`);
  document.head.append(adapterScript);
}

function render() {
  $("#room").hidden = false;
  $("#code").textContent = state.code;
  if (adapter()) adapter().render($("#phase-box"), $("#game-box"));
  else loadAdapter();
  renderPeople();
}

let statsShown = false;  // statistics arrive after every game; the first may come before the room's state
function renderStats() {
  if (!stats || !state || !adapter()) return;
  statsShown = true;
  adapter().renderStats($("#stats-box"), $("#history-box"), `/api/rooms/${encodeURIComponent(code)}`);
}

// The leader's controls every room has. Each is kept as the same element while it reads the same (dom.js kept):
// a redraw between the press and the release of a click (someone joins, a seat moves) would otherwise lose it.
function leaderControl(id, label, message, cls) {
  return isLeader() ? kept(id, label, () => h("button", { id, class: cls, onclick: () => send(message) }, label)) : null;
}
const startButton = () => leaderControl("start", state.phase === "lobby" ? "Start the game" : "Next game", { type: "start" });
const endGameButton = () => leaderControl("end-game", "End this game", { type: "end_game" }, "secondary");

// A person whose seat a model took over (a study's dropout) is shown as such, never as having left: every
// protocol's page adds seatNote to the seat's name and says "agent" where it says who plays a seat.
const takenOver = (name) => { const p = state.people.find((q) => q.name === name); return p ? p.played_by : null; };
const seatNote = (name) => takenOver(name) ? " — now played by an agent" : "";

// Drawn again only when what it shows changes: a game's updates (many a second in play) leave the people box as it
// is. When it is drawn (someone joins, a dot turns on or off, the lead passes), its lists, each person's row, each
// button and the invite are kept elements (dom.js kept), refilled in place: a click on "make leader" as someone's
// connection flickers still lands, and the invite someone is selecting stays selected.
let peopleDrawn = null;
function renderPeople() {
  const drawn = JSON.stringify([state.code, state.people, state.leader, state.agents, state.managed, isLeader(), you && you.absent]);
  if (drawn === peopleDrawn) return;
  peopleDrawn = drawn;
  const people = kept("people:list", "ul", () => h("ul", { class: "people" }));
  fill(people, state.people.map(personRow));
  const agents = kept("people:agents", "ul", () => h("ul", { class: "people" }));
  fill(agents, state.agents.length ? state.agents.map((a) => h("li", {}, h("span", { class: "dot on" }), a.name, h("span", { class: "muted" }, ` ${a.model}`)))
    : h("li", { class: "muted" }, "none"));
  const link = `${location.origin}/r/${state.code}`;
  const invite = state.managed ? [] : [h("p", { class: "muted" }, "Invite with the link or the code:"),
    kept("people:invite", link, () => h("input", { readonly: true, value: link, id: "invite" })), h("p", {}, "Code ", h("code", {}, state.code))];
  fill($("#people-box"), h("h2", {}, "People"), people, h("h2", {}, "Agents"), agents, invite);
}

// One person's row: the same element for as long as they are in the room, its buttons kept while they are offered.
function personRow(p) {
  const row = kept(`people:row:${p.name}`, "li", () => h("li", { "data-person": p.name }));
  row.className = p.absent && !p.played_by ? "absent" : "";
  const other = isLeader() && p.name !== state.leader && !p.absent;
  const button = (what, shown, label, message, id) => kept(`people:${what}:${p.name}`, shown ? label : null,
    () => h("button", { class: "secondary small", id, onclick: () => send(message) }, label));
  fill(row, h("span", { class: p.connected ? "dot on" : "dot" }), p.name, p.name === state.leader ? " (leader)" : "",
    p.played_by ? seatNote(p.name) : p.absent ? " — left" : "",
    button("drop", other, "continue without", { type: "drop", name: p.name }),
    button("hand", other, "make leader", { type: "hand_over", name: p.name }),
    button("take", !isLeader() && !state.managed && you && !you.absent && p.name === state.leader && !p.connected,
      "take the lead", { type: "take_lead" }, "take-lead"));
  return row;
}

document.addEventListener("DOMContentLoaded", () => {  // every adapter's script has registered by now
  $("#join").addEventListener("submit", (ev) => { ev.preventDefault(); join(new FormData(ev.target).get("name")); });
  connect();
});
