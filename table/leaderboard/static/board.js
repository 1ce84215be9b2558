// dicetable leaderboard page: polls /api/board every POLL_MS and redraws; read-only (it only GETs).
// With ?ruleset=R it shows R; else it turns through the rulesets played, ROTATE_MS each.
"use strict";

const POLL_MS = 1500;
const ROTATE_MS = 20000;
const FIVES = { yahtzee: "Yahtzees", yacht: "Yachts", yatzy: "Yatzys", chaser: "Chase Offs", generala: "Generalas" };
const PERIOD_NAMES = { day: "Today", week: "This week", all: "All time" };
const MAX_SHOWN = 16; // cards that fit at 1920x1080 in four columns; the rest are counted below them
const pinned = new URLSearchParams(location.search).get("ruleset") || "";
let showRuleset = pinned;
let rotatedAt = Date.now();

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function tableCard(t) {
  const card = el("div", "table" + (t.online === false ? " offline" : ""));
  card.dataset.table = t.table;
  const head = el("div", "thead");
  head.append(el("span", "tname", t.table));
  const status = t.online === null ? "status unknown" : t.online ? "online" : "offline";
  head.append(el("span", "tstatus " + (t.online ? "on" : "off"), status));
  card.append(head);
  const s = t.state;
  if (!s || !s.game) {
    card.append(el("div", "tgame", "no game on"));
    return card;
  }
  const what = s.finished ? "finished" : `round ${s.round}/${s.rounds}`;
  card.append(el("div", "tgame", s.ruleset ? `${s.ruleset} · ${what}` : "free rolling"));
  // a finished game's chances are 100 % / 0 %: the totals say it all
  const chances = Array.isArray(s.win_chances) && !s.finished ? window.winPercents(s.win_chances) : null;
  s.players.forEach((p, k) => {
    const now = !s.finished && s.current === k;
    const row = el("div", "seat" + (now ? " now" : ""));
    row.append(el("span", "turn", now ? "▶" : ""));
    row.append(el("span", "pname", p.name));
    row.append(el("span", "ptotal", p.total === null ? "" : p.total));
    row.append(el("span", "pchance", chances ? chances[k] : ""));
    card.append(row);
  });
  return card;
}

function periodList(period, rows) {
  const box = el("div", "period");
  box.dataset.period = period;
  box.append(el("h3", "", PERIOD_NAMES[period]));
  const list = el("ol");
  rows.forEach((r, k) => {
    const li = el("li");
    li.append(el("span", "rank", k + 1), el("span", "who", r.player), el("span", "pts", r.total));
    li.title = `${r.table}, ${new Date(r.at * 1000).toLocaleString()}`;
    list.append(li);
  });
  if (!rows.length) list.append(el("li", "none", "no finished game"));
  box.append(list);
  return box;
}

function playersTable(ruleset, rows) {
  const table = document.getElementById("players");
  table.replaceChildren();
  const head = el("tr");
  for (const h of ["Player", "Games", "Wins", "Mean", "Best", FIVES[ruleset] || "Five alike"]) head.append(el("th", "", h));
  table.append(head);
  for (const r of rows) {
    const tr = el("tr");
    for (const v of [r.player, r.games, r.wins, r.mean.toFixed(1), r.best, r.fives]) tr.append(el("td", "", v));
    table.append(tr);
  }
}

function draw(data) {
  if (!showRuleset) showRuleset = data.ruleset;
  const broker = document.getElementById("broker");
  broker.textContent = data.broker;
  broker.classList.toggle("down", !data.connected);
  // tables in play first, then the others online, then the offline ones; by name within each
  const rank = (t) => (t.online === false ? 2 : t.state && t.state.game && !t.state.finished ? 0 : 1);
  const sorted = [...data.tables].sort((a, b) => rank(a) - rank(b) || a.table.localeCompare(b.table));
  const cards = sorted.slice(0, MAX_SHOWN);
  const tables = document.getElementById("tables");
  tables.className = "tables" + (cards.length > 8 ? " cols4" : cards.length > 6 ? " cols3" : "");
  tables.replaceChildren(...cards.map(tableCard));
  document.querySelector(".grid").classList.toggle("many", cards.length > 8);
  document.getElementById("no-tables").hidden = data.tables.length > 0;
  const more = document.getElementById("more-tables");
  more.hidden = sorted.length <= MAX_SHOWN;
  more.textContent = `and ${sorted.length - MAX_SHOWN} more tables (/api/tables lists them all)`;
  document.getElementById("ruleset").textContent = data.ruleset;
  document.getElementById("ruleset2").textContent = data.ruleset;
  const scores = document.getElementById("scores");
  scores.replaceChildren(...Object.entries(data.scores).map(([p, rows]) => periodList(p, rows)));
  playersTable(data.ruleset, data.players);
  // turn to the next ruleset played, unless one is pinned by ?ruleset=
  if (!pinned && data.rulesets.length > 1 && Date.now() - rotatedAt > ROTATE_MS) {
    const k = data.rulesets.indexOf(data.ruleset);
    showRuleset = data.rulesets[(k + 1) % data.rulesets.length];
    rotatedAt = Date.now();
  }
}

async function poll() {
  try {
    const r = await fetch("/api/board?ruleset=" + encodeURIComponent(showRuleset), { cache: "no-store" });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    draw(await r.json());
  } catch (err) {
    const broker = document.getElementById("broker");
    broker.textContent = `leaderboard not answering (${err.message}); retrying`;
    broker.classList.add("down");
  }
  document.getElementById("clock").textContent = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  setTimeout(poll, POLL_MS);
}

poll();
