"""vision.reader_seen: what the glare step found and asked is passed on, not asked of the networks again."""

from __future__ import annotations

import numpy as np

from tests.test_reader_glare import BOX, _face, _MarksWhatStandsOut
from vision.detect import Detection
from vision.reader import read_image
from vision.reader_seen import predict_unseen
from vision.reading import DieReading


class _Counting:
    """Wraps a network's ``predict``: how many crops it was asked about."""

    def __init__(self, net):
        self.net, self.asked = net, 0

    def predict(self, crops):
        self.asked += len(crops)
        return self.net.predict(crops)


class _ReadsTwo:
    def predict(self, crops):
        return np.tile([0.005, 0.005, 0.97, 0.005, 0.005, 0.005, 0.01], (len(crops), 1)).astype(np.float32)


class _OneDetector:
    def detect(self, image_bgr):
        return (Detection(BOX, 0.9),)


def test_predict_unseen_asks_only_about_the_crops_without_an_answer():
    asked = []

    def predict(crops):
        asked.extend(int(c[0, 0]) for c in crops)
        return np.array([[float(c[0, 0])] * 2 for c in crops], np.float32)

    crops = [np.full((4, 4), v, np.uint8) for v in range(4)]
    known = [None, np.array([10.0, 10.0]), None, np.array([30.0, 30.0])]
    out = predict_unseen(predict, crops, known)
    assert asked == [0, 2]
    assert out.tolist() == [[0, 0], [10, 10], [2, 2], [30, 30]]
    asked.clear()
    assert predict_unseen(predict, crops, [None] * 4).tolist() == [[v, v] for v in range(4)] and asked == [0, 1, 2, 3]


def test_a_white_pipped_die_left_as_cut_by_the_glare_step_is_not_given_to_the_pip_finder_again():
    # white pips are glint-like spots: the glare step asks the pip finder about the die, and leaves its pips alone
    img = _face((50, 40, 40), (255, 255, 255))
    pips = _Counting(_MarksWhatStandsOut())
    reading = read_image(img, detector=_OneDetector(), face_reader=_ReadsTwo(), tta=False, pip_finder=pips)
    assert reading.values == (2,)
    assert pips.asked == 1  # the glare step's map is the main pass's first look


def test_stated_confidences_skip_the_dice_the_reader_drops_and_take_the_glints_found(monkeypatch):
    import vision.confidence_model as cm

    if cm.default_confidence_model() is None:
        return  # the map states confidences from the probability alone: nothing to look for
    dice = [DieReading(2, BOX, 0.97, None), DieReading(3, (100, 20, 10, 10), 0.97, None)]
    probs = [np.array([0.0, 0.0, 0.97, 0.01, 0.01, 0.005, 0.005])] * 2
    img = _face((50, 40, 40), (40, 40, 170), glint=(60, 60))
    full = cm.stated_confidences(img, dice, [0.9, 0.9], probs, probs)

    def no_looking(*args):
        raise AssertionError("glints looked for again")

    monkeypatch.setattr(cm, "glint_spots", no_looking)
    out = cm.stated_confidences(img, dice, [0.9, 0.9], probs, probs, [1, 0], [True, False])
    assert out[0] == full[0]  # the same confidence from the glint count passed in
    assert out[1] is dice[1]  # dropped by the reader: left as it is
