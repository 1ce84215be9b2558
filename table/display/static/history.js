// History view: round by round, each player's throws (held dice in gold, re-rolled ones plain, a fixed die
// marked), the box scored, corrections and timer expiries. The table sends the round shown (snapshot.history);
// PREV/NEXT and the taps here step through the rounds.
"use strict";
(function () {
  const views = (window.onTableSnapshot = window.onTableSnapshot || []);
  const $ = (id) => document.getElementById(id);

  function throwCell(dt, t, fixes) {
    const td = dt.el("td", "h-throw");
    if (!t) return td;
    t.dice.forEach((v, i) => {
      const fixed = fixes.some((c) => c.roll === t.roll && c.die === i);
      const cls = "h-die" + (t.held[i] ? " held" : "") + (fixed ? " fixed" : "");
      const d = dt.el("span", cls, String(v));
      d.title = t.held[i] ? "held" : "re-rolled";
      td.appendChild(d);
    });
    return td;
  }

  function notes(turn) {
    const out = turn.corrections.map((c) => "die " + (c.die + 1) + ": " + c.was + "\u2192" + c.value + " (" + c.by + ")");
    for (const x of turn.timer) out.push(x.rolled ? "time up: scored" : "time up, no roll");
    return out.join("; ");
  }

  views.push(function (s, dt) {
    const h = s.history;
    const sec = $("history");
    sec.hidden = !h;
    if (!h) return;
    for (const id of ["setup", "game", "end", "free"]) $(id).hidden = true;
    $("hist-title").textContent = h.free ? "Free roll: the last throws" :
      h.rounds ? "Round " + h.round + " of " + h.rounds : "No round played yet";
    const t = $("hist-rows"); t.textContent = "";
    t.classList.toggle("many", h.turns.length > 5);
    const head = dt.el("tr");
    for (const c of ["Player", "Throw 1", "Throw 2", "Throw 3", "Box", "Notes"]) head.appendChild(dt.el("th", "", c));
    t.appendChild(head);
    for (const turn of h.turns) {
      const r = dt.el("tr");
      r.appendChild(dt.el("td", "h-name", h.free ? "#" + (turn.turn + 1) : turn.name));
      for (let k = 0; k < 3; k++) r.appendChild(throwCell(dt, turn.throws[k], turn.corrections));
      const box = turn.box ? (h.boxes[turn.box] || turn.box) + " " + turn.points : h.free ? "" : "playing";
      r.appendChild(dt.el("td", "h-box" + (turn.cause === "timer" ? " timer" : ""), box));
      r.appendChild(dt.el("td", "h-notes", notes(turn)));
      t.appendChild(r);
    }
    for (const b of sec.querySelectorAll("[data-hist]")) {
      b.onclick = () => dt.command(b.dataset.hist === "back" ? "menu" : b.dataset.hist);
    }
  });
})();
