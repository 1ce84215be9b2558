// dicetable: win chances as whole percents that add up to 100 (largest remainder method, Hare quota):
// each chance is floored, then the points short of the rounded total go, one each, to the chances
// with the largest fractions (ties: the earlier seat). Plain rounding made 0.335 + 0.665 show 34 % + 67 %.
// A chance below 0.5 % that is not 0 shows "<1%", one above 99.5 % that is not 1 shows ">99%".
// Used by the table page (chances.js), the stream overlay (overlay.js) and the leaderboard (board.js).
"use strict";
(function (root) {
  function winPercents(chances) {
    const ps = chances.map((p) => (typeof p === "number" && isFinite(p) ? Math.min(1, Math.max(0, p)) : null));
    const known = ps.filter((p) => p !== null);
    const target = Math.round(known.reduce((a, p) => a + p, 0) * 100);
    const whole = ps.map((p) => (p === null ? null : Math.floor(p * 100 + 1e-9)));
    let short = target - whole.reduce((a, w) => a + (w || 0), 0);
    const order = ps.map((p, i) => i).filter((i) => ps[i] !== null)
      .sort((a, b) => (ps[b] * 100 - whole[b]) - (ps[a] * 100 - whole[a]) || a - b);
    for (const i of order) { if (short <= 0) break; whole[i] += 1; short -= 1; }
    return whole.map((w, i) => {
      if (w === null) return "";
      if (w >= 100 && ps[i] < 1) return ">99%";
      if (w <= 0 && ps[i] > 0) return "<1%";
      return w + "%";
    });
  }
  root.winPercents = winPercents;
  if (typeof module !== "undefined") module.exports = winPercents;  // node, for tests/test_overlay.py
})(typeof window !== "undefined" ? window : globalThis);
