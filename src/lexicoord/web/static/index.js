"use strict";
// The start page: create a room from what the server offers, or go to a room by its code.
let offer = { models: [], protocols: [], default_agents: 2 };

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

// A protocol's own fields, drawn from what the server says its room asks for (GET /api/offer).
function fieldNode(f) {
  if (f.kind === "bool") {
    const box = el("input", { type: "checkbox", name: f.name });
    box.checked = Boolean(f.default);
    return el("label", { class: "inline" }, box, " ", f.label);
  }
  if (f.kind === "choice") {
    const select = el("select", { name: f.name });
    for (const c of f.choices) select.append(el("option", { value: String(c) }, String(c)));
    if (f.default != null) select.value = String(f.default);
    return el("label", {}, f.label, " ", select);
  }
  const attrs = { name: f.name };
  if (f.kind === "int" || f.kind === "number") {
    Object.assign(attrs, { type: "number", step: f.kind === "int" ? "1" : "any" });
    if (f.min != null) attrs.min = String(f.min);
    if (f.max != null) attrs.max = String(f.max);
  } else if (f.max_length != null) attrs.maxlength = String(f.max_length);
  const input = el("input", attrs);
  if (f.default != null) input.value = String(f.default);
  return el("label", {}, f.label, " ", input);
}

function current() {
  return offer.protocols.find((p) => p.name === $("#protocol").value) || offer.protocols[0];
}

function showProtocol() {
  const p = current();
  $("#protocol-summary").textContent = p ? p.summary : "";
  $("#protocol-fields").replaceChildren(...(p ? p.fields.map(fieldNode) : []));
}

function fieldValue(f, form) {
  const node = form.querySelector(`[name="${f.name}"]`);
  if (f.kind === "bool") return node.checked;
  if (f.kind === "int" || f.kind === "number") return Number(node.value);
  if (f.kind === "choice") return f.choices.find((c) => String(c) === node.value) ?? node.value;
  return node.value;
}

async function load() {
  offer = await (await fetch("/api/offer")).json();
  for (const p of offer.protocols) $("#protocol").append(el("option", { value: p.name }, p.title || p.name));
  if (offer.default_protocol) $("#protocol").value = offer.default_protocol;
  $("#protocol").addEventListener("change", showProtocol);
  showProtocol();
  for (let i = 0; i < offer.default_agents; i++) addAgent();
}

$("#add-agent").addEventListener("click", addAgent);
$("#create").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const names = f.getAll("agent-name"), models = f.getAll("agent-model");
  const body = {
    protocol: current().name,
    agents: names.map((name, i) => ({ name: String(name).trim(), model: models[i] })),
    seat_timeout: Number(f.get("seat_timeout")), agent_timeout: Number(f.get("agent_timeout")),
  };
  for (const field of current().fields) body[field.name] = fieldValue(field, ev.target);
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
