// Small hooks that keep the page's words true and its layout whole (see fit.css).
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  let last = null;

  // A screen under 700 px high or 1000 px wide shows the end screen's scorecards and analysis one at a time
  // (PREV/NEXT or the tabs switch), as app.js does for more than four players anywhere.
  function endViews(s) {
    if (s.screen !== "end" || !s.game) return;
    const small = innerHeight < 700 || innerWidth < 1000;
    const many = s.game.players.length > 2 || small;  // three or more: the fair-dice panel leaves no room beside
    $("end").classList.toggle("many", many);
    $("end-tabs").hidden = !many || !s.analysis;
    // The biggest mistakes: as many rows as fit whole (the worst first), never a row cut in half.
    const box = $("analysis"), rows = [...$("analysis-worst").tBodies[0].rows];
    for (const r of rows) r.hidden = false;
    if (box.hidden || box.offsetParent === null) return;
    const bottom = box.getBoundingClientRect().bottom - 4;
    for (let k = rows.length - 1; k >= 0 && rows[k].getBoundingClientRect().bottom > bottom; k--) rows[k].hidden = true;
  }

  // Game: every player's full scorecard in place of the dice and boxes. The buttons' way is the menu's
  // "cards" item (snapshot.cards; any button goes back); the touch way is this page's Cards/Dice button (a view
  // of this page only: the table's state does not change). While the table shows them, Dice presses PREV,
  // which only brings the dice back.
  let mine = false;
  function cardsButton(s) {
    let b = $("cards-btn");
    if (!b) {
      b = document.createElement("button");
      b.id = "cards-btn"; b.type = "button"; b.className = "cards-btn";
      b.onclick = () => {
        if (last && last.cards) document.querySelector('.keys [data-cmd="prev"]').click();
        else { mine = !mine; cardsButton(last); }
      };
      document.querySelector("#game .turn").appendChild(b);
    }
    if (s.screen !== "game") mine = false;
    const on = s.screen === "game" && (mine || !!s.cards);
    document.body.classList.toggle("cards", on);
    b.textContent = on ? "Dice" : "Cards";
  }

  function render(s) {
    last = s;
    cardsButton(s);
    // The help names the ROLL/CONFIRM key as its button reads now (CONFIRM at a real tray, ROLL in the demo).
    const name = $("roll-btn").textContent;
    for (const span of document.querySelectorAll(".roll-name")) span.textContent = name;
    endViews(s);
    footer();
    document.body.classList.add("drawn");  // the first snapshot is drawn: the footer may show (fit.css)
  }
  // A footer message longer than two lines beside the keys takes a row of its own above them (wrapped, not cut).
  function footer() {
    const bar = document.querySelector("footer.bar"), msg = $("message");
    bar.classList.remove("long");
    const line = parseFloat(getComputedStyle(msg).lineHeight) || 20;
    bar.classList.toggle("long", msg.scrollHeight > 2.5 * line);
  }
  addEventListener("resize", () => { if (last) { endViews(last); footer(); } });
  (window.onTableSnapshot = window.onTableSnapshot || []).push(render);
})();
