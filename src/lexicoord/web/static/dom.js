"use strict";
// What every page builds with: elements from data, where every piece of text from the server or a person
// becomes a text node (never HTML), so nothing anyone types can become markup or script. Loaded before the
// page's own script.

const $ = (sel) => document.querySelector(sel);

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v === true) node.setAttribute(k, "");
    else if (v !== false && v != null) node.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) if (c != null && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}
const svg = (tag, attrs, ...children) => {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
};
function fill(node, ...children) { node.replaceChildren(...children.flat(Infinity).filter((c) => c != null && c !== false)); }
function showError(text) { $("#error").textContent = text || ""; }
