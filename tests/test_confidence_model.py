"""vision.confidence_model: the warning confidence's fit, its features and the reader's hook."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import vision.confidence_model as cm
from vision.confidence_model import FEATURES, ConfidenceModel, die_features, fit_confidence_model, recording
from vision.reading import DieReading

K = len(FEATURES)
GLINT = FEATURES.index("glint")
SIZE = FEATURES.index("size_off")


def _rows(n=3000, seed=0):
    """Synthetic values: right with the face probability, and mostly wrong where a glint shows."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, K))
    p = rng.uniform(0.75, 0.999, n)
    x[:, 0] = np.log(p / (1 - p))
    x[:, GLINT] = rng.uniform(0, 1, n) < 0.1
    x[:, SIZE] = rng.uniform(0, 0.3, n)  # no bearing on the outcome
    chance = 1 / (1 + np.exp(-(0.8 * x[:, 0] - 2.0 * x[:, GLINT])))  # a glint: odds of a right value / 7
    return x, rng.uniform(0, 1, n) < chance


def test_a_feature_that_marks_errors_lowers_the_stated_confidence():
    x, right = _rows()
    model = fit_confidence_model(x, right)
    plain = np.zeros(K)
    plain[0] = 4.0
    glinted = plain.copy()
    glinted[GLINT] = 1.0
    assert model.weights[GLINT] == pytest.approx(-2.0, abs=0.5)
    assert model(glinted) < model(plain) - 0.1
    # and the model states about what it was fitted on
    assert float(model(x[x[:, GLINT] > 0]).mean()) == pytest.approx(float(right[x[:, GLINT] > 0].mean()), abs=0.05)


def test_confidence_is_monotone_in_the_face_probability():
    x, right = _rows(seed=1)
    model = fit_confidence_model(x, right)
    assert model.weights[0] > 0
    for warn in (0.0, 1.0):
        grid = np.zeros((50, K))
        grid[:, 0] = np.linspace(0, 7, 50)
        grid[:, GLINT] = warn
        conf = model(grid)
        assert np.all(np.diff(conf) > 0)


def test_a_warning_that_looks_reassuring_is_pinned_at_zero():
    # a "warning" that in this data goes with right values must not raise the confidence
    x, right = _rows(seed=2)
    x[:, SIZE] = right * 0.5
    model = fit_confidence_model(x, right)
    assert model.weights[SIZE] == 0.0
    assert all(w <= 0 for w in model.weights[1:])


def test_the_model_refuses_wrong_signs_and_shapes():
    with pytest.raises(ValueError, match="warning"):
        ConfidenceModel(FEATURES, (1.0, 0.5) + (0.0,) * (K - 2), 0.0)
    with pytest.raises(ValueError, match="one weight"):
        ConfidenceModel(FEATURES[:-1], (1.0,) * (K - 1), 0.0)
    with pytest.raises(ValueError, match="features"):
        fit_confidence_model(np.zeros((3, K - 1)), [True] * 3)


def _die_photo(glint: bool):
    img = np.full((200, 300, 3), 40, np.uint8)
    cv2.rectangle(img, (100, 60), (160, 120), (200, 60, 60), -1)  # a blue die with dark pips
    for cx, cy in ((115, 75), (145, 105)):
        cv2.circle(img, (cx, cy), 5, (20, 20, 20), -1)
    if glint:
        cv2.circle(img, (130, 90), 4, (255, 255, 255), -1)
    return img


def test_features_see_a_glint_an_odd_box_and_the_first_looks_doubt():
    probs = np.array([0.01, 0.02, 0.9, 0.03, 0.02, 0.01, 0.01])
    first = np.array([0.1, 0.05, 0.5, 0.2, 0.05, 0.05, 0.05])
    box = (100, 60, 61, 61)
    plain = die_features(_die_photo(False), box, probs, probs, 2, 0.9, 61.0, 0.0)
    glinted = die_features(_die_photo(True), box, probs, first, 2, 0.9, 61.0, 0.0)
    f = dict(zip(FEATURES, glinted))
    assert plain[GLINT] == 0 and f["glint"] == 1 and f["blown"] > plain[FEATURES.index("blown")]
    assert f["second_look"] == 1 and f["first_doubt"] == pytest.approx(0.5) and f["runner_up"] == pytest.approx(0.03)
    assert f["logit_p"] == pytest.approx(np.log(9.0)) and f["det_doubt"] == pytest.approx(0.1)
    big = die_features(_die_photo(False), (100, 60, 61, 61), probs, probs, 2, 0.9, 30.0, 0.0)
    assert big[SIZE] == pytest.approx(np.log(61 / 30))
    oblong = die_features(_die_photo(False), (100, 60, 61, 30), probs, probs, 2, 0.9, 61.0, 0.0)
    assert oblong[FEATURES.index("aspect_off")] == pytest.approx(np.log(61 / 30))


def test_stated_confidences_restate_values_only_and_record_their_warnings(monkeypatch):
    weights = [1.0] + [0.0] * (K - 1)
    weights[GLINT] = -3.0
    monkeypatch.setattr(cm, "default_confidence_model", lambda: ConfidenceModel(FEATURES, tuple(weights), 0.0))
    probs = np.array([0.01, 0.02, 0.9, 0.03, 0.02, 0.01, 0.01])
    dice = [DieReading(2, (100, 60, 61, 61), 0.9), DieReading(None, (10, 10, 40, 40), 0.4, "low confidence")]
    with recording() as rec:
        plain = cm.stated_confidences(_die_photo(False), dice, [0.9, 0.9], [probs, probs], [probs, probs])
        glinted = cm.stated_confidences(_die_photo(True), dice, [0.9, 0.9], [probs, probs], [probs, probs])
    assert plain[1] == dice[1] and glinted[1] == dice[1]  # unknown dice keep the raw probability
    assert plain[0].confidence == pytest.approx(0.9)  # sigmoid(logit 0.9), no warning
    assert glinted[0].confidence < plain[0].confidence - 0.3
    assert [(box, value) for box, value, _ in rec] == [((100, 60, 61, 61), 2)] * 2
    assert rec[1][2][GLINT] == 1


def test_the_packaged_model_loads_and_keeps_its_constraints():
    model = cm.default_confidence_model()
    if model is None:
        pytest.skip("no model packaged")
    assert model.features == FEATURES and model.weights[0] >= 0 and all(w <= 0 for w in model.weights[1:])


def test_a_die_near_the_leaning_reach_or_with_an_unclear_top_face_is_warned_of():
    probs = np.array([0.01, 0.02, 0.9, 0.03, 0.02, 0.01, 0.01])
    box = (100, 60, 61, 61)

    def features(lean):
        return dict(zip(FEATURES, die_features(_die_photo(False), box, probs, probs, 2, 0.9, 61.0, 0.0, lean=lean)))

    assert features(0.0)["lean"] == 0 and features(0.0)["unclear"] == 0
    assert features(0.8)["lean"] == pytest.approx(0.8) and features(0.8)["unclear"] == 0
    assert features(9.0)["lean"] == pytest.approx(1.5)  # capped: one clipped outline does not steer the fit
    assert features(None)["lean"] == 0 and features(None)["unclear"] == 1


def test_lean_shares_measure_clean_outlines_only_and_need_a_set():
    from vision.reader_stacked import LEAN_REACH, lean_shares
    from vision.top_face import TopFace

    def face(cx, reach):  # an upright 40 px face whose body reaches `reach` px beyond its right edge
        quad = np.float32([[cx - 20, 220], [cx + 20, 220], [cx + 20, 260], [cx - 20, 260]])
        beyond = tuple(zip([np.float32(n) for n in ((1, 0), (-1, 0), (0, 1), (0, -1))], [reach, 1.0, 1.0, 1.0]))
        return TopFace(quad, quad, 1.0, 0.95, 40.0, beyond, (120.0, 190.0, 170.0))

    unclear = TopFace(np.zeros((4, 2), np.float32), np.zeros((4, 2), np.float32), 1.0, 0.5, 40.0, (), (0, 0, 0))
    # dice left of the photo's centre (320, 240): their right edges face the principal point, where a flat
    # die's side face shows; reach there is not counted, reach on the far side is
    left = [face(100, 8.0), face(200, 1.0), unclear]
    shares = lean_shares((480, 640, 3), left)
    assert shares[0] == pytest.approx(1.0 / 40 / LEAN_REACH) and shares[2] is None
    right = lean_shares((480, 640, 3), [face(500, 8.0), face(200, 1.0), face(150, 1.0)])
    assert right[0] == pytest.approx(8.0 / 40 / LEAN_REACH)
    assert lean_shares((480, 640, 3), left[:2]) == [0.0, 0.0]  # fewer than three dice: no set, no outline drawn
