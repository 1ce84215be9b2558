// The end screen's "fair dice" panel (snapshot.fairness: table.audit.panel): counts per face, p, verdict, power.
// Registered as a render hook (app.js calls each of window.onTableSnapshot with the snapshot).
(function () {
  "use strict";
  function line(cls, text) { const d = document.createElement("div"); d.className = cls; d.textContent = text; return d; }
  function render(s) {
    const box = document.getElementById("fairdice");
    const f = s.screen === "end" ? s.fairness : null;
    box.hidden = !f;
    if (!f) return;
    box.textContent = "";
    box.append(line("fd-title", "Fair dice"));
    if (!f.dice) {
      box.append(line("fd-line", "No camera-read rolls in this game: nothing to test."));
      return;
    }
    const row = document.createElement("div"); row.className = "fd-counts";
    f.counts.forEach((c, k) => row.append(line("fd-face", (k + 1) + ": " + c)));
    box.append(row);
    const p = f.p === null ? "too few dice for a p-value" : "p = " + (f.p < 0.001 ? f.p.toExponential(1) : f.p.toFixed(3));
    box.append(line("fd-line", f.dice + " dice, " + p + ". " + f.verdict));
    box.append(line("fd-line fd-dim", f.power_line));
    const apart = [];
    if (f.corrected) apart.push(f.corrected + " corrected");
    if (f.unreadable) apart.push(f.unreadable + " unreadable throws");
    if (apart.length) box.append(line("fd-line fd-dim", "Counted apart: " + apart.join(", ") + "."));
  }
  (window.onTableSnapshot = window.onTableSnapshot || []).push(render);
})();
