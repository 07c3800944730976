// The compare page: a tournament's results.json as a leaderboard, head to head and charts.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = plainText(text);
  return node;
}

function ci(value, interval, digits) {
  const [lo, hi] = interval || [null, null];
  return `${fmt(value, digits)} [${fmt(lo, digits)}, ${fmt(hi, digits)}]`;
}

// One horizontal bar chart with 95% whiskers; `mark` draws a dashed line (chance).
function intervalChart(agents, key, label, mark) {
  const width = 460, row = 26, left = 170, top = 24, right = 20;
  const height = top + row * agents.length + 34;
  const values = agents.map((a) => a[key]);
  const highs = agents.map((a) => (a[`${key}_ci`] || [a[key], a[key]])[1] ?? a[key]);
  const max = Math.max(...highs, mark || 0) * 1.08 || 1;
  const x = (v) => left + (v / max) * (width - left - right);
  const chart = svg("svg", { class: "chart", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  chart.append(svg("text", { x: left, y: 14 }, `${label} — 95% CI`));
  agents.forEach((a, i) => {
    const y = top + i * row;
    const [lo, hi] = a[`${key}_ci`] || [values[i], values[i]];
    chart.append(svg("text", { x: left - 6, y: y + 16, "text-anchor": "end" }, a.spec.length > 24 ? a.spec.slice(0, 23) + "…" : a.spec));
    chart.append(svg("rect", { class: "bar", x: left, y: y + 4, width: Math.max(0, x(values[i]) - left), height: row - 10 }));
    if (lo !== null && hi !== null) {
      chart.append(svg("line", { class: "whisker", x1: x(lo), x2: x(hi), y1: y + row / 2 - 1, y2: y + row / 2 - 1 }));
      for (const v of [lo, hi]) chart.append(svg("line", { class: "whisker", x1: x(v), x2: x(v), y1: y + 7, y2: y + row - 9 }));
    }
  });
  const axisY = top + row * agents.length + 4;
  chart.append(svg("line", { class: "whisker", x1: left, x2: width - right, y1: axisY, y2: axisY }));
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    chart.append(svg("text", { x: x(v), y: axisY + 16, "text-anchor": "middle" }, v >= 10 ? v.toFixed(0) : v.toFixed(2)));
  }
  if (mark) {
    chart.append(svg("line", { class: "chance", x1: x(mark), x2: x(mark), y1: top, y2: axisY }));
    chart.append(svg("text", { x: x(mark) + 4, y: top + 10 }, `chance ${mark.toFixed(2)}`));
  }
  return chart;
}

function render(data) {
  document.getElementById("board").hidden = false;
  document.getElementById("title").textContent = plainText(data.title);
  const c = data.config;
  document.getElementById("about").textContent =
    `${(data.games || 0).toLocaleString()} games, ${c.players} players` +
    (c.deals ? `, ${c.deals.toLocaleString()} deals` : "") + (c.schedule ? `, schedule ${c.schedule}` : "") +
    (c.rules && c.rules.hand_sizes ? `, hands ${c.rules.hand_sizes.join("-")}` : "");
  const body = clear(document.querySelector("#leaderboard tbody"));
  data.agents.forEach((a, i) => {
    body.append(el("tr", { dataset: { spec: a.spec } },
      el("td", {}, i + 1), el("td", { class: "left" }, el("code", {}, a.spec)), el("td", {}, a.games.toLocaleString()),
      el("td", {}, ci(a.win_rate, a.win_rate_ci, 3)), el("td", {}, ci(a.mean_score, a.mean_score_ci, 1)),
      el("td", {}, ci(a.mean_hand_points, a.mean_hand_points_ci, 2)),
      el("td", {}, fmt(a.rating_mu, 2)), el("td", {}, fmt(a.rating_sigma, 2))));
  });

  const specs = data.agents.map((a) => a.spec);
  const h2h = clear(document.getElementById("h2h"));
  if (specs.length > 1) {
    const table = el("table", { class: "grid", id: "head-to-head" },
      el("tr", {}, el("th", {}, ""), specs.map((s) => el("th", {}, s))),
      specs.map((a) => el("tr", {}, el("th", { class: "left" }, a), specs.map((b) => {
        if (a === b) return el("td", { class: "diag" }, "—");
        const v = (data.head_to_head[a] || {})[b];
        const cell = el("td", {}, fmt(v, 3));
        if (v !== undefined && v !== null) cell.style.background = `hsl(${Math.round(v * 120)}, 60%, 85%)`;
        return cell;
      }))));
    h2h.append(table);
  } else {
    h2h.append(el("p", { class: "muted" }, "One agent: nothing to compare head to head."));
  }

  const charts = clear(document.getElementById("charts"));
  charts.append(el("div", { class: "row" },
    intervalChart(data.agents, "mean_score", "mean game score (lower is better)"),
    intervalChart(data.agents, "win_rate", "win rate", 1 / c.players)));
  const png = clear(document.getElementById("png"));
  if (data.chart) {
    png.append(el("h2", {}, "The tournament's own chart"),
      el("img", { class: "chart-png", alt: `chart of ${data.title}`, src: `/api/results/chart?key=${encodeURIComponent(data.key)}` }));
  }
  document.getElementById("command").textContent = data.command ? plainText(`Reproduce: ${data.command}`) : "";
  writeHash({ key: data.key });
}

async function open(key) {
  showError("");
  const data = await load(`/api/results/table?key=${encodeURIComponent(key)}`);
  if (data) render(data);
}

// The benchmark's leaderboard: one row per report card (GET /api/cards).
function renderCards(board) {
  if (!board || !board.rows || !board.rows.length) return;
  document.getElementById("benchmark").hidden = false;
  document.getElementById("suite").textContent = plainText(board.suite);
  const columns = Object.keys(board.rows[0].win_rates);
  const head = document.getElementById("columns");
  for (const name of columns) head.before(el("th", {}, `vs 3 × ${name}`));
  const body = clear(document.querySelector("#cards tbody"));
  board.rows.forEach((r, i) => {
    body.append(el("tr", { dataset: { spec: r.spec } },
      el("td", {}, i + 1), el("td", { class: "left" }, el("code", {}, r.spec)),
      el("td", { class: "left" }, el("code", {}, r.identity)),
      el("td", {}, r.is_reference ? "0 (reference)" : fmt(r.paired_mean, 1)),
      el("td", {}, fmt(r.ordinal, 2)),
      columns.map((name) => {
        const w = r.win_rates[name];
        return el("td", {}, w ? ci(w.win_rate, w.ci, 3) : "—");
      }),
      el("td", {}, fmt(r.ms_per_choice, 1)), el("td", {}, r.size)));
  });
}

async function init() {
  renderCards(await load("/api/cards?suite=v1"));
  const select = document.getElementById("set");
  select.addEventListener("change", () => open(select.value));
  const data = await load("/api/results");
  if (!data) return;
  const key = fillChooser(select, data.results, (s) => `${s.title} (${s.name})`, "key",
                          "no results.json (start craits serve with --results DIR)");
  if (key) await open(key);
}

document.addEventListener("DOMContentLoaded", init);
