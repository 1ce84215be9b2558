"""The end screen's exports: the scorecards as CSV and as a PNG picture."""

from __future__ import annotations

import cv2
import numpy as np

from table.game import GameState
from table.game.export import game_to_csv
from table.rules import find_ruleset, upper_bonus, upper_sum, yahtzee_bonus_points


def scorecards_csv(state: GameState) -> bytes:
    """The scorecards as CSV (see :func:`table.game.export.game_to_csv`), UTF-8 bytes."""
    return game_to_csv(state).encode("utf-8")


def scorecard_rows(state: GameState) -> list[list[str]]:
    """The scorecard table as text: a header row, one row per box, bonuses, total."""
    rs = find_ruleset(state.ruleset)
    rows = [["", *state.players]]
    for b in rs.boxes:
        rows.append([rs.display_name(b), *("" if c.boxes.get(b) is None else str(c.boxes[b]) for c in state.cards)])
    if rs.upper_bonus_threshold is not None:
        rows.append(["Upper sum", *(f"{upper_sum(rs, c)}/{rs.upper_bonus_threshold}" for c in state.cards)])
        rows.append(["Upper bonus", *(str(upper_bonus(rs, c)) for c in state.cards)])
    if rs.has_yahtzee_bonus:
        rows.append(["Yahtzee bonus", *(str(yahtzee_bonus_points(rs, c)) for c in state.cards)])
    rows.append(["Total", *(str(t) for t in state.totals())])
    return rows


def scorecards_png(state: GameState) -> bytes:
    """The scorecards drawn as a table, PNG bytes (white background, one column per player).

    Returns
    -------
    bytes
        A PNG image about ``(200 + 140 * players) x (60 + 34 * rows)`` px.
    """
    rows = scorecard_rows(state)
    font, scale, thick = cv2.FONT_HERSHEY_SIMPLEX, 0.7, 1
    col0 = max(200, 20 + max(cv2.getTextSize(r[0], font, scale, thick)[0][0] for r in rows))
    cols = [max(120, 30 + cv2.getTextSize(n, font, scale, 2)[0][0]) for n in rows[0][1:]]
    row_h, top = 34, 60
    w, h = col0 + sum(cols) + 20, top + row_h * len(rows) + 20
    img = np.full((h, w, 3), 255, np.uint8)
    rs = find_ruleset(state.ruleset)
    title = f"{rs.title or rs.id}: " + (
        "winner " + ", ".join(state.players[i] for i in state.winners()) if state.winners() else "scores so far"
    )
    cv2.putText(img, title, (10, 36), font, 0.85, (0, 0, 0), 2, cv2.LINE_AA)
    for r, row in enumerate(rows):
        y = top + r * row_h
        if r % 2 == 1:
            cv2.rectangle(img, (0, y), (w, y + row_h), (240, 240, 240), -1)
        bold = 2 if r == 0 or row[0] == "Total" else 1
        cv2.putText(img, row[0], (10, y + 24), font, scale, (0, 0, 0), bold, cv2.LINE_AA)
        x = col0
        for k, cell in enumerate(row[1:]):
            tw = cv2.getTextSize(cell, font, scale, bold)[0][0]
            cv2.putText(img, cell, (x + cols[k] - tw - 10, y + 24), font, scale, (0, 0, 0), bold, cv2.LINE_AA)
            x += cols[k]
    ok, buf = cv2.imencode(".png", img)
    return buf.tobytes()
