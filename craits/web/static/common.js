// What every page of craits serve shares: elements, cards, the JSON API, the error banner.
// Plain JavaScript (no build step). Text from the server is always set as text, never as HTML.
"use strict";

const SUIT_SYMBOL = { c: "♣", d: "♦", h: "♥", s: "♠" };
const SUIT_NAME = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const RED_SUITS = new Set(["d", "h"]);

// The bidirectional-text controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) are
// taken out of every text shown: a name holding a right-to-left override must not turn the
// text around it (the server strips them too where it lists names).
const BIDI_CONTROLS = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

function plainText(value) {
  return String(value).replace(BIDI_CONTROLS, "");
}

// el("div", {class: "x", dataset: {a: 1}, onclick: f}, "text", child, ...)
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = plainText(value);
    else node.setAttribute(key, value === true ? "" : plainText(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(plainText(child)));
  }
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// Replace the children of `node` (null, undefined and false children are left out).
function fill(node, ...children) {
  clear(node);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(plainText(child)));
  }
  return node;
}

// "7c" -> {rank: "7", suit: "c"}; a ten is written "T" and shown "10".
function parseCard(card) {
  return { rank: card[0] === "T" ? "10" : card[0], suit: card[1] };
}

function cardText(card) {
  const { rank, suit } = parseCard(card);
  return rank + SUIT_SYMBOL[suit];
}

// A card face: a <button> when onclick is given (a legal move), else a <span>.
function cardFace(card, options = {}) {
  const { rank, suit } = parseCard(card);
  const classes = ["card", RED_SUITS.has(suit) ? "red" : "black"];
  if (options.small) classes.push("small");
  if (options.legal) classes.push("legal");
  const parts = [
    el("span", { class: "corner" }, rank, el("br"), SUIT_SYMBOL[suit]),
    el("span", { class: "pip" }, SUIT_SYMBOL[suit]),
  ];
  const title = `${rank} of ${SUIT_NAME[suit]}`;
  if (options.onclick) {
    return el("button", { class: classes.join(" "), title, "aria-label": title,
                          dataset: { card, action: options.action }, onclick: options.onclick },
              parts);
  }
  return el("span", { class: classes.join(" "), title, dataset: { card } }, parts);
}

// "1 card", "2 cards": a number and its noun, singular or plural.
function counted(n, word, plural = `${word}s`) {
  return `${n} ${n === 1 ? word : plural}`;
}

function cardBacks(count, max = 10) {
  const shown = Math.min(count, max);
  const backs = [];
  for (let i = 0; i < shown; i++) backs.push(el("span", { class: "card back small" }));
  if (count > max) backs.push(el("span", { class: "more" }, `+${count - max}`));
  return el("span", { class: "backs", title: counted(count, "card") }, backs);
}

function suitBadge(suit) {
  return el("span", { class: `suit-badge ${RED_SUITS.has(suit) ? "red" : "black"}` },
            `${SUIT_SYMBOL[suit]} ${SUIT_NAME[suit]}`);
}

class ApiError extends Error {
  constructor(message, data = null) {
    super(message);
    this.data = data;  // the error's JSON body (a stale move's 409 carries the current view)
  }
}

// The JSON API: resolves to the parsed body, or throws ApiError with the server's one line.
async function api(path, options = {}) {
  const init = { method: options.method || "GET", headers: { ...(options.headers || {}) } };
  if (options.body !== undefined) {
    init.method = options.method || "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(`the server cannot be reached (${e.message})`);
  }
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = null;
  }
  if (!response.ok) {
    const line = data && data.error ? data.error : `HTTP ${response.status}`;
    throw new ApiError(line, data);
  }
  return data;
}

// The API's answer (a GET, or a POST of `body`; `headers` added), or null after showing its
// error in the banner.
async function load(path, body, headers) {
  try {
    return await api(path, body === undefined ? { headers } : { body, headers });
  } catch (e) {
    showError(e.message);
    return null;
  }
}

// Fill the <select> with one option per item (value item.key, text label(item)); choose the
// item the location hash names in `param`, else the first. Its key, or null when none.
function fillChooser(select, items, label, param, empty) {
  if (!items.length) {
    select.append(el("option", { value: "" }, empty));
    return null;
  }
  for (const item of items) select.append(el("option", { value: item.key }, label(item)));
  const wanted = readHash()[param];
  const key = wanted && items.some((item) => item.key === wanted) ? wanted : items[0].key;
  select.value = key;
  return key;
}

const PAGES = [["/", "Play"], ["/watch", "Watch"], ["/compare", "Compare"]];

// The header of every page: the name and the three pages, this one marked.
function pageHeader() {
  const here = location.pathname === "/play" ? "/" : location.pathname;
  const nav = el("nav", {}, PAGES.map(([href, name]) => el("a", { href, class: href === here ? "here" : null }, name)));
  document.body.prepend(el("header", { class: "top" }, el("span", { class: "brand" }, "♣ Craits"), nav));
}

document.addEventListener("DOMContentLoaded", pageHeader);

function showError(message) {
  const banner = document.getElementById("error");
  if (!banner) return;
  banner.textContent = plainText(message || "");
  banner.hidden = !message;
}

// location.hash "#a=1&b=x" <-> {a: "1", b: "x"}
function readHash() {
  return Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
}

function writeHash(params) {
  const clean = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  history.replaceState(null, "", "#" + new URLSearchParams(clean).toString());
}

// An action label of the API ("play 7c", "call h", "draw") with suit symbols.
function prettyLabel(label) {
  return label
    .replace(/^play ([A2-9TJQK])([cdhs])$/, (_, r, s) => `play ${cardText(r + s)}`)
    .replace(/^call ([cdhs])$/, (_, s) => `call ${SUIT_SYMBOL[s]} ${SUIT_NAME[s]}`);
}

function fmt(x, digits) {
  return x === null || x === undefined || Number.isNaN(x) ? "—" : Number(x).toFixed(digits);
}
