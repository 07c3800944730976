// The play page: your seat at the table. GET /api/games/ID (the token in the Authorization
// header: it stays out of logs and histories), POST .../actions.
"use strict";

const CALL_BASE = 53;
const DRAW = 52;

// What the person is asked now, from the phase and the legal actions.
function promptText(v) {
  const card = v.legal.some((a) => a.action < DRAW);
  const draw = v.legal.some((a) => a.action === DRAW);
  if (v.phase === "call_suit") return "Call a suit for your card.";
  if (v.phase === "declare") return "You hold one card: declare \"one card\", or stay silent.";
  if (v.phase === "count") {
    if (!card) return `The count is on and you hold no ace or two: take the count (${v.count} cards).`;
    return `The count is on (${v.count}): play an ace or a two` + (draw ? ", or take the count." : ".");
  }
  const start = v.extra_play ? "You play again" : "Your turn";
  if (!card) return `${start}: no card can be played — draw.`;
  return `${start}: play a highlighted card` + (draw ? ", or draw." : ".");
}

let game = null;   // {id, token}
let view = null;   // the last seat view
let busy = false;

function seatBox(p, v, me) {
  const notes = [];
  if (p.went_out) notes.push("out");
  if (p.one_card_penalty_pending) notes.push("owes the one-card penalty");
  if (p.shuffle_pressures) notes.push(counted(p.shuffle_pressures, "shuffle pressure"));
  if (p.seat === v.dealer) notes.push("dealer");
  const name = me ? `You (player_${p.seat}) · ${counted(p.cards, "card")}` : `${p.name} (${p.spec})`;
  return el("div", { class: "seat" + (v.current_player === p.seat ? " turn" : ""), dataset: { seat: p.seat } },
    el("span", { class: "score" }, `score ${p.score}`),
    el("div", { class: "name" }, name, v.current_player === p.seat ? " ▶" : ""),
    me ? null : el("div", { class: "hand" }, cardBacks(p.cards)),
    notes.length ? el("div", { class: "notes" }, notes.join(" · ")) : null);
}

function render(v) {
  view = v;
  document.getElementById("game").hidden = false;
  const opponents = clear(document.getElementById("opponents"));
  const n = v.num_players;
  for (let k = 1; k < n; k++) {  // in the order of play, starting at your left
    const p = v.players[(v.seat + k) % n];
    opponents.append(seatBox(p, v, false));
  }
  const me = document.getElementById("me");
  me.replaceWith(Object.assign(seatBox(v.players[v.seat], v, true), { id: "me" }));

  clear(document.getElementById("top")).append(cardFace(v.top));
  fill(document.getElementById("facts"),
    el("div", {}, `Hand ${Math.min(v.hand_index + 1, v.hands_in_game)} of ${v.hands_in_game} · ${counted(v.hand_size, "card")} dealt to each`),
    el("div", {}, "Active suit ", suitBadge(v.active_suit)),
    el("div", {}, v.direction === 1 ? "Play goes left →" : "← Play goes right"),
    el("div", {}, `Stock: ${counted(v.stock_size, "card")}`),
    v.count ? el("div", { class: "count" }, `COUNT ${v.count}`) : null);

  const legal = new Map(v.legal.map((a) => [a.action, a.label]));
  const hand = clear(document.getElementById("hand"));
  for (const card of v.hand) {
    const id = cardId(card);
    const playable = legal.has(id);
    hand.append(cardFace(card, { legal: playable, action: id,
                                 onclick: playable ? () => act(id) : () => {} }));
    if (!playable) hand.lastChild.disabled = true;
  }
  const buttons = clear(document.getElementById("buttons"));
  for (const { action, label } of v.legal) {
    if (action < DRAW) continue;
    let text = label;
    let cls = "action";
    if (action === DRAW) text = v.phase === "count" ? `Take the count (${v.count} cards)` : "Draw a card";
    else if (action >= CALL_BASE && action < CALL_BASE + 4) {
      const suit = "cdhs"[action - CALL_BASE];
      text = `Call ${SUIT_SYMBOL[suit]} ${SUIT_NAME[suit]}`;
      cls += " suit";
    } else if (action === 57) { text = "Declare \"one card\""; cls += " primary"; }
    else if (action === 58) text = "Stay silent";
    buttons.append(el("button", { type: "button", class: cls, dataset: { action }, onclick: () => act(action) }, text));
  }
  const prompt = document.getElementById("prompt");
  if (v.failed) prompt.textContent = plainText(`The game stopped: ${v.failed}`);
  else if (v.game_over) prompt.textContent = "The game is over.";
  else if (v.resigned) prompt.textContent = "You resigned this game.";
  else if (v.your_turn) prompt.textContent = promptText(v);
  else prompt.textContent = `Waiting for player_${v.current_player}…`;

  appendEvents(v.events);
  renderPoints(v);
  const closed = v.game_over || v.resigned || v.failed;
  document.getElementById("resign").hidden = Boolean(closed);
  const end = document.getElementById("end");
  end.hidden = !(v.game_over || v.resigned);
  if (!end.hidden) {
    document.getElementById("end-title").textContent = v.game_over ? "The game is over" : "You resigned";
    document.getElementById("standings").textContent = plainText((v.standings || []).join("\n") +
      (v.seed_text !== null ? `\n\nseed ${v.seed_text}` : ""));
    showSaved(v.saved);
  }
}

function cardId(card) {
  return "cdhs".indexOf(card[1]) * 13 + "A23456789TJQK".indexOf(card[0]);
}

function appendEvents(events) {
  const log = document.getElementById("log");
  for (const p of log.querySelectorAll("p.now")) p.classList.remove("now");
  let lastScoring = null;
  for (const e of events) {
    log.append(el("p", { class: `${e.kind} now`, dataset: { hand: e.hand } }, e.text));
    if (e.kind === "scoring") {
      if (!lastScoring || lastScoring.hand !== e.hand) lastScoring = { hand: e.hand, lines: [] };
      lastScoring.lines.push(e.text);
    }
  }
  log.scrollTop = log.scrollHeight;
  if (lastScoring) {
    const box = document.getElementById("scoring");
    clear(box).append(el("strong", {}, "Scoring"), el("pre", {}, lastScoring.lines.join("\n")));
    box.hidden = false;
  }
}

function renderPoints(v) {
  const box = clear(document.getElementById("points"));
  if (!v.hand_points.length) { box.append(el("p", { class: "muted" }, "No hand finished yet.")); return; }
  const names = v.players.map((p) => (p.seat === v.seat ? "you" : p.name));
  const head = el("tr", {}, el("th", { class: "left" }, "hand"), names.map((x) => el("th", {}, x)));
  const rows = v.hand_points.map((pts, i) => el("tr", {}, el("td", { class: "left" }, i + 1), pts.map((x) => el("td", {}, x))));
  const total = el("tr", {}, el("th", { class: "left" }, "total"), v.scores.map((x) => el("th", {}, x)));
  box.append(el("table", { class: "grid", id: "points-table" }, head, rows, total));
}

function showSaved(saved) {
  const span = clear(document.getElementById("saved"));
  document.getElementById("save").hidden = Boolean(saved);
  if (saved) {
    span.append("Saved as ", el("code", {}, saved.name), " — ",
      el("a", { href: `/watch#file=${encodeURIComponent(saved.file)}&game=1` }, "watch it"));
  }
}

async function act(action) {
  if (busy) return;
  busy = true;
  showError("");
  for (const b of document.querySelectorAll("#hand button, #buttons button")) b.disabled = true;
  document.getElementById("prompt").textContent = "The bots are playing…";
  try {
    // the decision it answers: a second click, or the same move sent twice, is never applied twice
    const body = { token: game.token, action, decision: view.decision };
    render(await api(`/api/games/${encodeURIComponent(game.id)}/actions`, { body }));
  } catch (e) {
    if (e.data && e.data.view) { render(e.data.view); return; }  // 409: a move already made
    showError(e.message);
    await refresh(false);
  } finally {
    busy = false;
  }
}

async function refresh(all) {
  const since = all ? "?since=0" : "";
  const v = await load(`/api/games/${encodeURIComponent(game.id)}${since}`, undefined,
                       { Authorization: `Bearer ${game.token}` });
  if (v) render(v);
}

async function resign() {
  if (!confirm("Resign this game? It ends unfinished (you can still save it).")) return;
  const v = await load(`/api/games/${encodeURIComponent(game.id)}/resign`, { token: game.token });
  if (v) render(v);
}

async function save() {
  const saved = await load(`/api/games/${encodeURIComponent(game.id)}/save`, { token: game.token });
  if (saved) showSaved(saved);
}

function init() {
  const params = readHash();
  if (!params.game || !params.token) {
    document.getElementById("missing").hidden = false;
    return;
  }
  game = { id: params.game, token: params.token };
  document.getElementById("resign").addEventListener("click", resign);
  document.getElementById("save").addEventListener("click", save);
  refresh(true);
}

document.addEventListener("DOMContentLoaded", init);
