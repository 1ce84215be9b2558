// Setup screen additions: free roll among the rules, the turn timer's choices and the roll-off button.
// Drawn after app.js's setup (window.onTableSnapshot); every choice is sent to the table, which checks it.
"use strict";
(function () {
  const views = (window.onTableSnapshot = window.onTableSnapshot || []);
  const $ = (id) => document.getElementById(id);
  let drawn = "";
  function label(t) { return t === null ? "Off" : String(t); }

  views.push(function (s, dt) {
    if (s.screen !== "setup") return;
    const st = s.setup;
    const key = JSON.stringify([st.mode, st.timer_s, st.timers, st.ruleset, st.names]);
    const rs = $("rulesets");
    if (key === drawn && rs.querySelector(".free-btn")) return;
    drawn = key;
    const free = st.mode === "free_roll";
    let fb = rs.querySelector(".free-btn");
    if (!fb) { fb = dt.el("button", "free-btn", "Free roll"); fb.type = "button"; rs.appendChild(fb); }
    fb.onclick = () => dt.send({ type: "setup", mode: "free_roll" });
    fb.classList.toggle("on", free);
    for (const b of rs.querySelectorAll("button:not(.free-btn)")) {
      if (free) b.classList.remove("on");
      const id = st.rulesets.find((r) => r.title === b.textContent);
      if (id) b.onclick = () => dt.send({ type: "setup", ruleset: id.id, mode: "scorecard" });
    }
    const ts = $("timers"); ts.textContent = "";
    for (const t of [null].concat(st.timers)) {
      const b = dt.el("button", t === st.timer_s ? "on" : "", label(t)); b.type = "button";
      b.onclick = () => dt.send({ type: "setup", timer_s: t });
      ts.appendChild(b);
    }
    document.querySelector('.field[data-field="timer"]').classList.toggle("off", free);
    $("rolloff-btn").onclick = () => dt.send({ type: "rolloff", start: true });
  });
})();
