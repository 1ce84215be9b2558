// dicetable page: each player's chance to win, small, under the players (app.js calls it with each snapshot).
// The numbers come from the table (snapshot game.win_chances: table.strategy.win_chances); null hides the line.
"use strict";
window.dicetableChances = function (s) {
  const box = document.getElementById("chances");
  if (!box) return;
  const g = s.game;
  const chances = g && s.screen === "game" ? g.win_chances : null;
  box.hidden = !chances;
  if (!chances) return;
  const pct = (p) => (p > 0.995 && p < 1 ? ">99" : p < 0.005 && p > 0 ? "<1" : String(Math.round(p * 100))) + "%";
  box.textContent = "Chance to win: " + g.players.map((p, i) => p.name + " " + pct(chances[i])).join(" · ");
  box.title = "Each player's chance to win from here if everyone plays the best solitaire strategy (docs/overlay.md)";
};
