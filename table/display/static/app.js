// dicetable page: draws the snapshots the table pushes over the WebSocket; sends commands.
// No game logic here: every number comes from the server.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  // pin: the PIN the table took, sent with each command; offered: one sent to "unlock", not yet answered;
  // token: what the table gave for the PIN, offered first on reconnecting (never locked out, unlike a PIN);
  // kept in the tab's sessionStorage, as phones reload tabs they put to sleep
  let ws = null, snap = null, pin = "", offered = null, token = stored(), cameraSeq = -1;
  function stored(value) {
    try {
      if (value === undefined) return sessionStorage.getItem("dicetable-token") || "";
      if (value) sessionStorage.setItem("dicetable-token", value); else sessionStorage.removeItem("dicetable-token");
    } catch (e) { /* storage off (private mode): the token lasts as long as the page */ }
    return value || "";
  }
  const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function send(msg) {
    if (ws && ws.readyState === 1) { if (pin) msg.pin = pin; ws.send(JSON.stringify(msg)); }
  }
  // `seen`: the snapshot drawn when it was pressed (default: now), so that the table never takes a press for
  // something this page had not shown yet (TableApp.press: "End this game?" asked meanwhile, another box)
  function seenNow() { return snap ? snap.seq : -1; }
  function command(name, seen = seenNow()) { send({ type: "command", command: name, seen: seen }); }
  // ask the table to take a PIN; `again`: one it took before (re-offered after a reconnect)
  function offer(p, again) { offered = { pin: p, again: again }; send({ type: "unlock", pin: p }); }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(proto + "//" + location.host + "/ws");
    ws.onopen = () => {
      $("conn").hidden = true;
      // a new connection (the table may have restarted with a new PIN): offer the PIN once, and send
      // commands without it until the table takes it, so that a stale PIN is not one wrong try per press
      // (or the one offered, or kept beside a token, as the last socket closed)
      const p = pin || (offered && (offered.again || offered.token) ? offered.pin : "");
      offered = null;
      pin = "";
      if (token) { offered = { token: token, pin: p }; send({ type: "unlock", token: token }); }
      else if (p) offer(p, true);
    };
    ws.onclose = () => { $("conn").hidden = false; $("conn").textContent = "Lost the table; reconnecting..."; setTimeout(connect, 1000); };
    ws.onmessage = (m) => {
      const data = JSON.parse(m.data);
      if (data.type === "refused") { $("message").textContent = data.message; return; }
      if (data.type === "unlock") {
        const tried = offered; offered = null;
        if (data.token) token = stored(data.token);
        if (data.ok) { if (tried) pin = tried.pin; return; }
        if (data.by === "token") {  // a table that restarted forgot it: offer the PIN, if there is one
          token = stored("");
          if (tried && tried.pin) offer(tried.pin, true);
          else $("message").textContent = "The table restarted: enter the PIN shown on its screen.";
          return;
        }
        pin = "";
        // refused unchecked during a lock-out (wait_s): a PIN the table took before is offered again then
        if (tried && tried.again && data.wait_s) setTimeout(() => { if (!pin && !offered) offer(tried.pin, true); },
                                                          data.wait_s * 1000 + 250);
        $("message").textContent = data.message || (tried && tried.again
          ? "The table's PIN has changed (it restarted?): enter the PIN shown on its screen." : "Wrong PIN.");
        return;
      }
      snap = data;
      render(data);
      const seq = data.seq;
      document.body.dataset.seq = seq;
      requestAnimationFrame(() => send({ type: "rendered", seq: seq }));
    };
  }

  function die(value, extra) {
    const d = el("div", "die" + (extra || ""));
    const on = PIPS[value] || [];
    for (let k = 0; k < 9; k++) d.appendChild(el("div", "pip" + (on.includes(k) ? " on" : "")));
    d.setAttribute("data-value", value);
    return d;
  }

  function render(s) {
    document.body.classList.toggle("readonly", !s.can_command);
    for (const name of ["setup", "game", "end"]) $(name).hidden = s.screen !== name;
    if (s.screen === "setup") renderSetup(s.setup);
    if (s.game && s.screen !== "setup") { renderGame(s, s.game); renderEnd(s.game); renderAnalysis(s.analysis); renderEndView(s); }
    renderMenu(s.menu);
    renderTroubles(s.troubles || []);
    $("menu-note").textContent = s.menu.open ? s.message || "" : "";  // the footer's line is short beside the keys
    let msg = s.message || "";
    if (s.note) msg = s.note + " " + msg;
    $("message").textContent = msg;
    $("roll-btn").textContent = s.screen === "game" && s.synthetic ? "ROLL" : "CONFIRM";
    renderPin(s);
    for (const hook of window.onTableSnapshot || []) hook(s, api);  // page parts in their own files: sharing, chances, timer, history, fix, free roll
  }

  function renderTroubles(troubles) {  // what the table cannot use and what to do (dicetable doctor's line)
    const box = $("troubles"); box.textContent = "";
    for (const t of troubles) { const e = el("div", "trouble", t.text); e.setAttribute("data-part", t.part); box.appendChild(e); }
    box.hidden = !troubles.length;
  }

  function renderPin(s) {
    const box = $("pinbox");
    if (s.local && s.pin) { box.textContent = "PIN " + s.pin; return; }
    if (s.can_command) { box.textContent = ""; return; }
    if (box.querySelector("input")) return;
    box.textContent = "Watching. ";
    const input = el("input"); input.type = "password"; input.inputMode = "numeric"; input.placeholder = "PIN";
    const ok = el("button", "", "Control");
    ok.onclick = () => offer(input.value.trim(), false);
    box.append(input, ok);
  }

  function renderGame(s, g) {
    const cur = g.current === null ? null : g.players[g.current];
    $("player-name").textContent = cur ? cur.name : (g.winners.length ? "Game over" : "");
    $("turn-info").textContent = "Round " + g.round + " of " + g.rounds + " · " + g.title;
    $("roll-info").textContent = g.roll ? "Roll " + g.roll + " of " + g.max_rolls : "Roll the dice";
    const hints = g.hints || null;
    const botline = $("botline");
    botline.hidden = !s.bot;
    botline.textContent = s.bot ? s.bot.text : "";
    const dice = $("dice"); dice.textContent = "";
    const onScreen = s.bot && s.bot.dice === "virtual";  // a bot rolls on screen: nobody throws
    const none = onScreen ? s.bot.name + " (bot) is rolling..." : s.camera.status === "moving" ? "Dice rolling..." : "Throw all five dice";
    if (!g.dice.length) dice.appendChild(el("div", "empty", none));
    g.dice.forEach((d, i) => {
      const w = el("div", "die-wrap");
      let cls = d.held ? " held" : "";
      if (d.flagged) cls += " flagged";
      if (hints && hints.holds && !hints.stop && hints.holds[i]) cls += " hint";
      w.appendChild(die(d.value, cls));
      w.appendChild(el("div", "die-label" + (d.held ? " held" : ""), d.held ? "HELD " + (i + 1) : "HOLD " + (i + 1)));
      w.onclick = () => holdTap(i);
      w.setAttribute("data-die", i);
      dice.appendChild(w);
    });
    const warn = $("warnings"); warn.textContent = "";
    for (const w of s.warnings) { const e = el("div", "warning", w.text); e.setAttribute("data-kind", w.kind); warn.appendChild(e); }
    const opts = $("options"); opts.textContent = "";
    const costs = (hints && hints.costs) || {};
    const hint = $("hint");
    hint.hidden = !hints;
    if (hints) {
      const names = {};
      for (const o of g.options) names[o.box] = o.name;
      if (hints.holds && !hints.stop) {
        hint.textContent = "Hint: keep " + (hints.keep.length ? hints.keep.join(" ") : "nothing") + " and roll again" +
          (hints.hold_cost > 0 ? " (your holds lose " + hints.hold_cost + ")" : "");
      } else {
        hint.textContent = "Hint: score " + (names[hints.box] || hints.box) + " now";
      }
    }
    const n = g.options.length;
    opts.style.gridTemplateColumns = "repeat(" + (n > 8 ? 3 : 2) + ", minmax(0, 1fr))";
    opts.classList.toggle("dense", n > 8);
    g.options.forEach((o, k) => {
      let cls = "opt" + (o.best ? " best" : "") + (o.selected ? " selected" : "") + (o.points === 0 ? " zero" : "");
      if (hints && hints.box === o.box) cls += " hint";
      const e = el("div", cls);
      e.setAttribute("data-box", o.box);
      e.appendChild(el("span", "name", o.name));
      const p = el("span", "pts", String(o.points));
      if (costs[o.box] > 0) p.appendChild(el("span", "cost", "−" + costs[o.box]));
      e.appendChild(p);
      e.onclick = () => selectBox(g, k);
      opts.appendChild(e);
    });
    const players = $("players"); players.textContent = "";
    players.classList.toggle("many", g.players.length > 3);
    for (const p of g.players) {
      const e = el("div", "pl" + (p.current ? " current" : ""));
      const pn = el("span", "pname", p.name);
      if (p.bot) pn.appendChild(el("span", "bot-tag", p.bot));
      const r1 = el("div", "row1"); r1.append(pn, el("span", "total", String(p.total)));
      e.appendChild(r1);
      if (p.upper_target) {
        const u = el("div", "upper");
        u.appendChild(el("span", "", "Upper " + p.upper_sum + "/" + p.upper_target));
        const bo = el("div", "bar-out"), bi = el("div", "bar-in" + (p.upper_bonus ? " done" : ""));
        bi.style.width = Math.min(100, 100 * p.upper_sum / p.upper_target) + "%";
        bo.appendChild(bi); u.appendChild(bo);
        if (p.upper_bonus) u.appendChild(el("span", "", "+" + p.upper_bonus));
        e.appendChild(u);
      }
      players.appendChild(e);
    }
    fillCard($("card"), g);
    $("card").classList.toggle("many", g.players.length > 4);  // too many columns: the strip shows them
    const cam = $("camera");
    if (s.camera.has_view && s.camera.seq !== cameraSeq) { cameraSeq = s.camera.seq; cam.src = "/camera.jpg?n=" + cameraSeq; cam.hidden = false; }
  }

  // A tap (or key 1-5) on a die asks for the state the page does not show (held or free), so a tap crossing a
  // button's HOLD is harmless and quick taps on several dice never wait for the page to redraw.
  function holdTap(i) {
    const d = snap && snap.game && snap.game.dice[i];
    if (!d) { command("hold_" + (i + 1)); return; }  // no dice shown: the table says why
    send({ type: "hold", die: i, held: !d.held, seen: seenNow() });
  }

  // A tap on a box selects it, or scores it when it is selected; it names the box, so that a page whose
  // selection is out of date never scores another one.
  function selectBox(g, k) { send({ type: "box", box: g.options[k].box, seen: seenNow() }); }

  function fillCard(t, g) {
    t.textContent = "";
    const head = el("tr"); head.appendChild(el("th", "", ""));
    for (const p of g.players) head.appendChild(el("th", p.current ? "cur" : "", p.name));
    t.appendChild(head);
    for (const b of g.boxes) {
      const r = el("tr"); r.appendChild(el("td", "", b.name));
      for (const p of g.players) { const v = p.boxes[b.id]; r.appendChild(el("td", "", v === null || v === undefined ? "" : String(v))); }
      t.appendChild(r);
    }
    const extra = [];
    if (g.players.length && g.players[0].upper_target) {
      extra.push(["Upper bonus", (p) => p.upper_sum + "/" + p.upper_target + (p.upper_bonus ? " +" + p.upper_bonus : "")]);
    }
    if (g.players.length && g.players[0].yahtzee_bonus !== null) extra.push(["Yahtzee bonus", (p) => String(p.yahtzee_bonus)]);
    extra.push(["Total", (p) => String(p.total)]);
    extra.forEach(([name, f], k) => {
      const r = el("tr", k === extra.length - 1 ? "sum" : ""); r.appendChild(el("td", "", name));
      for (const p of g.players) r.appendChild(el("td", "", f(p)));
      t.appendChild(r);
    });
  }

  function renderEnd(g) {
    const names = g.winners;
    $("winners").textContent = names.length ? (names.length > 1 ? "Winners: " : "Winner: ") + names.join(" and ") +
      " with " + Math.max(...g.players.map((p) => p.total)) + " points" : "Game over";
    fillCard($("end-card"), g);
  }

  function renderEndView(s) {
    // Up to four players the scorecards and the analysis sit side by side; more: one view at a time (fit.js: also small screens, 3+ players).
    const many = s.game.players.length > 4;
    const end = $("end");
    end.classList.toggle("many", many);
    end.dataset.view = s.end_view || "card";
    $("end-tabs").hidden = !many || !s.analysis;
    for (const b of $("end-tabs").querySelectorAll("button")) {
      b.classList.toggle("on", b.dataset.view === end.dataset.view);
      b.onclick = () => { if (b.dataset.view !== end.dataset.view) command("next"); };
    }
  }

  function twoLines(cls, first, second) {
    const td = el("td", cls);
    td.append(el("div", "l1", first), el("div", "l2", second));
    return td;
  }

  function renderAnalysis(a) {
    const box = $("analysis");
    box.hidden = !a;
    $("export-analysis").hidden = !(a && a.status === "ready");
    if (!a) return;
    const status = $("analysis-status");
    status.textContent = a.status === "computing" ? "Analysing the game..." :
      a.status === "unavailable" ? "No analysis for these rules: no strategy table (dicetable strategy builds it)." : "";
    status.hidden = a.status === "ready";
    const pt = $("analysis-players"); pt.textContent = "";
    const wt = $("analysis-worst").tBodies[0]; wt.textContent = "";
    $("worst-title").hidden = !(a.worst && a.worst.length);
    if (a.status !== "ready") return;
    pt.classList.toggle("many", a.players.length > 4);
    for (const p of a.players) {
      const e = el("div", "an-pl");
      const opt = el("span", "an-opt", p.optimal + "/" + p.decisions);
      opt.appendChild(el("span", "word", " optimal"));
      e.append(el("span", "an-name", p.name), el("span", "an-loss", p.loss.toFixed(1)), opt);
      e.title = p.optimal + " of " + p.decisions + " decisions optimal";
      pt.appendChild(e);
    }
    for (const d of a.worst) {
      const r = el("tr");
      r.append(twoLines("an-who", d.name, "turn " + d.turn + ", roll " + d.roll),
               el("td", "an-dice", d.dice.join(" ")),
               twoLines("an-choice", d.choice, "best: " + d.best),
               el("td", "an-loss", "\u2212" + d.loss.toFixed(1)));
      wt.appendChild(r);
    }
  }

  let setupDrawn = "";
  function renderSetup(st) {
    const key = JSON.stringify(st);
    if (key === setupDrawn) return;
    setupDrawn = key;
    for (const f of document.querySelectorAll(".field")) f.classList.toggle("focus", f.dataset.field === st.field);
    const rs = $("rulesets"); rs.textContent = "";
    for (const r of st.rulesets) {
      const b = el("button", r.id === st.ruleset ? "on" : "", r.title); b.type = "button";
      b.onclick = () => send({ type: "setup", ruleset: r.id }); rs.appendChild(b);
    }
    $("joker-field").style.visibility = st.has_joker ? "visible" : "hidden";
    const js = $("jokers"); js.textContent = "";
    for (const j of st.jokers) {
      const b = el("button", j.id === st.joker ? "on" : "", j.title); b.type = "button";
      b.onclick = () => send({ type: "setup", joker: j.id }); js.appendChild(b);
    }
    const names = $("names");
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.k : null;
    names.textContent = "";
    st.names.forEach((n, k) => {
      const i = el("input"); i.value = n; i.maxLength = 40; i.dataset.k = k;
      i.onchange = () => { const all = [...names.querySelectorAll("input")].map((x) => x.value.trim()); send({ type: "setup", names: all }); };
      names.appendChild(i);
      if (String(k) === focused) i.focus();
    });
    $("add-player").onclick = () => { if (st.names.length < 8) send({ type: "setup", names: st.names.concat(["Player " + (st.names.length + 1)]) }); };
    $("add-bot").onclick = () => { if (st.names.length < 8) send({ type: "setup", names: st.names.concat(["Bot " + (st.names.length + 1) + ":optimal"]) }); };
    $("remove-player").onclick = () => { if (st.names.length > 1) send({ type: "setup", names: st.names.slice(0, -1) }); };
    // Start names the rules and players shown, so that a lagging page never starts a game it did not show
    // (the names as typed in the boxes: a name typed just before the tap is not yet in the snapshot)
    $("start").onclick = () => send({ type: "setup", start: true, ruleset: st.ruleset, joker: st.joker,
                                      names: [...names.querySelectorAll("input")].map((x) => x.value.trim()) });
  }

  function renderMenu(m) {
    $("menu").hidden = !m.open;
    const ol = $("menu-items"); ol.textContent = "";
    m.items.forEach((it, k) => {
      const li = el("li", k === m.index ? "on" : "", it.title);
      li.onclick = (ev) => { ev.stopPropagation(); tapMenuItem(m, k); };
      ol.appendChild(li);
    });
  }

  // One tap on the menu per menu drawn: a second tap before the table's answer is drawn (a double tap) is not
  // sent (the table would refuse it as made on a menu that is gone, and say so).
  let menuTappedAt = { seq: -1, ms: 0 };
  function menuTapTaken() {
    if (snap.seq === menuTappedAt.seq && Date.now() - menuTappedAt.ms < 2000) return false;
    menuTappedAt = { seq: snap.seq, ms: Date.now() };
    return true;
  }

  function tapMenuItem(m, k) {
    // A tap on an item names it and the snapshot drawn, so the table never takes it for key steps on a menu
    // that changed meanwhile (a button may have asked the question, or closed the menu).
    // While the menu asks, a tap on the question answers yes; any other item, no.
    if (!menuTapTaken()) return;
    send({ type: "menu", item: m.items[k].id, seen: seenNow() });
  }
  // a tap on the dark page around the menu closes it, as "Back to the game" does (MENU would open again a
  // menu the table had closed meanwhile)
  $("menu").onclick = (ev) => {
    if (ev.target === $("menu") && menuTapTaken()) send({ type: "menu", item: "resume", seen: seenNow() });
  };

  // Buttons on the page: the same commands as the table's buttons.
  for (const b of document.querySelectorAll(".keys button")) {
    if (b.dataset.cmd === "undo") continue;
    b.onclick = () => { b.blur(); command(b.dataset.cmd); };  // no focus left for Enter to click again
  }
  // UNDO needs a long press on the page too.
  let undoTimer = null;
  const undo = $("undo-btn");
  // the UNDO is of what the page showed when the finger went down, not of what arrived during the hold
  const undoDown = () => {
    const seen = seenNow();
    undoTimer = setTimeout(() => { undoTimer = null; command("undo", seen); }, 800);
  };
  const undoUp = () => { if (undoTimer) { clearTimeout(undoTimer); undoTimer = null; $("message").textContent = "Hold UNDO to undo."; } };
  undo.addEventListener("pointerdown", undoDown);
  undo.addEventListener("pointerup", undoUp);
  undo.addEventListener("pointerleave", undoUp);

  document.addEventListener("keydown", (ev) => {
    if (!snap || ev.target.tagName === "INPUT") return;
    const cmd = snap.keymap[ev.key] || snap.keymap[ev.key.toLowerCase()];
    if (!cmd) return;
    ev.preventDefault();  // also keeps Enter and Space from clicking a page key that has focus
    // a held key repeats: one press is one command (holding Enter used to confirm "End this game?"),
    // except PREV/NEXT, which step through the boxes while held
    if (ev.repeat && cmd !== "prev" && cmd !== "next") return;
    if (cmd.startsWith("hold_")) holdTap(Number(cmd.slice(5)) - 1); else command(cmd);
  });
  const api = { send: send, command: command, seenNow: seenNow, el: el, die: die };
  connect();
})();
