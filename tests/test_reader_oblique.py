"""Dice seen obliquely (vision/reader_oblique.py): a side face boxed under its die's top face is left out."""

from __future__ import annotations

from vision.reader_oblique import side_face_boxes


def test_a_side_face_boxed_under_its_top_face_is_left_out():
    die, front = (100, 100, 60, 52), (102, 128, 58, 40)  # the front face's box overlaps 0.6 of its height
    assert side_face_boxes([die, front]) == [False, True]
    assert side_face_boxes([front, die]) == [True, False]  # in any order


def test_dice_one_behind_another_or_side_by_side_are_both_kept():
    # a die hiding half of the one behind it (a steep view): their union is taller than one die can be
    behind, front = (100, 100, 60, 60), (102, 130, 60, 70)
    assert side_face_boxes([behind, front]) == [False, False]
    left, right = (100, 100, 60, 60), (150, 110, 60, 60)  # touching side by side: different columns
    assert side_face_boxes([left, right]) == [False, False]
    assert side_face_boxes([]) == []
