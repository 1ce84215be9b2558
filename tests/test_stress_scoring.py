"""How a reading of a render is scored (vision.lab.stress.score_rendered): every outcome kind counted once."""

from __future__ import annotations

from vision.lab.stress import StressCounts, score_rendered
from vision.reading import DieReading, ImageReading, UnknownReason
from vision.render import render_randomised


def test_each_die_and_each_phantom_is_counted_in_its_own_column():
    tray = render_randomised([1, 2, 3, 4, 5], seed=2, condition="plain")
    truth = tray.dice
    w, h = tray.image.shape[1], tray.image.shape[0]
    dice = (
        DieReading(truth[0].value, truth[0].box, 0.99),  # right
        DieReading(truth[1].value % 6 + 1, truth[1].box, 0.99),  # wrong
        DieReading(None, truth[2].box, 0.4, UnknownReason.LOW_CONFIDENCE),  # unknown
        # truth[3] missed; truth[4] right
        DieReading(truth[4].value, truth[4].box, 0.99),
        DieReading(3, (w - 30, h - 30, 25, 25), 0.9),  # a valued phantom: silent
        DieReading(None, (0, 0, 25, 25), 0.3, UnknownReason.LEANING),  # a phantom left unknown
    )
    counts = score_rendered(tray, ImageReading(dice), ms=5.0)
    assert counts == StressCounts(
        images=1,
        dice=5,
        right=2,
        wrong=1,
        unknown=1,
        missed=1,
        unreadable=0,
        unreadable_valued=0,
        extra_valued=1,
        extra_unknown=1,
        ms=5.0,
    )
    assert counts.silent == 2  # the wrong value and the valued phantom; the unknown phantom is not silent
    assert (counts + counts).extra_unknown == 2
