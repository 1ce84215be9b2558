// dicetable stream overlay: draws the table's snapshots for OBS's browser source. Read-only: this page sends
// nothing to the table (its socket closes on any message). ?layout=1280x720 (default), 1920x1080, lower-third.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const LAYOUTS = { "1280x720": "full", "1920x1080": "full", "lower-third": "third" };
  const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };
  const asked = new URLSearchParams(location.search).get("layout");
  const layout = Object.prototype.hasOwnProperty.call(LAYOUTS, asked) ? asked : "1280x720";
  document.documentElement.className = "layout-" + layout + " " + LAYOUTS[layout];

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function die(d) {
    const w = el("div", "die-wrap" + (d.held ? " held" : ""));
    const face = el("div", "die" + (d.held ? " held" : "") + (d.flagged ? " flagged" : ""));
    const on = PIPS[d.value] || [];
    for (let k = 0; k < 9; k++) face.appendChild(el("div", "pip" + (on.includes(k) ? " on" : "")));
    if (!on.length) face.appendChild(el("div", "unknown", "?"));
    face.setAttribute("data-value", d.value === null ? "?" : d.value);
    w.appendChild(face);
    w.appendChild(el("div", "tag", d.held ? "HELD" : ""));
    return w;
  }
  function draw(s) {
    const g = s && s.game;
    const stage = $("stage");
    stage.hidden = !g || s.screen === "setup";
    if (stage.hidden) return;
    const cur = g.current === null ? null : g.players[g.current];
    const ended = g.ended !== null || !cur;
    $("ov-player").textContent = ended ? (g.winners.length ? g.winners.join(" & ") + (g.winners.length > 1 ? " tie" : " wins") : "Game over") : cur.name;
    $("ov-round").textContent = ended ? g.title : "Round " + g.round + "/" + g.rounds + (g.roll ? " · throw " + g.roll + "/" + g.max_rolls : "");
    const dice = $("ov-dice"); dice.textContent = "";
    if (g.dice.length && !ended) g.dice.forEach((d) => dice.appendChild(die(d)));
    else dice.appendChild(el("div", "waiting", ended ? "" : "Throwing..."));
    const boxId = g.best_box || g.best;
    const opt = (g.options || []).find((o) => o.box === boxId);
    $("ov-best").textContent = opt && !ended ? "Best box: " + opt.name + " · " + opt.points : "";
    $("ov-title").textContent = g.title;
    $("ov-to-win").textContent = g.win_chances ? "to win" : "";
    const scores = $("ov-scores"); scores.textContent = "";
    const shown = g.win_chances ? window.winPercents(g.win_chances) : [];  // win-percent.js: they add up to 100
    g.players.forEach((p, i) => {
      const row = el("div", "row" + (p.current ? " current" : ""));
      const chance = g.win_chances ? g.win_chances[i] : null;
      row.append(el("span", "pname", p.name), el("span", "total", String(p.total)), el("span", "chance", shown[i] || ""));
      const bar = el("div", "bar"); const fill = el("div", "fill");
      fill.style.width = (chance === null || chance === undefined ? 0 : Math.round(chance * 1000) / 10) + "%";
      bar.appendChild(fill); row.appendChild(bar);
      row.setAttribute("data-player", i);
      scores.appendChild(row);
    });
    document.body.setAttribute("data-seq", s.seq);
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(proto + "//" + location.host + "/overlay/ws");
    ws.onmessage = (m) => draw(JSON.parse(m.data));
    ws.onclose = () => setTimeout(start, 2000);  // the table restarted: load the whole state again
  }
  function start() {
    fetch("/api/state", { cache: "no-store" }).then((r) => r.json()).then(draw).catch(() => {}).finally(connect);
  }
  start();
})();
