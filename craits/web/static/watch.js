// The watch page: a record file -> its games -> one game's frames, stepped through.
"use strict";

const LOG_FRAMES = 40;  // frames of lines shown up to the current one
let replayData = null;  // {frames (a window of frame_count, from frames_from), seats, ...}
let step = 0;
let current = { file: null, game: null, seat: "" };

function total() {
  return replayData.frame_count;
}

function frameAt(k) {
  return replayData.frames[k - replayData.frames_from];
}

// Whether frames from..to (the log before the step, and the step) are in the window held.
function held(from, to) {
  const start = replayData.frames_from;
  return from >= start && to < start + replayData.frames.length;
}

async function fetchWindow(from) {
  const q = new URLSearchParams({ file: current.file, game: current.game, from });
  if (current.seat !== "") q.set("seat", current.seat);
  const data = await load(`/api/records/replay?${q}`);
  if (data) replayData = data;
  return Boolean(data);
}

function seatLabel(s) {
  return `player_${s} (${replayData.seats[s]})`;
}

function renderFrame() {
  const last = total() - 1;
  step = Math.max(0, Math.min(step, last));
  const f = frameAt(step);
  document.getElementById("slider").value = step;
  document.getElementById("step").textContent = step === 0 ? `deal · 0 / ${last}` : `decision ${step} / ${last}`;
  document.getElementById("first").disabled = document.getElementById("prev").disabled = step === 0;
  document.getElementById("next").disabled = document.getElementById("last").disabled = step === last;
  document.getElementById("hand-jump").value = String(f.hand_index);

  clear(document.getElementById("top")).append(cardFace(f.top));
  fill(document.getElementById("facts"),
    el("div", {}, `Hand ${f.hand_index + 1} · ${counted(f.hand_size, "card")} dealt to each · dealer player_${f.dealer}`),
    el("div", {}, "Active suit ", suitBadge(f.active_suit)),
    el("div", {}, f.direction === 1 ? "Play goes left →" : "← Play goes right"),
    el("div", {}, `Stock: ${counted(f.stock_size, "card")} · phase ${f.phase.replace("_", " ")}`),
    f.count ? el("div", { class: "count" }, `COUNT ${f.count}`) : null);
  const d = f.decision;
  document.getElementById("decision").textContent = d ? plainText(`${seatLabel(d.player)}: ${prettyLabel(d.label)}`) : "The deal";

  const seats = clear(document.getElementById("seats"));
  f.hand_sizes.forEach((size, s) => {
    const hand = f.hands[s];
    const notes = [];
    if (f.went_out.includes(s)) notes.push("out");
    if (s === f.dealer) notes.push("dealer");
    seats.append(el("div", { class: "seat" + (f.current_player === s ? " turn" : ""), dataset: { seat: s } },
      el("span", { class: "score" }, `score ${f.scores[s]}`),
      el("div", { class: "name" }, seatLabel(s), f.current_player === s ? " ▶" : ""),
      el("div", { class: "hand" }, hand ? hand.map((c) => cardFace(c, { small: true })) : cardBacks(size)),
      notes.length ? el("div", { class: "notes" }, notes.join(" · ")) : null));
  });

  const log = clear(document.getElementById("log"));
  for (let k = Math.max(replayData.frames_from, step - LOG_FRAMES); k <= step; k++) {
    for (const line of frameAt(k).lines) {
      log.append(el("p", { class: line.kind + (k === step ? " now" : ""), dataset: { hand: line.hand } }, line.text));
    }
  }
  log.scrollTop = log.scrollHeight;
  const final = document.getElementById("final");
  final.hidden = step !== last;
  document.getElementById("standings").textContent = plainText(replayData.standings.join("\n"));
  writeHash({ file: current.file, game: current.game, step, seat: current.seat });
}

async function openGame(file, game, seat, atStep) {
  showError("");
  current = { file, game, seat: seat ?? "" };
  for (const b of document.querySelectorAll("#games button")) b.classList.toggle("here", b.dataset.game === String(game));
  step = atStep ?? 0;
  if (!(await fetchWindow(Math.max(0, step - LOG_FRAMES)))) return;
  const r = replayData;
  document.getElementById("viewer").hidden = false;
  const meta = Object.entries(r.meta).filter(([, v]) => String(v).length <= 40).map(([k, v]) => `${k}=${v}`).join(", ");
  document.getElementById("header").textContent = plainText(
    `Game ${game}: ${r.num_players} players — ${r.seats.map((s, i) => `p${i} ${s}`).join(", ")} — rules: ${r.rules}` +
    (r.seed !== null ? ` — seed ${r.seed}` : "") + (meta ? ` — from ${meta}` : "") + (r.finished ? "" : " — unfinished"));
  const slider = document.getElementById("slider");
  slider.max = r.frame_count - 1;
  const jump = clear(document.getElementById("hand-jump"));
  for (const h of r.hand_starts) jump.append(el("option", { value: h.hand }, `${h.hand + 1}`));
  const view = clear(document.getElementById("seat-view"));
  view.append(el("option", { value: "" }, "every hand"));
  for (let s = 0; s < r.num_players; s++) view.append(el("option", { value: s }, `player_${s}'s view`));
  view.value = current.seat;
  renderFrame();
}

async function openFile(file, game, seat, atStep) {
  const box = clear(document.getElementById("games"));
  document.getElementById("file-note").textContent = "";
  const data = await load(`/api/records/games?file=${encodeURIComponent(file)}`);
  if (!data) return;
  document.getElementById("file-note").textContent = counted(data.games.length, "game");
  for (const g of data.games) {
    box.append(el("button", { type: "button", dataset: { game: g.game }, onclick: () => openGame(file, g.game, "", 0) }, g.text));
  }
  if (game) await openGame(file, Number(game), seat ?? "", atStep);
  else if (data.games.length === 1) await openGame(file, 1, "", 0);
}

async function go(to) {
  if (!replayData) return;
  step = Math.max(0, Math.min(to, total() - 1));
  const from = Math.max(0, step - LOG_FRAMES);
  if (!held(from, step) && !(await fetchWindow(from))) return;  // another page of frames
  renderFrame();
}

async function init() {
  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(step - 1));
  document.getElementById("next").addEventListener("click", () => go(step + 1));
  document.getElementById("last").addEventListener("click", () => go(total() - 1));
  document.getElementById("slider").addEventListener("input", (e) => go(Number(e.target.value)));
  document.getElementById("hand-jump").addEventListener("change", (e) => {
    const start = replayData.hand_starts.find((h) => h.hand === Number(e.target.value));
    if (start) go(start.frame);
  });
  document.getElementById("seat-view").addEventListener("change", (e) => openGame(current.file, current.game, e.target.value, step));
  document.addEventListener("keydown", (e) => {
    if (!replayData || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") go(step + 1);
    else if (e.key === "ArrowLeft") go(step - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(total() - 1);
  });
  const select = document.getElementById("file");
  select.addEventListener("change", () => openFile(select.value));
  const data = await load("/api/records");
  if (!data) return;
  const file = fillChooser(select, data.files, (f) => (f.saved ? "saved: " : `${f.folder}/`) + f.name,
                           "file", "no record file (start craits serve with --records DIR)");
  const params = readHash();
  if (file) await openFile(file, params.file === file ? params.game : null, params.seat, Number(params.step || 0));
}

document.addEventListener("DOMContentLoaded", init);
