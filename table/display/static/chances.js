// dicetable page: each player's chance to win, small, beside each total (the players' strip and the scorecard).
// app.js calls it (window.onTableSnapshot) after drawing each snapshot; the numbers come from the table (snapshot game.win_chances,
// table.strategy.win_chances: optimal solitaire play from here, docs/overlay.md); null shows nothing.
"use strict";
(window.onTableSnapshot = window.onTableSnapshot || []).push(function (s) {
  const g = s.game;
  const chances = g && s.screen === "game" ? g.win_chances : null;
  if (!chances) return;
  const shown = window.winPercents(chances);  // win-percent.js: they add up to 100
  const tip = "Chance to win from here if everyone plays the best solitaire strategy";
  // Beside the total while the strip has room (3 players or fewer); with more, in the smaller second
  // row (upper bonus), so the names keep their width on the 7-inch screen.
  const many = document.getElementById("players").classList.contains("many");
  document.querySelectorAll("#players .pl").forEach((pl, i) => {
    if (i >= chances.length) return;
    const e = document.createElement("span");
    e.className = "chance"; e.textContent = shown[i]; e.title = tip;
    if (many) {  // rulesets without an upper bonus (Yacht) get a second row of their own
      let row2 = pl.querySelector(".upper");
      if (!row2) { row2 = document.createElement("div"); row2.className = "upper"; pl.appendChild(row2); }
      row2.appendChild(e);
    } else { const row1 = pl.querySelector(".row1"); row1.insertBefore(e, row1.lastChild); }
  });
  const body = document.querySelector("#card tbody") || document.getElementById("card");
  if (!body || !body.rows.length) return;
  const tr = document.createElement("tr");
  tr.className = "chances"; tr.title = tip;
  const head = document.createElement("td"); head.textContent = "Chance to win"; tr.appendChild(head);
  for (const text of shown) { const td = document.createElement("td"); td.textContent = text; tr.appendChild(td); }
  body.appendChild(tr);
});
