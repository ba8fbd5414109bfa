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
// Puts exactly these children in node, in this order. A child already in node stays where it is rather than being
// taken out and put back: taking out the field a person is typing in loses the focus and the caret, and taking out
// a button between the press and the release of a click loses the click (a page redraws on every update of a room).
function fill(node, ...children) {
  const next = children.flat(Infinity).filter((c) => c != null && c !== false).map((c) => c instanceof Node ? c : document.createTextNode(String(c)));
  const staying = new Set(next);
  for (const old of [...node.childNodes]) if (!staying.has(old)) old.remove();
  let at = node.firstChild;
  for (const c of next) { if (c === at) at = at.nextSibling; else node.insertBefore(c, at); }
}
// The part of a page a person works in (a request's form) built once per key and then handed back as the same node,
// so redrawing everything around it keeps what they typed, where their caret is, and the button under their pointer.
// A null key (nothing asked) forgets the part.
const keptParts = new Map();
function kept(slot, key, build) {
  if (key == null) { keptParts.delete(slot); return null; }
  const had = keptParts.get(slot);
  if (had && had.key === key) return had.node;
  const node = build();
  keptParts.set(slot, { key, node });
  return node;
}
function showError(text) { $("#error").textContent = text || ""; }
