"""The built-in demo: a whole game on synthetic tray images read by the real pip reader.

For every throw the demo renders a tray of five dice (:mod:`vision.render`; held
dice stay where they lie, re-rolled dice land anew), reads the picture with the
pip reader (``vision.read_image``), and plays the values read.  When a die is
unknown or the reader does not find exactly five dice, the tray is nudged and
read again, up to ``max_reads`` pictures; after that the renderer's true values
are used, as a player would type them in.  The built-in player
(:mod:`table.strategy.builtin_player`) chooses holds and boxes; all scoring is :mod:`table.rules`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from table.errors import UsageError
from table.rules import (
    Card,
    Ruleset,
    card_total,
    find_ruleset,
    place,
    score_options,
    upper_bonus,
    winners,
    yahtzee_bonus_points,
)
from table.strategy.bots import BOT_LEVELS, Bot, make_bot
from table.strategy.builtin_player import choose_box, choose_holds
from vision.reading import ImageReading
from vision.render import Placement, RenderedTray, TrayScene

#: Most players a demo game seats.
MAX_PLAYERS = 8
N_DICE = 5

Reader = Callable[[np.ndarray], ImageReading]


@dataclass(slots=True)
class ReadingStats:
    """How the pip reader did against the renderer's truth, over a demo game.

    Parameters
    ----------
    images : int
        Pictures read.
    right, unknown, wrong, missed : int
        Dice (one count per die per picture) read with the true value, reported
        unknown, read with another value, and not found at all.
    extra : int
        Dice reported where no die lies.
    rereads : int
        Pictures taken again because a read was incomplete.
    fallbacks : int
        Throws where every read failed and the true values were typed in.
    """

    images: int = 0
    right: int = 0
    unknown: int = 0
    wrong: int = 0
    missed: int = 0
    extra: int = 0
    rereads: int = 0
    fallbacks: int = 0

    def summary(self) -> str:
        """One line for a person: dice right / unknown / wrong / missed, re-reads, failures."""
        total = self.right + self.unknown + self.wrong + self.missed
        pct = 100.0 * self.right / total if total else 0.0
        return (
            f"Reading: {self.right} of {total} dice read right ({pct:.1f}%), {self.unknown} unknown, "
            f"{self.wrong} wrong, {self.missed} missed, {self.extra} extra, over {self.images} pictures; "
            f"{self.rereads} re-read{'s' * (self.rereads != 1)}, {self.fallbacks} read "
            f"failure{'s' * (self.fallbacks != 1)} (typed-in values used)"
        )


@dataclass(frozen=True, slots=True)
class DemoResult:
    """The outcome of :func:`play_demo`.

    Parameters
    ----------
    ruleset_id : str
    players : tuple of str
        Player names, in seating order.
    cards : tuple of Card
        Each player's final card.
    totals : tuple of int
        ``card_total`` of each card.
    winners : tuple of int
        Indexes of the winning player(s).
    reading : ReadingStats
    throws : int
        Throws made (pictures before re-reads).
    seconds : float
        Wall time of the game, in seconds.
    """

    ruleset_id: str
    players: tuple[str, ...]
    cards: tuple[Card, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    reading: ReadingStats = field(compare=False)
    throws: int = 0
    seconds: float = 0.0


def default_reader() -> Reader:
    """The real pip reader, ``vision.read_image``.

    Raises
    ------
    UsageError
        If this checkout has no pip reader yet.
    """
    try:
        from vision import read_image  # type: ignore[attr-defined]
    except ImportError:
        try:
            from vision.reader import read_image  # type: ignore[no-redef]
        except ImportError as exc:
            raise UsageError(
                f"the pip reader vision.read_image is missing from this install ({exc}); "
                "reinstall dicetable ('pip install .') from a complete checkout"
            ) from None
    return read_image


def _fmt(values: Sequence[int | None]) -> str:
    return " ".join("?" if v is None else str(v) for v in values)


def match_reading(reading: ImageReading, tray: RenderedTray) -> tuple[list[int | None], list[bool], int]:
    """Pair the dice read with the dice drawn.

    Returns
    -------
    values : list of (int or None)
        Per drawn die (slot order): the value read, None when unknown or not found.
    found : list of bool
        Per drawn die: whether a read die was paired with it.
    extra : int
        Read dice paired with no drawn die.
    """
    pairs = []
    for r, d in enumerate(reading.dice):
        x, y, w, h = d.box
        cx, cy = x + w / 2, y + h / 2
        for t, die in enumerate(tray.dice):
            dist = math.hypot(cx - die.centre_xy[0], cy - die.centre_xy[1])
            if dist <= 0.6 * die.face_px:
                pairs.append((dist, r, t))
    pairs.sort()
    used_r: set[int] = set()
    values: list[int | None] = [None] * len(tray.dice)
    found = [False] * len(tray.dice)
    for _, r, t in pairs:
        if r in used_r or found[t]:
            continue
        used_r.add(r)
        found[t] = True
        values[t] = reading.dice[r].value
    return values, found, len(reading.dice) - len(used_r)


class _Table:
    """One demo game in progress (mutable; private to :func:`play_demo`)."""

    def __init__(
        self,
        rs: Ruleset,
        n_players: int,
        seed: int,
        reader: Reader,
        max_reads: int,
        out: Callable[[str], None],
        on_image: Callable[[RenderedTray], None] | None,
        style: str | None,
        bots: Sequence[Bot | None] = (),
    ) -> None:
        self.rs = rs
        self.bots = list(bots) + [None] * (n_players - len(bots))
        self.names = tuple(
            f"Player {i + 1}" + (f" ({b.level})" if b is not None else "") for i, b in enumerate(self.bots)
        )
        self.cards = [Card.empty() for _ in range(n_players)]
        self.rng = np.random.default_rng(seed)
        self.scene = TrayScene(seed=int(self.rng.integers(2**31)), style=style, n_dice=N_DICE)
        self.reader = reader
        self.max_reads = max_reads
        self.out = out
        self.on_image = on_image
        self.stats = ReadingStats()
        self.throws = 0

    def _seed(self) -> int:
        return int(self.rng.integers(2**31))

    def read_throw(self, placements: tuple[Placement, ...]) -> tuple[tuple[int, ...], tuple[Placement, ...], str]:
        """Picture and read the dice; re-read when incomplete; fall back to the truth."""
        truth = tuple(p.value for p in placements)
        notes = []
        for attempt in range(1, self.max_reads + 1):
            tray = self.scene.render(placements, seed=self._seed())
            if self.on_image is not None:
                self.on_image(tray)
            reading = self.reader(np.asarray(tray.image))
            values, found, extra = match_reading(reading, tray)
            st = self.stats
            st.images += 1
            st.extra += extra
            for v, f, t in zip(values, found, truth):
                if not f:
                    st.missed += 1
                elif v is None:
                    st.unknown += 1
                elif v == t:
                    st.right += 1
                else:
                    st.wrong += 1
            complete = len(reading.dice) == N_DICE and reading.all_read and all(found) and extra == 0
            if complete:
                vals = tuple(int(v) for v in values)  # type: ignore[arg-type]
                wrong = [i + 1 for i, (v, t) in enumerate(zip(vals, truth)) if v != t]
                if wrong:
                    notes.append("misread die " + ", ".join(f"{i} (really {truth[i - 1]})" for i in wrong))
                return vals, placements, "; ".join(notes)
            problem = []
            if len(reading.dice) != N_DICE:
                problem.append(f"found {len(reading.dice)} dice, not {N_DICE}")
            n_unknown = sum(1 for d in reading.dice if d.value is None)
            if n_unknown:
                problem.append(f"{n_unknown} unknown")
            if extra and len(reading.dice) == N_DICE:
                problem.append(f"{extra} read where no die lies")
            notes.append(f"read {_fmt(values)} ({', '.join(problem) or 'incomplete'})")
            if attempt < self.max_reads:
                st.rereads += 1
                notes[-1] += f" -> re-read {attempt + 1}/{self.max_reads} with the dice nudged"
                placements = self.scene.nudge(placements, seed=self._seed())
        self.stats.fallbacks += 1
        notes.append(f"read failed, using typed-in values {_fmt(truth)}")
        return truth, placements, "; ".join(notes)

    def play_turn(self, player: int, round_no: int) -> None:
        rs, card = self.rs, self.cards[player]
        n_rounds = len(rs.boxes)
        self.out(f"Round {round_no}/{n_rounds} - {self.names[player]} (total {card_total(rs, card)})")
        placements: tuple[Placement, ...] = ()
        holds = (False,) * N_DICE
        dice: tuple[int, ...] = ()
        roll = 0
        for roll in range(1, 4):
            self.throws += 1
            values = (
                [p.value if holds[i] else int(self.rng.integers(1, 7)) for i, p in enumerate(placements)]
                if placements
                else [int(v) for v in self.rng.integers(1, 7, N_DICE)]
            )
            keep = {i: placements[i] for i in range(N_DICE) if placements and holds[i]}
            placements = self.scene.layout(values, seed=self._seed(), keep=keep, touching=self.rng.random() < 0.2)
            dice, placements, note = self.read_throw(placements)
            self.out(f"  throw {roll}: read {_fmt(dice)}" + (f"  [{note}]" if note else ""))
            if roll == 3:
                break
            bot = self.bots[player]
            holds = bot.choose_hold(card, dice, roll) if bot else choose_holds(rs, dice, card, roll=roll)
            if all(holds):
                self.out(f"           keeps all five, stops after throw {roll}")
                break
            kept = [d for d, h in zip(dice, holds) if h]
            self.out(
                f"           hold {_fmt(kept) if kept else 'nothing'}, re-roll {N_DICE - len(kept)} "
                f"{'die' if N_DICE - len(kept) == 1 else 'dice'}"
            )
        options = score_options(rs, dice, card, roll=roll)
        self.out("  options: " + ", ".join(f"{rs.display_name(b)} {p}" for b, p in options.items()))
        bot = self.bots[player]
        box = bot.choose_box(card, dice, roll) if bot else choose_box(rs, dice, card, roll=roll)
        old = card
        card = place(rs, card, dice, box, roll=roll)
        self.cards[player] = card
        line = f"  {self.names[player]} scores {card.boxes[box]} in {rs.display_name(box)}"
        bonus = yahtzee_bonus_points(rs, card) - yahtzee_bonus_points(rs, old)
        if bonus:
            line += f" (+{bonus} Yahtzee bonus)"
        if upper_bonus(rs, card) > upper_bonus(rs, old):
            line += f" (upper bonus reached: +{upper_bonus(rs, card)})"
        totals = ", ".join(f"{n} {card_total(rs, c)}" for n, c in zip(self.names, self.cards))
        self.out(line + f"; totals: {totals}")


def final_table(rs: Ruleset, names: Sequence[str], cards: Sequence[Card]) -> list[str]:
    """Lines of the final score table: every box, bonuses, totals, winner(s)."""
    width = max(len(rs.display_name(b)) for b in rs.boxes) + 2
    width = max(width, len("Yahtzee bonus") + 2)
    col = max(10, max(len(n) for n in names) + 2)
    lines = [f"Final scores ({rs.title or rs.id})", "Box".ljust(width) + "".join(n.rjust(col) for n in names)]
    for b in rs.boxes:
        lines.append(rs.display_name(b).ljust(width) + "".join(str(c.boxes.get(b, "-")).rjust(col) for c in cards))
    if rs.upper_bonus_threshold is not None:
        lines.append("Upper bonus".ljust(width) + "".join(str(upper_bonus(rs, c)).rjust(col) for c in cards))
    if rs.has_yahtzee_bonus:
        lines.append("Yahtzee bonus".ljust(width) + "".join(str(yahtzee_bonus_points(rs, c)).rjust(col) for c in cards))
    totals = [card_total(rs, c) for c in cards]
    lines.append("Total".ljust(width) + "".join(str(t).rjust(col) for t in totals))
    win = winners(totals)
    who = " and ".join(names[i] for i in win)
    lines.append(f"{'Winners' if len(win) > 1 else 'Winner'}: {who} with {totals[win[0]]} points")
    return lines


def play_demo(
    *,
    rules: str = "yahtzee",
    players: int = 2,
    seed: int = 0,
    reader: Reader | None = None,
    max_reads: int = 3,
    out: Callable[[str], None] | None = None,
    on_image: Callable[[RenderedTray], None] | None = None,
    style: str | None = None,
    bots: Sequence[str | Bot] = (),
) -> DemoResult:
    """Play one whole game on synthetic tray pictures read by the pip reader.

    Parameters
    ----------
    rules : str, optional
        Ruleset id (``yahtzee``, ``yacht``, ``chaser``, ``yatzy``, ``generala``).
    players : int, optional
        Number of players, 1-8, all played by the built-in player.
    seed : int, optional
        Seed of the dice, the tray and the pictures; the same seed replays the
        same game with the same reader.
    reader : callable, optional
        ``reader(image) -> ImageReading`` for an (H, W, 3) uint8 BGR picture;
        default :func:`default_reader` (the real pip reader).
    max_reads : int, optional
        Pictures taken of one throw before the true values are typed in, 1-10.
    out : callable, optional
        Receives each progress line; default ``print``.
    on_image : callable, optional
        Called with each :class:`vision.render.RenderedTray` before it is read
        (for a display, or a test).
    style : str, optional
        Tray style (see :data:`vision.render.STYLES`); random when None.
    bots : sequence of str or Bot, optional
        Computer players for the first seats: a level (``easy``, ``medium``,
        ``optimal``; see :mod:`table.strategy.bots`) or a bot object; the other
        seats use the built-in player.

    Returns
    -------
    DemoResult

    Raises
    ------
    UnknownRulesetError
        If `rules` is not a ruleset id.
    UsageError
        If `players`, `seed` or `max_reads` is out of range, or no pip reader is
        installed.
    """
    rs = find_ruleset(rules)
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
        raise UsageError(f"players must be 1 to {MAX_PLAYERS}, got {players!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f"seed must be a whole number 0 or more, got {seed!r}")
    if isinstance(max_reads, bool) or not isinstance(max_reads, int) or not 1 <= max_reads <= 10:
        raise UsageError(f"max_reads must be 1 to 10, got {max_reads!r}")
    if len(bots) > players:
        raise UsageError(f"{len(bots)} bots given for {players} player(s); give at most one per player")
    bad = [b for b in bots if isinstance(b, str) and b not in BOT_LEVELS]
    if bad:
        raise UsageError(f"unknown bot level {bad[0]!r}; choose from: {', '.join(BOT_LEVELS)}")
    seated = [make_bot(b, rs) if isinstance(b, str) else b for b in bots]
    read = reader if reader is not None else default_reader()
    emit = out if out is not None else print
    start = time.perf_counter()
    table = _Table(rs, players, seed, read, max_reads, emit, on_image, style, seated)
    emit(
        f"{rs.title or rs.id}: {players} player{'s' if players > 1 else ''}, seed {seed}; "
        f"{table.scene.style} tray, five dice, {len(rs.boxes)} rounds"
    )
    for round_no in range(1, len(rs.boxes) + 1):
        for p in range(players):
            table.play_turn(p, round_no)
    emit("")
    for line in final_table(rs, table.names, table.cards):
        emit(line)
    emit(table.stats.summary())
    totals = tuple(card_total(rs, c) for c in table.cards)
    seconds = time.perf_counter() - start
    emit(f"Game took {seconds:.1f} s ({table.throws} throws, {table.stats.images} pictures).")
    return DemoResult(
        rs.id, table.names, tuple(table.cards), totals, winners(totals), table.stats, table.throws, seconds
    )
