"""Five-alike boxes (Yahtzees, Yachts, ...) that stand on each player's card after a game's events.

An ``undone`` event takes back the last undoable action (a read, a hold change, a correction or a
scored box; :func:`table.game.apply`), so the boxes are replayed with a stack of what stood before
each such action. The events must be the game's accepted events in ``seq`` order.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Boxes that take five of a kind, by ruleset (../shared/specs/rulesets.md sections 3-7).
FIVE_ALIKE_BOXES = frozenset({"yahtzee", "yacht", "yatzy", "chase_off", "generala", "doble_generala"})

#: Event types that :func:`table.game.apply` lets an ``undone`` take back.
UNDOABLE = frozenset({"dice_read", "holds_changed", "die_corrected", "box_scored"})


def five_alike_counts(events: Iterable[tuple[str, int, str, int]], n_players: int) -> list[int]:
    """How many five-alike boxes each player holds with points > 0.

    Parameters
    ----------
    events : iterable of (type, player, box, points)
        The game's events in ``seq`` order; ``player``, ``box`` and ``points`` matter for ``box_scored``.
    n_players : int
        Seats in the game.

    Returns
    -------
    list of int
        One count per seat (a scratched Yahtzee box, 0 points, does not count).
    """
    scored: tuple[tuple[int, str, int], ...] = ()
    before: list[tuple[tuple[int, str, int], ...]] = []
    for kind, player, box, points in events:
        if kind == "undone":
            if before:
                scored = before.pop()
        elif kind == "game_ended":
            before.clear()
        elif kind in UNDOABLE:
            before.append(scored)
            if kind == "box_scored":
                scored = (*scored, (player, box, points))
    counts = [0] * n_players
    for player, box, points in scored:
        if box in FIVE_ALIKE_BOXES and points > 0 and 0 <= player < n_players:
            counts[player] += 1
    return counts
