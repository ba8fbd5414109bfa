"use strict";
// The experimenter's dashboard. The key comes from the address's fragment (#key=...), which browsers never
// send to the server, and goes with every call as X-Admin-Key. Everything participants wrote is shown as text.

const sid = decodeURIComponent(location.pathname.split("/")[2] || "");
const api = `/api/studies/${encodeURIComponent(sid)}/admin`;
let key = new URLSearchParams(location.hash.slice(1)).get("key") || sessionStorage.getItem(`lexicoord:admin:${sid}`) || "";
let state = null;

function table(head, rows) {
  if (!rows.length) return h("p", { class: "muted" }, "none");
  return h("table", { class: "admin" }, h("tr", {}, head.map((c) => h("th", {}, c))), rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c == null ? "" : c)))));
}
async function call(method, path, body) {
  const res = await fetch(`${api}${path}`, { method, headers: { "X-Admin-Key": key, "Content-Type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
  if (!res.ok) { let m = `The server answered ${res.status}.`; try { m = (await res.json()).message || m; } catch (e) {} const err = new Error(m); err.status = res.status; throw err; }
  return res;
}

async function loop() {
  let since = null;
  for (;;) {
    try {
      const res = await call("GET", `/state${since === null ? "" : `?since=${since}`}`);
      state = await res.json(); since = state.version;
      $("#conn").textContent = "live"; $("#conn").className = "pill ok"; $("#error").textContent = "";
      render();
    } catch (e) {
      $("#conn").textContent = "disconnected"; $("#conn").className = "pill bad"; $("#error").textContent = e.message;
      if (e.status === 401 || e.status === 403) { $("#key-box").hidden = false; $("#board").hidden = true; return; }
      // Ask for the state at once when back, whatever version was seen last.
      since = null;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

async function act(action, group, participant, condition) {
  try { const res = await call("POST", "/action", { action, group, participant, condition }); $("#said").textContent = (await res.json()).message; }
  catch (e) { $("#error").textContent = e.message; }
}
async function download(name) {
  try {
    const blob = await (await call("GET", `/${name}`)).blob();
    const a = h("a", { href: URL.createObjectURL(blob), download: `${sid}-${name}` }); document.body.append(a); a.click(); a.remove();
  } catch (e) { $("#error").textContent = e.message; }
}

function render() {
  $("#board").hidden = false; $("#key-box").hidden = true;
  $("#study").textContent = `${state.study} — ${state.title}`;
  const counts = [["participants", state.participants], ...Object.entries(state.by_stage), ...Object.entries(state.outcomes).map(([k, v]) => [`code: ${k}`, v])];
  fill($("#counts"), counts.map(([k, v]) => h("div", { "data-count": k }, h("strong", {}, v), k)));
  fill($("#flags"), `Study ${state.status}; lobby ${state.lobby_open ? "open" : "closed"}.`);
  fill($("#controls"),
    state.lobby_open ? h("button", { class: "secondary", id: "close-lobby", onclick: () => act("close_lobby") }, "Close the lobby") : null, " ",
    state.status === "open" ? h("button", { class: "secondary", id: "pause", onclick: () => act("pause") }, "Pause") : null,
    state.status === "paused" ? h("button", { class: "secondary", id: "resume", onclick: () => act("resume") }, "Resume") : null, " ",
    state.status !== "ended" ? h("button", { class: "secondary", id: "end-study", onclick: () => { if (confirm("End the study for everyone?")) act("end_study"); } }, "End the study") : null);
  $("#conditions-box").hidden = !state.conditions.length;
  fill($("#conditions"), table(["condition", "weight", "groups", "participants", "games begun", "groups finished", "new groups", ""],
    state.conditions.map((c) => [c.name, c.weight, c.groups, c.participants, c.games, c.finished, c.open ? "assigned" : "closed",
      h("button", { class: "secondary small", "data-condition": c.name, onclick: () => act(c.open ? "close_condition" : "open_condition", null, null, c.name) }, c.open ? "Close" : "Open again")])));
  fill($("#lobby"), table(["participant", "arrival", "waited (s)"], state.lobby.map((l) => [l.participant, l.arrival, l.waited])));
  fill($("#groups"), state.groups.map((g) => h("div", { class: "question", "data-group": g.id },
    h("strong", {}, `${g.id}`), g.condition ? ` (${g.condition})` : "", ` room ${g.room || "-"}, ${g.status}, ${g.played}/${g.games} games `,
    g.playing ? h("button", { class: "secondary small", onclick: () => act("end_game", g.id) }, "End this game") : null,
    g.error ? h("p", { class: "error" }, `Could not play: ${g.error}`) : null,
    table(["seat", "who", "model", "stage", "code", "page open", "taken over"], g.seats.map((s) => [s.seat, s.kind === "person" ? s.participant : s.kind, s.model || "", s.stage || "", s.outcome || "", s.kind === "person" ? (s.connected ? "yes" : "no") : "", s.taken_over ? "yes" : ""])))));
  fill($("#times"), table(["stage", "n", "median", "mean"], Object.entries(state.times).map(([s, t]) => [s, t.n, t.median, t.mean])));
  fill($("#dropouts"), table(["participant", "group", "seat", "reason", "game", "at"], state.dropouts.map((d) => [d.participant, d.group, d.seat, d.reason, d.game, new Date(d.at * 1000).toLocaleTimeString()])));
  // "Let in again": a participant locked out of their session (a lost browser, a link with no session id) may
  // open their link once more in any browser; the page they had stops working.
  fill($("#participants"), table(["participant", "stage", "code", "group", "quiz tries", "attention", "survey", ""], state.recent.map((p) => [p.participant, p.stage, p.outcome || "", p.group || "",
    p.quiz_attempts, Object.entries(p.attention).map(([k, v]) => `${k}: ${v ? "pass" : "fail"}`).join(", "), Object.entries(p.survey).map(([k, v]) => `${k}: ${v}`).join(" | "),
    p.outcome ? "" : h("button", { class: "secondary small", "data-release": p.participant, onclick: () => { if (confirm(`Let ${p.participant} open their link again in another browser?`)) act("release", null, p.participant); } }, "Let in again")])));
}

document.addEventListener("DOMContentLoaded", () => {
  $("#download-participants").addEventListener("click", () => download("participants.csv"));
  $("#download-bonus").addEventListener("click", () => download("bonus.csv"));
  $("#key-form").addEventListener("submit", (ev) => { ev.preventDefault(); key = new FormData(ev.target).get("key"); sessionStorage.setItem(`lexicoord:admin:${sid}`, key); loop(); });
  if (!key) { $("#key-box").hidden = false; return; }
  sessionStorage.setItem(`lexicoord:admin:${sid}`, key);
  history.replaceState(null, "", location.pathname);  // the key leaves the address bar
  loop();
});
