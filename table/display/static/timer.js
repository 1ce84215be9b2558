// Turn timer: the game's countdown. The table pushes the seconds left with each snapshot; the page counts
// down between them (4 times a second) and turns red in the last 10 s. The table, not the page, fires the
// expiry (TableApp's worker, on the monotonic clock).
"use strict";
(function () {
  const views = (window.onTableSnapshot = window.onTableSnapshot || []);
  let box = null, left = null, since = 0, tick = null;
  function fmt(s) { s = Math.max(0, Math.ceil(s)); return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0"); }
  function draw() {
    if (!box || left === null) return;
    const now = left - (performance.now() - since) / 1000;
    box.textContent = fmt(now);
    box.classList.toggle("warn", now <= 10);
  }
  views.push(function (s, dt) {
    if (!box) {
      box = dt.el("div", "countdown"); box.id = "timer"; box.title = "time left in this turn";
      const head = document.querySelector("#game .turn");
      head.insertBefore(box, document.getElementById("roll-info"));
    }
    const t = s.timer;
    box.hidden = !t || s.screen !== "game";
    if (t && s.screen === "game") {
      left = t.left; since = performance.now(); draw();
      if (!tick) tick = setInterval(draw, 250);
    } else {
      left = null;
      if (tick) { clearInterval(tick); tick = null; }
    }
  });
})();
