"use strict";
// The start page: create a room from what the server offers, or go to a room by its code.
const $ = (sel) => document.querySelector(sel);
let offer = { models: [], datasets: [], default_agents: 2 };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function addAgent() {
  const box = $("#agents");
  const n = box.querySelectorAll(".agent").length + 1;
  const select = el("select", { name: "agent-model" });
  for (const m of offer.models) select.append(el("option", { value: m }, m));
  const remove = el("button", { type: "button", class: "secondary small" }, "remove");
  const row = el("div", { class: "agent" }, el("input", { name: "agent-name", value: `agent-${n}`, maxlength: "24" }), select, remove);
  remove.addEventListener("click", () => row.remove());
  box.append(row);
}

async function load() {
  offer = await (await fetch("/api/offer")).json();
  for (const d of offer.datasets) $("#dataset").append(el("option", { value: d }, d));
  for (let i = 0; i < offer.default_agents; i++) addAgent();
}

$("#add-agent").addEventListener("click", addAgent);
$("#create").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const names = f.getAll("agent-name"), models = f.getAll("agent-model");
  const body = {
    mode: f.get("mode"), dataset: f.get("dataset"),
    agents: names.map((name, i) => ({ name: String(name).trim(), model: models[i] })),
    clarification_bound: Number(f.get("clarification_bound")),
    seat_timeout: Number(f.get("seat_timeout")), agent_timeout: Number(f.get("agent_timeout")),
    leader_clarifies: f.get("leader_clarifies") === "on",
  };
  const res = await fetch("/api/rooms", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await res.json();
  if (!res.ok) {
    $("#create-error").textContent = data.message || (data.detail && data.detail.map((d) => `${d.loc.slice(1).join(".")}: ${d.msg}`).join("; ")) || "The room could not be created.";
    return;
  }
  location.href = data.path;
});
$("#join").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const code = new FormData(ev.target).get("code").toUpperCase().replace(/[^A-Z0-9]/g, "");
  location.href = "/r/" + encodeURIComponent(code.length === 10 ? code.slice(0, 5) + "-" + code.slice(5) : code);
});
load();
