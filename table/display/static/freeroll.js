// Free roll (each value read, the total, the log of throws) and the roll-off (who starts: each player's
// throw, ties thrown again). The table reads the dice; here they are drawn, and roll-off faces can be tapped in.
"use strict";
(function () {
  const views = (window.onTableSnapshot = window.onTableSnapshot || []);
  const $ = (id) => document.getElementById(id);

  let cameraSeq = -1;

  function drawFree(s, dt) {
    const f = s.free;
    const show = !!f && s.screen === "game" && !s.history && !s.fix;
    $("free").hidden = !show;
    if (!show) return;
    $("game").hidden = true;
    $("free-total").textContent = f.last ? f.last.values.length + " dice: total " + f.last.total : "Throw the dice";
    const dice = $("free-dice"); dice.textContent = "";
    if (f.last) {  // in a die-wrap, as the game's dice: a die's padding is a share of its container's width
      f.last.values.forEach((v) => { const w = dt.el("div", "die-wrap"); w.appendChild(dt.die(v)); dice.appendChild(w); });
    }
    else dice.appendChild(dt.el("div", "empty", "Up to " + f.max_dice + " dice; the table reads and sums them"));
    const cam = $("free-camera");  // the camera's view, as on the game screen
    if (s.camera.has_view && s.camera.seq !== cameraSeq) { cameraSeq = s.camera.seq; cam.src = "/camera.jpg?n=" + cameraSeq; cam.hidden = false; }
    const log = $("free-log"); log.textContent = "";
    for (const r of f.log.slice(1)) {
      const tr = dt.el("tr");
      tr.append(dt.el("td", "h-name", "#" + r.n), dt.el("td", "h-throw", r.values.join(" ")), dt.el("td", "h-box", "= " + r.total));
      log.appendChild(tr);
    }
  }

  function drawRolloff(s, dt) {
    const r = s.rolloff;
    $("rolloff").hidden = !r;
    if (!r) return;
    $("ro-title").textContent = r.winner ? r.winner + " starts!" : "Roll-off, round " + r.round + ": who starts";
    const t = $("ro-rows"); t.textContent = "";
    const rounds = Math.max(r.round, ...r.log.map((x) => x.round));
    for (const name of r.players) {
      const tr = dt.el("tr", name === r.winner ? "win" : r.waiting[0] === name ? "next" : "");
      tr.appendChild(dt.el("td", "h-name", name));
      for (let k = 1; k <= rounds; k++) {
        const x = r.log.find((e) => e.round === k && e.name === name);
        tr.appendChild(dt.el("td", "h-throw", x ? String(x.face) : k === r.round && r.throwing.includes(name) ? "\u2026" : ""));
      }
      t.appendChild(tr);
    }
    const who = $("ro-who"), faces = $("ro-faces");
    faces.textContent = "";
    if (r.winner) {
      who.textContent = "";
      const take = dt.el("button", "big", "Take this order"); take.type = "button";
      take.onclick = () => dt.command("roll");
      faces.appendChild(take);
    } else {
      who.textContent = r.waiting[0] + " threw: ";
      for (let v = 1; v <= 6; v++) {
        const b = dt.el("button", "", String(v)); b.type = "button";
        b.onclick = () => dt.send({ type: "rolloff", face: v });
        faces.appendChild(b);
      }
    }
    const leave = dt.el("button", "", "Leave"); leave.type = "button";
    leave.onclick = () => dt.command("menu");
    faces.appendChild(leave);
  }

  views.push(function (s, dt) { drawFree(s, dt); drawRolloff(s, dt); });
})();
