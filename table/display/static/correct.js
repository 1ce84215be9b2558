// Fix view: pick a misread die, tap the value it shows, save. The table keeps the view (snapshot.fix), so the
// buttons and the taps drive the same thing; it records the correction (who, when, old and new value).
"use strict";
(function () {
  const views = (window.onTableSnapshot = window.onTableSnapshot || []);
  const $ = (id) => document.getElementById(id);

  views.push(function (s, dt) {
    const f = s.fix;
    const sec = $("fix");
    sec.hidden = !f;
    if (!f) return;
    for (const id of ["setup", "game", "end", "free", "history"]) $(id).hidden = true;
    const fix = (msg) => dt.send(Object.assign({ type: "fix", seen: dt.seenNow() }, msg));
    const dice = $("fix-dice"); dice.textContent = "";
    f.dice.forEach((v, i) => {
      const w = dt.el("div", "die-wrap" + (i === f.die ? " picked" : ""));
      w.appendChild(dt.die(i === f.die ? f.value : v, i === f.die ? " picked" : ""));
      w.appendChild(dt.el("div", "die-label", i === f.die && f.value !== v ? "was " + v : "die " + (i + 1)));
      w.onclick = () => fix({ die: i });
      w.setAttribute("data-die", i);
      dice.appendChild(w);
    });
    const vals = $("fix-values"); vals.textContent = "";
    for (let v = 1; v <= 6; v++) {
      const w = dt.el("div", "die-wrap");
      w.appendChild(dt.die(v, v === f.value ? " held" : ""));
      w.onclick = () => fix({ value: v });
      w.setAttribute("data-value", v);
      vals.appendChild(w);
    }
    $("fix-save").onclick = () => fix({ confirm: true });
    $("fix-cancel").onclick = () => fix({ cancel: true });
  });
})();
