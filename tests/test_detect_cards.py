"""Dice on a light card (vision.detect_cards): the card is found, a closer look boxes the dice on it."""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect_boxes import Detection
from vision.detect_cards import light_cards, with_dice_on_cards

DIE = 40  # px, the dice's side in these pictures


def scene(card=(300, 200, 200, 110), dice_on_card=((330, 235), (420, 235)), dice=((80, 80), (150, 300))):
    """A grey floor (value 110) with dark dice (value 40) and a white card (value 245) with dark dice on it."""
    img = np.full((480, 640, 3), 110, np.uint8)
    if card is not None:
        x, y, w, h = card
        cv2.rectangle(img, (x, y), (x + w, y + h), (245, 245, 245), -1)
    for x, y in tuple(dice) + tuple(dice_on_card):
        cv2.rectangle(img, (x, y), (x + DIE, y + DIE), (40, 40, 40), -1)
    return img


class DarkSquares:
    """A stand-in detector: every dark square blob at least 10 px across, score 0.9; counts its calls."""

    def __init__(self):
        self.calls = 0

    def detect(self, image):
        self.calls += 1
        dark = cv2.inRange(image, (0, 0, 0), (60, 60, 60))
        n, _, stats, _ = cv2.connectedComponentsWithStats(dark)
        return tuple(Detection(tuple(int(v) for v in stats[i][:4]), 0.9) for i in range(1, n) if stats[i][2] >= 10)


def found_off_card():
    return (Detection((80, 80, DIE, DIE), 0.9), Detection((150, 300, DIE, DIE), 0.9))


def test_a_white_card_with_dice_on_it_is_found():
    (card,) = light_cards(scene(), found_off_card())
    x, y, w, h = card
    assert abs(x - 300) <= 4 and abs(y - 200) <= 4 and abs(w - 201) <= 6 and abs(h - 111) <= 6


def test_no_card_without_one_nor_for_a_square_white_die_nor_a_card_with_nothing_on_it():
    assert light_cards(scene(card=None, dice_on_card=()), found_off_card()) == []
    # a big white die: square, its pips for holes
    die = scene(card=(300, 200, 150, 150), dice_on_card=())
    for cx, cy in ((330, 230), (400, 300), (365, 265)):
        cv2.circle(die, (cx, cy), 12, (40, 40, 40), -1)
    assert light_cards(die, found_off_card()) == []
    assert light_cards(scene(dice_on_card=()), found_off_card()) == []  # nothing on it: nothing to look for


def test_the_closer_look_adds_the_dice_on_the_card_in_photo_pixels():
    detector = DarkSquares()
    found = found_off_card()
    out = with_dice_on_cards(detector, scene(), found)
    assert out[:2] == found and detector.calls == 1
    added = sorted(d.box for d in out[2:])
    assert added == [(330, 235, DIE + 1, DIE + 1), (420, 235, DIE + 1, DIE + 1)]


def test_a_card_boxed_as_one_big_die_is_replaced_by_the_dice_on_it():
    card_box = Detection((295, 195, 210, 120), 0.45)
    out = with_dice_on_cards(DarkSquares(), scene(), found_off_card() + (card_box,))
    assert card_box not in out and len(out) == 4


def test_dice_found_before_are_not_added_twice_and_odd_sizes_are_left_out():
    img = scene()
    cv2.rectangle(img, (470, 285), (484, 299), (40, 40, 40), -1)  # a mark on the card: 15 px, far smaller than a die
    found = found_off_card() + (Detection((329, 234, DIE + 2, DIE + 2), 0.8),)
    out = with_dice_on_cards(DarkSquares(), img, found)
    assert sorted(d.box for d in out[3:]) == [(420, 235, DIE + 1, DIE + 1)]


def test_a_photo_without_a_card_costs_no_second_look():
    detector = DarkSquares()
    found = found_off_card()
    assert with_dice_on_cards(detector, scene(card=None, dice_on_card=()), found) == found
    assert detector.calls == 0
