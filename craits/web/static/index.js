// The new-game page: opponents, seat, seed, rules -> POST /api/games -> /play#game=ID&token=T.
"use strict";

const LENGTHS = { standard: null, short: [8, 7, 6, 5, 4, 3, 2, 1], quick: [2, 1] };
const MAX_PLAYERS = 10;
const MY_GAMES = "craits-games";  // localStorage: the games started in this browser

function opponentRow(i, value) {
  return el("div", { class: "opponent" },
    el("label", { for: `opponent-${i}` }, `Opponent ${i + 1}`),
    el("input", { type: "text", id: `opponent-${i}`, class: "spec", list: "spec-list",
                  value, required: true, autocomplete: "off" }));
}

function syncPlayers() {
  const n = Number(document.getElementById("players").value);
  const box = document.getElementById("opponents");
  const old = [...box.querySelectorAll("input.spec")].map((x) => x.value);
  clear(box);
  for (let i = 0; i < n - 1; i++) box.append(opponentRow(i, old[i] || old[old.length - 1] || "expert"));
  const seat = document.getElementById("seat");
  const was = Number(seat.value || 0);
  clear(seat);
  for (let s = 0; s < n; s++) seat.append(el("option", { value: s, selected: s === Math.min(was, n - 1) }, `player_${s}`));
}

function ruleInput(option) {
  const shown = Array.isArray(option.default) ? option.default.join(",") : String(option.default);
  return el("label", {}, option.name, " ",
    el("input", { type: "text", class: "rule", dataset: { name: option.name, default: shown },
                  value: shown, title: `allowed: ${option.allowed}` }));
}

function chosenRules() {
  const rules = {};
  for (const input of document.querySelectorAll("input.rule")) {
    if (input.value.trim() !== input.dataset.default) rules[input.dataset.name] = input.value.trim();
  }
  const length = document.getElementById("length").value;
  if (length === "custom") rules.hand_sizes = document.getElementById("hand-sizes").value;
  else if (LENGTHS[length]) rules.hand_sizes = LENGTHS[length];
  return rules;
}

function remember(game, opponents) {
  const mine = JSON.parse(localStorage.getItem(MY_GAMES) || "[]");
  mine.unshift({ ...game, opponents, started: new Date().toISOString() });
  localStorage.setItem(MY_GAMES, JSON.stringify(mine.slice(0, 10)));
}

function listMine() {
  const mine = JSON.parse(localStorage.getItem(MY_GAMES) || "[]");
  const list = clear(document.getElementById("mine-list"));
  for (const g of mine) {
    const href = `/play#game=${encodeURIComponent(g.game_id)}&token=${encodeURIComponent(g.token)}`;
    list.append(el("li", {}, el("a", { href }, `against ${g.opponents.join(", ")}`),
                   el("span", { class: "muted" }, ` — started ${g.started.slice(0, 16).replace("T", " ")}`)));
  }
  document.getElementById("mine").hidden = mine.length === 0;
}

async function start(event) {
  event.preventDefault();
  showError("");
  const opponents = [...document.querySelectorAll("input.spec")].map((x) => x.value.trim());
  const body = { opponents, seat: Number(document.getElementById("seat").value), rules: chosenRules() };
  const seed = document.getElementById("seed").value;
  if (seed !== "") body.seed = Number(seed);
  const button = document.getElementById("start");
  button.disabled = true;
  button.textContent = "Dealing…";
  try {
    const game = await api("/api/games", { body });
    remember(game, opponents);
    location.href = `/play#game=${encodeURIComponent(game.game_id)}&token=${encodeURIComponent(game.token)}`;
  } catch (e) {
    showError(e.message);
  } finally {
    button.disabled = false;
    button.textContent = "Start the game";
  }
}

async function init() {
  const players = document.getElementById("players");
  for (let n = 2; n <= MAX_PLAYERS; n++) players.append(el("option", { value: n, selected: n === 4 }, `${n} players`));
  players.addEventListener("change", syncPlayers);
  syncPlayers();
  document.getElementById("length").addEventListener("change", (e) => {
    document.getElementById("hand-sizes").hidden = e.target.value !== "custom";
  });
  document.getElementById("new-game").addEventListener("submit", start);
  listMine();
  try {
    const [specs, rules] = await Promise.all([api("/api/specs"), api("/api/rules")]);
    const list = document.getElementById("spec-list");
    for (const s of specs.specs) list.append(el("option", { value: s === "pimc" ? "pimc:64" : s }));
    const box = document.getElementById("rules");
    for (const option of rules.options) if (option.name !== "hand_sizes") box.append(ruleInput(option));
  } catch (e) {
    showError(e.message);
  }
}

document.addEventListener("DOMContentLoaded", init);
