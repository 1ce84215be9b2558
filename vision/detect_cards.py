"""Dice lying on a light card: a second, closer look inside it (issue 37, item 3).

The die detector reads the whole photo at :data:`vision.detect.INPUT_LONG_SIDE`
px, and dice lying on a white card, a score pad or a sheet of paper inside a
darker scene are mostly not found there: in the perturbation suite's
``white_card`` condition (two of the photo's dice copied onto a card) 175 of
such dice were missed while their twins elsewhere in the photo were read. The
same detector finds most of them when shown the card alone, cropped and
enlarged: 32 of those 175 are still missed (full suite, seed 0; among them
dark translucent dice it does not box even there).

A *card* here is a light, grey-white region (HSV value above the photo's median
by :data:`CARD_LIFT` and at least :data:`CARD_MIN_VALUE`, saturation under
:data:`CARD_MAX_SATURATION`) that is an oblong rectangle (its convex hull fills
:data:`CARD_FILL` of its least-area rectangle, at least :data:`CARD_MIN_ASPECT`
times as long as wide: a square one is more likely a big white die), bigger than three dice and
smaller than a quarter of the photo, with die-sized holes in it. Dice found on
a card are kept when their centre lies on the card, no die found before
covers it, and their side is within :data:`CARD_DIE_SIDE` of the dice found
before (dice are one size: the smallest box found, at least half their median).

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels of the photo, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from typing import Protocol

import cv2
import numpy as np

from vision.detect_boxes import Detection

__all__ = ["CARD_LIFT", "CARD_MIN_VALUE", "CARD_MAX_SATURATION", "CARD_FILL", "light_cards", "with_dice_on_cards"]

#: Long side (px) the photo is shrunk to for finding cards (the detector's own input size).
CARD_LOOK_PX: int = 384
#: A card is at least this much lighter (HSV value, levels) than the photo's median...
CARD_LIFT: int = 20
#: ... and at least this light: on a white background (DEV's median 180-210) only brighter paper counts.
CARD_MIN_VALUE: int = 190
#: A card is grey-white: saturation under this (a white card measures 6-14, a yellow die 150+).
CARD_MAX_SATURATION: int = 60
#: A card is a rectangle: its convex hull fills at least this share of its least-area rectangle
#: (cards 0.99-1.0; the bright strip of a tray's lid 0.87-0.92, a scatter of white dice far less).
CARD_FILL: float = 0.85
#: Least area of a card's bounding box, in squared die sides (a card holding two dice: about 4.5).
CARD_MIN_DICE: float = 3.0
#: Largest area of a card's bounding box, as a share of the photo (a light floor is no card).
CARD_MAX_SHARE: float = 0.25
#: A card is oblong: its least-area rectangle at least this long over its width (playing cards
#: 1.4, paper 1.41, the suite's cards 1.53-2.0); a big white die, with its pips for holes, is square, or up
#: to 1.24 where its lit side face shows too (a dust_ev_plus1 photo: two pips were read as 1s at 1.2).
CARD_MIN_ASPECT: float = 1.35
#: Least area of the card's holes (its hull less its own pixels), in squared die sides: a die on it.
CARD_MIN_HOLES: float = 0.3
#: A die found on a card has a side within this ratio of the median side of the dice found before.
CARD_DIE_SIDE: float = 1.6
#: The card is cropped with this margin (share of its shorter side) before the closer look.
CARD_MARGIN: float = 0.1
#: Side (px) assumed for the dice when none was found before: a die at 384 px is trained to about 24 px.
_DEFAULT_SIDE_AT_LOOK: float = 24.0

Box = tuple[int, int, int, int]


class _Detects(Protocol):
    def detect(self, image_bgr: np.ndarray) -> tuple[Detection, ...]: ...


def light_cards(
    image: np.ndarray, found: tuple[Detection, ...] | list[Detection], shrunk: np.ndarray | None = None
) -> list[Box]:
    """Boxes of the light rectangular cards with something die-sized on them, in photo px.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    found : sequence of Detection
        The dice found in it so far (their median side sizes a die).
    shrunk : ndarray of shape (h, w, 3), dtype uint8, optional
        `image` area-resized to :data:`CARD_LOOK_PX` px on its long side, where already made (the
        detector's input, kept by :meth:`vision.detect.DieDetector.heatmaps`): used instead of shrinking it
        again (2 ms of a 640 px photo). Ignored when its size is not that.

    Returns
    -------
    list of (x, y, w, h)
        Empty when there is none (2 of 158 DEV photos show one: a tray lid's strip and a kingpi tray).
    """
    h, w = image.shape[:2]
    s = min(1.0, CARD_LOOK_PX / max(h, w))
    size = (max(1, round(w * s)), max(1, round(h * s)))
    if shrunk is not None and shrunk.shape[1::-1] == size:
        small = shrunk
    else:
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    value = hsv[..., 2]
    level = max(CARD_MIN_VALUE, int(np.median(value)) + CARD_LIFT)
    light = cv2.inRange(hsv, (0, 0, level), (180, CARD_MAX_SATURATION - 1, 255))
    light = cv2.morphologyEx(light, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(light, connectivity=8)
    side = _die_side(found) * s if found else _DEFAULT_SIDE_AT_LOOK
    cards = []
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if not CARD_MIN_DICE * side * side <= bw * bh <= CARD_MAX_SHARE * light.size:
            continue
        mask = (labels[y : y + bh, x : x + bw] == i).astype(np.uint8)
        contour = max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0], key=cv2.contourArea)
        hull = cv2.contourArea(cv2.convexHull(contour))
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        if hull < CARD_FILL * rw * rh or hull - area < CARD_MIN_HOLES * side * side:
            continue
        if max(rw, rh) < CARD_MIN_ASPECT * min(rw, rh):
            continue  # square: a big white die with its pips, not a card with dice
        cards.append((int(x / s), int(y / s), int(np.ceil(bw / s)), int(np.ceil(bh / s))))
    return cards


def with_dice_on_cards(
    detector: _Detects, image: np.ndarray, found: tuple[Detection, ...], shrunk: np.ndarray | None = None
) -> tuple[Detection, ...]:
    """`found` with the dice on light cards that it misses, from a closer look at each card.

    A box found before that holds a die of the closer look and is more than
    :data:`CARD_DIE_SIDE` times its side is the card itself boxed as one big
    die: it is dropped. See the module's notes for the rest.

    Parameters
    ----------
    detector : object with ``detect(image) -> tuple of Detection``
        The die detector (:class:`vision.detect.DieDetector`).
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    found : tuple of Detection
        What the detector found in the whole photo.
    shrunk : ndarray, optional
        The photo already area-resized to :data:`CARD_LOOK_PX` px on its long side (:func:`light_cards`).

    Returns
    -------
    tuple of Detection
        `found` less the cards boxed as dice, then the dice added, boxes in photo
        px; `found` itself without a card (one more detector pass per card).
    """
    cards = light_cards(image, found, shrunk)
    if not cards:
        return found
    h, w = image.shape[:2]
    median = _die_side(found) if found else 0.0
    added: list[Detection] = []
    dropped: set[int] = set()
    for cx, cy, cw, ch in cards:
        m = int(CARD_MARGIN * min(cw, ch))
        x0, y0, x1, y1 = max(0, cx - m), max(0, cy - m), min(w, cx + cw + m), min(h, cy + ch + m)
        for d in detector.detect(np.ascontiguousarray(image[y0:y1, x0:x1])):
            bx, by, bw, bh = d.box
            box = (bx + x0, by + y0, bw, bh)
            mx, my = box[0] + bw / 2, box[1] + bh / 2
            side = max(bw, bh)
            if not (cx <= mx <= cx + cw and cy <= my <= cy + ch):
                continue
            if median and not 1 / CARD_DIE_SIDE <= side / median <= CARD_DIE_SIDE:
                continue
            holders = [k for k, t in enumerate(found) if _inside(mx, my, t.box)]
            if any(max(found[k].box[2:]) <= CARD_DIE_SIDE * side for k in holders):
                continue  # found before
            if any(_inside(mx, my, a.box) for a in added):
                continue
            dropped.update(holders)  # only boxes far bigger than the die: the card boxed as a die
            added.append(Detection(box, d.score))
    return tuple(d for k, d in enumerate(found) if k not in dropped) + tuple(added)


def _die_side(found: tuple[Detection, ...] | list[Detection]) -> float:
    """A die's side in `found`, px: the smallest box (the card itself may be boxed as one big die), but at least
    half the median (not a speck's)."""
    sides = [max(d.box[2], d.box[3]) for d in found]
    return max(min(sides), 0.5 * float(np.median(sides)))


def _inside(x: float, y: float, box: Box) -> bool:
    bx, by, bw, bh = box
    return bx <= x <= bx + bw and by <= y <= by + bh
