"""The die detector's training crops: augmentation of a photo and its boxes, and the heatmap targets.

:func:`augment_crop` cuts a square crop from a photo scaled as at run time
(long side :data:`INPUT_LONG_SIDE`) times a random factor, with flips, quarter
turns, optional turns by any angle (:func:`turn_photo`) and photometric changes;
:func:`heatmap_targets` encodes its die boxes as the network's maps at
:data:`STRIDE`. Boxes are ``[x, y, w, h]`` float32 in pixels; ignore regions
(face- or pip-only boxes, dice cut by the crop) teach neither die nor background.
Numpy and OpenCV only.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.images import jpeg_roundtrip

__all__ = ["STRIDE", "INPUT_LONG_SIDE", "augment_crop", "turn_photo", "heatmap_targets"]

#: Output stride of the network's maps (input pixels per cell), as vision.detect decodes them.
STRIDE = 4
INPUT_LONG_SIDE = 384  # keep equal to vision.detect.INPUT_LONG_SIDE


def augment_crop(image, boxes, ign, crop, rng, turn_prob=0.0):
    """A random `crop` x `crop` BGR crop of `image` with its die boxes and ignore regions moved onto it.

    `rng` is a numpy Generator; with `turn_prob` 0 no draw is made for a turn, so
    that runs without ``--turn-prob`` get the crops they were trained on. Returns
    ``(crop_image uint8, boxes, ignores)``.
    """
    h, w = image.shape[:2]
    # scale as at inference (long side -> INPUT_LONG_SIDE), times a random factor
    s = INPUT_LONG_SIDE / max(h, w) * math.exp(rng.uniform(math.log(0.55), math.log(1.7)))
    ar = math.exp(rng.uniform(-0.12, 0.12))
    sx, sy = s * ar, s / ar
    image = cv2.resize(image, None, fx=sx, fy=sy, interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    boxes = boxes * np.float32([sx, sy, sx, sy])
    ign = ign * np.float32([sx, sy, sx, sy])
    # the camera turned by any angle: walls and rows of dice run diagonally (no draw at 0, so that the
    # recorded commands without --turn-prob still get the crops they were trained on)
    if turn_prob and rng.random() < turn_prob:
        image, boxes, ign = turn_photo(image, boxes, ign, float(rng.uniform(-45.0, 45.0)), _fill_colour(rng))
    h, w = image.shape[:2]
    # random crop (pad with a random flat colour or edge replicate when smaller)
    ph, pw = max(0, crop - h), max(0, crop - w)
    if ph or pw:
        top, left = int(rng.integers(ph + 1)), int(rng.integers(pw + 1))
        colour = _fill_colour(rng)
        if colour is None:
            image = cv2.copyMakeBorder(image, top, ph - top, left, pw - left, cv2.BORDER_REPLICATE)
        else:
            image = cv2.copyMakeBorder(image, top, ph - top, left, pw - left, cv2.BORDER_CONSTANT, value=colour)
        boxes[:, :2] += [left, top]
        ign[:, :2] += [left, top]
        h, w = image.shape[:2]
    y0, x0 = int(rng.integers(h - crop + 1)), int(rng.integers(w - crop + 1))
    image = image[y0 : y0 + crop, x0 : x0 + crop]
    boxes[:, :2] -= [x0, y0]
    ign[:, :2] -= [x0, y0]
    # clip boxes to the crop; mostly-cut dice become ignore regions
    keep, extra_ign = [], []
    for b in boxes:
        x1, y1 = max(0.0, b[0]), max(0.0, b[1])
        x2, y2 = min(float(crop), b[0] + b[2]), min(float(crop), b[1] + b[3])
        if x2 <= x1 or y2 <= y1:
            continue
        frac = (x2 - x1) * (y2 - y1) / max(1e-6, b[2] * b[3])
        (keep if frac >= 0.6 else extra_ign).append([x1, y1, x2 - x1, y2 - y1])
    boxes = np.array(keep, np.float32).reshape(-1, 4)
    ign = np.concatenate([ign, np.array(extra_ign, np.float32).reshape(-1, 4)])
    # flips and 90-degree turns (top-down dice look the same any way round)
    if rng.random() < 0.5:
        image = image[:, ::-1]
        boxes[:, 0] = crop - boxes[:, 0] - boxes[:, 2]
        ign[:, 0] = crop - ign[:, 0] - ign[:, 2]
    if rng.random() < 0.5:
        image = image[::-1]
        boxes[:, 1] = crop - boxes[:, 1] - boxes[:, 3]
        ign[:, 1] = crop - ign[:, 1] - ign[:, 3]
    if rng.random() < 0.5:
        image = image.transpose(1, 0, 2)
        boxes = boxes[:, [1, 0, 3, 2]]
        ign = ign[:, [1, 0, 3, 2]]
    image = _photometric(np.ascontiguousarray(image), rng)
    return image, boxes, ign


def _fill_colour(rng) -> list[int] | None:
    """What fills the canvas beyond a photo: None (its edge pixels repeated) or a random flat BGR colour."""
    return None if rng.random() < 0.5 else [int(v) for v in rng.integers(0, 256, 3)]


def turn_photo(
    image: np.ndarray, boxes: np.ndarray, ignores: np.ndarray, degrees: float, fill: list[int] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The photo turned about its centre by `degrees` (counter-clockwise), on a canvas enlarged to hold it all.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
    boxes, ignores : ndarray of shape (N, 4), dtype float32
        Die boxes and ignore regions, ``[x, y, w, h]`` in pixels of `image`.
    degrees : float
        The turn, in degrees.
    fill : list of 3 ints or None
        BGR colour of the uncovered corners; None repeats the photo's edge pixels.

    Returns
    -------
    turned : ndarray of shape (H', W', 3), dtype uint8
    boxes, ignores : ndarray of shape (N, 4), dtype float32
        In pixels of `turned`. A die box keeps its centre exactly; its width and
        height are those of the ellipse inscribed in the box, turned (a labelled box
        holds a die of unknown orientation, and the turned corners' box would grow a
        die up to 41 % at 45 degrees, more than any die's own box grows). An ignore
        region becomes the box of its four turned corners, so nothing it covered is
        learnt as background.
    """
    h, w = image.shape[:2]
    a = math.radians(degrees)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    out_w, out_h = int(math.ceil(w * c + h * s - 1e-6)), int(math.ceil(w * s + h * c - 1e-6))
    # in pixel-centre coordinates, as warpAffine maps them: the photo's centre onto the canvas's
    m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), degrees, 1.0)
    m[0, 2] += (out_w - w) / 2.0
    m[1, 2] += (out_h - h) / 2.0
    if fill is None:
        turned = cv2.warpAffine(image, m, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    else:
        turned = cv2.warpAffine(
            image, m, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=fill
        )

    def centres(b: np.ndarray) -> np.ndarray:
        # box coordinates count pixel edges; warpAffine's matrix maps pixel centres (half a pixel in)
        pts = np.stack([b[:, 0] + b[:, 2] / 2 - 0.5, b[:, 1] + b[:, 3] / 2 - 0.5, np.ones(len(b))], axis=1)
        return pts @ m.T + 0.5

    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    ctr = centres(boxes)
    bw = np.sqrt((boxes[:, 2] * c) ** 2 + (boxes[:, 3] * s) ** 2)
    bh = np.sqrt((boxes[:, 2] * s) ** 2 + (boxes[:, 3] * c) ** 2)
    new_boxes = np.stack([ctr[:, 0] - bw / 2, ctr[:, 1] - bh / 2, bw, bh], axis=1).astype(np.float32)
    ignores = np.asarray(ignores, np.float32).reshape(-1, 4)
    iw = ignores[:, 2] * c + ignores[:, 3] * s
    ih = ignores[:, 2] * s + ignores[:, 3] * c
    ictr = centres(ignores)
    new_ign = np.stack([ictr[:, 0] - iw / 2, ictr[:, 1] - ih / 2, iw, ih], axis=1).astype(np.float32)
    return turned, new_boxes, new_ign


def _photometric(image, rng):
    img = image.astype(np.float32)
    is_grey = float(np.abs(img[..., 0] - img[..., 1]).mean() + np.abs(img[..., 1] - img[..., 2]).mean()) < 2.0
    if not is_grey and rng.random() < 0.25:
        g = img @ np.float32([0.114, 0.587, 0.299])
        img = np.repeat(g[..., None], 3, axis=2)
    elif not is_grey and rng.random() < 0.5:
        hsv = cv2.cvtColor(np.clip(img, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + int(rng.integers(-20, 21))) % 180
        hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.6, 1.4), 0, 255)
        img = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32)
    if rng.random() < 0.3:
        img = img[..., rng.permutation(3)]
    if rng.random() < 0.8:  # per-channel gain (white balance / tinted grey)
        img = img * rng.uniform(0.85, 1.15, 3).astype(np.float32)
    # brightness, contrast, gamma
    img = (img - 128.0) * rng.uniform(0.6, 1.4) + 128.0 + rng.uniform(-40, 40)
    img = np.clip(img, 0, 255)
    img = 255.0 * (img / 255.0) ** math.exp(rng.uniform(-0.4, 0.4))
    if rng.random() < 0.3:
        k = int(rng.choice([3, 5]))
        img = cv2.GaussianBlur(img, (k, k), 0)
    if rng.random() < 0.4:
        img = img + rng.normal(0, rng.uniform(2, 10), img.shape).astype(np.float32)
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        img = jpeg_roundtrip(img, int(rng.integers(35, 90)))
    return img


def heatmap_targets(boxes, ign, crop, learn_size=True):
    """Heatmap, regression targets, their masks (offsets; sizes, zero unless `learn_size`) and the loss weights."""
    n = crop // STRIDE
    heat = np.zeros((1, n, n), np.float32)
    reg = np.zeros((4, n, n), np.float32)
    regmask = np.zeros((2, n, n), np.float32)
    weight = np.ones((1, n, n), np.float32)
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    for b in ign:  # partial boxes (face, pips, cut dice): ignore a square 3x their long side
        r = 1.5 * max(b[2], b[3])
        cx, cy = b[0] + b[2] / 2, b[1] + b[3] / 2
        x1, y1 = int(max(0, math.floor((cx - r) / STRIDE))), int(max(0, math.floor((cy - r) / STRIDE)))
        x2, y2 = int(math.ceil((cx + r) / STRIDE)), int(math.ceil((cy + r) / STRIDE))
        weight[0, y1:y2, x1:x2] = 0.0
    for b in boxes:
        cx, cy = (b[0] + b[2] / 2) / STRIDE, (b[1] + b[3] / 2) / STRIDE
        ix, iy = min(n - 1, int(cx)), min(n - 1, int(cy))
        sigma = max(0.7, 0.16 * min(b[2], b[3]) / STRIDE)
        g = np.exp(-((xx - cx + 0.5) ** 2 + (yy - cy + 0.5) ** 2) / (2 * sigma * sigma))
        heat[0] = np.maximum(heat[0], g)
        heat[0, iy, ix] = 1.0
        reg[:, iy, ix] = [math.log(max(b[2], 1.0) / STRIDE), math.log(max(b[3], 1.0) / STRIDE), cx - ix, cy - iy]
        regmask[0, iy, ix] = 1.0
        regmask[1, iy, ix] = 1.0 if learn_size else 0.0
        weight[0, iy, ix] = 1.0
    # a die centre always teaches, even inside another object's ignore region
    weight = np.maximum(weight, (heat > 0.3).astype(np.float32))
    return heat, reg, regmask, weight
