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

// A table cell of a value above its interval (lo–hi) in small print: a narrow column.
function ciCell(value, interval, digits) {
  const [lo, hi] = interval || [null, null];
  return el("td", { class: "ci" }, fmt(value, digits), el("br"),
            el("small", {}, `${fmt(lo, digits)}–${fmt(hi, digits)}`));
}

// Round axis ticks: the step is 1, 2 or 5 × 10^k, the smallest with which the ticks from the
// step's multiple at or below lo (0 when lo is positive) to the one at or above hi make at
// most `count` intervals. {ticks, step, digits}: the labels' decimals for the step.
function axisTicks(lo, hi, count = 5) {
  lo = Math.min(0, lo);
  hi = Math.max(0, hi);
  if (!(hi > lo)) hi = lo + 1;  // nothing to show (all zero): one unit
  const power = 10 ** Math.floor(Math.log10((hi - lo) / count));
  const steps = [1, 2, 5, 10, 20].map((m) => m * power);
  const cut = (step) => [Math.floor(lo / step + 1e-9), Math.ceil(hi / step - 1e-9)];
  const step = steps.find((s) => { const [a, b] = cut(s); return b - a <= count; });
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const [first, last] = cut(step);
  const ticks = [];
  for (let k = first; k <= last; k++) ticks.push(Number((k * step).toFixed(digits)));
  return { ticks, step, digits };
}

// One horizontal bar chart with 95% whiskers on round ticks; `mark` draws a dashed line
// (chance) labelled in a row of its own above the bars (kept empty without a mark, so that
// two charts side by side have their bars level), where no bar can cover the label.
function intervalChart(agents, key, label, mark) {
  const width = 540, row = 26, left = 190, right = 24, markRow = 18;  // both charts' bars level
  const top = 24 + markRow;
  const height = top + row * agents.length + 34;
  const values = agents.map((a) => a[key]);
  const interval = (a) => a[`${key}_ci`] || [a[key], a[key]];
  const highs = agents.map((a, i) => Math.max(values[i], interval(a)[1] ?? values[i]));
  const lows = agents.map((a, i) => Math.min(values[i], interval(a)[0] ?? values[i]));
  const { ticks, digits } = axisTicks(Math.min(...lows), Math.max(...highs, mark || 0));
  const min = ticks[0], max = ticks[ticks.length - 1];
  const x = (v) => left + ((v - min) / (max - min)) * (width - left - right);
  const chart = svg("svg", { class: "chart", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  chart.append(svg("text", { class: "title", x: left, y: 14 }, `${label} — 95% CI`));
  agents.forEach((a, i) => {
    const y = top + i * row;
    const [lo, hi] = interval(a);
    const name = a.spec.length > 26 ? a.spec.slice(0, 25) + "…" : a.spec;
    chart.append(svg("text", { class: "name", x: left - 6, y: y + 16, "text-anchor": "end" }, name));
    const from = x(Math.min(0, values[i])), to = x(Math.max(0, values[i]));
    chart.append(svg("rect", { class: "bar", x: from, y: y + 4, width: Math.max(0, to - from), height: row - 10 }));
    if (lo !== null && hi !== null) {
      chart.append(svg("line", { class: "whisker", x1: x(lo), x2: x(hi), y1: y + row / 2 - 1, y2: y + row / 2 - 1 }));
      for (const v of [lo, hi]) chart.append(svg("line", { class: "whisker", x1: x(v), x2: x(v), y1: y + 7, y2: y + row - 9 }));
    }
  });
  const axisY = top + row * agents.length + 4;
  chart.append(svg("line", { class: "whisker", x1: left, x2: width - right, y1: axisY, y2: axisY }));
  for (const v of ticks) {
    chart.append(svg("line", { class: "tick", x1: x(v), x2: x(v), y1: axisY, y2: axisY + 4 }));
    chart.append(svg("text", { class: "tick", x: x(v), y: axisY + 17, "text-anchor": "middle" }, v.toFixed(digits)));
  }
  if (mark) {
    const at = x(mark), onLeft = at > width - right - 90;  // near the right edge: the label before the line
    chart.append(svg("line", { class: "chance", x1: at, x2: at, y1: top - markRow + 2, y2: axisY }));
    chart.append(svg("text", { class: "chance", x: onLeft ? at - 4 : at + 4, y: top - 5, "text-anchor": onLeft ? "end" : "start" },
      `chance ${mark.toFixed(2)}`));
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
  // The tournament's results.png (agents/report.py) draws these two charts again: a link to
  // the file, not a second picture of the same numbers.
  const png = clear(document.getElementById("png"));
  if (data.chart) {
    png.append("The same charts as the tournament drew them: ",
      el("a", { id: "chart-file", href: `/api/results/chart?key=${encodeURIComponent(data.key)}` }, "results.png"), ".");
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
  head.hidden = !columns.length;
  head.colSpan = Math.max(1, columns.length);
  fill(document.getElementById("opponents"), columns.map((name) => el("th", { class: "opponent" }, name)));
  const body = clear(document.querySelector("#cards tbody"));
  board.rows.forEach((r, i) => {
    body.append(el("tr", { dataset: { spec: r.spec } },
      el("td", {}, i + 1),
      el("td", { class: "left agent" }, el("code", {}, r.spec), el("br"), el("code", { class: "identity" }, r.identity)),
      el("td", {}, r.is_reference ? "0 (reference)" : fmt(r.paired_mean, 1)),
      el("td", {}, fmt(r.ordinal, 2)),
      columns.map((name) => {
        const w = r.win_rates[name];
        return w ? ciCell(w.win_rate, w.ci, 3) : el("td", {}, "—");
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
