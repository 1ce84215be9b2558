"""Train the die detector (a tiny CenterNet-style network) and export it to ONNX.

The network takes a BGR photo resized so that its long side is
:data:`vision.detect.INPUT_LONG_SIDE` pixels and returns, at stride 4, a
heatmap of die centres, the box size (log of width and height in units of the
stride) and the sub-cell offset of each centre (Zhou et al. [1]_).

Training data: the photos of ``../shared/dice-images/train`` whose boxes cover
whole dice; photos with face- or pip-only boxes are used as background with the
boxed regions ignored (see :mod:`vision.lab.training.detect_data`). The dev set is
never trained on; it is only used by ``dicetable eval``.

Run (CPU: the defaults take about 20 minutes on 2 idle cores; seeded)::

    pip install -e .[train]
    python -m vision.lab.training.detect_data --out /tmp/dicetable_detect_cache.npz [--renders N]
        [--clutter-share S] [--close-up-share S]
    python -m vision.lab.training.train_detector --cache /tmp/dicetable_detect_cache.npz --out vision/models

``--renders N`` adds N domain-randomised renders to the photos (see
:mod:`vision.lab.training.detect_data`; a share of them can show objects that are
not dice, ``--clutter-share``, or be close-ups of one die, ``--close-up-share``). ``--init vision/models/die_detector.onnx``
fine-tunes an exported detector instead of starting from random weights
(:func:`load_onnx_weights`; batch-norm statistics frozen), so that a CPU run
of half an hour can teach the shipped network new looks without the GPU
run's budget.

The shipped model (``vision/models/die_detector.json`` records its exact
command) was trained on a GPU machine for 6.5 minutes of wall-clock time
(``--minutes 6.5 --batch 48 --crop 320 --steps-per-epoch 200 --workers 15``:
8800 steps of 48 crops, about 14 times the samples of the CPU defaults, data
augmentation on 15 CPU workers being the bottleneck). The CPU defaults make a
smaller run of the same recipe; it was not carried to the end here, so
measure its result with ``benchmarks/detect_dev.py --model`` before shipping it.

Fine-tuning the shipped detector with renders, measured and not shipped
(``detect_data --renders 1200``, then ``--init vision/models/die_detector.onnx
--minutes 33 --steps-per-epoch 100 --batch 16 --crop 320 --lr 1e-3 --device
cpu``: about 3,700 steps on this project's 2 cores). Against the shipped
detector, with the shipped face reader and pip finder:

* rendered stress sets (seed 0, ``--n 10``, 1074 dice): 1051 right / 0 wrong
  / 1 missed against 1040 / 1 / 8 (leaning dice given a value 1 against 2);
  translucent, coloured-pip, random and marbled sets of seeds 0 and 1
  (``--n 40``, 1563 dice): 1473 right / 4 wrong / 1 missed against 1434 / 4 /
  46, though leaning dice given a value 5 against 2 (dice valued where none
  was drawn 0 against 1). Dark translucent dice with red pips, which the
  shipped detector misses beside tray walls, are found.
* DEV read by the held-out twins (947 dice): 889 right against 887, silent
  errors the same (4 wrong, 1 extra valued).
* but on the kingpi DEV photos (the Pi camera's tray) its coarse look boxes
  the tray's stand, cut by the picture's bottom edge, as a big die in 7 of
  13 photos (face reader: "not a die" at 0.61, under the drop rule's 0.8), so
  they are no longer read exactly (unreadable phantom dice); DEV in-sample
  898 right / 4 wrong / 10 extra dice (1 valued) against 899 / 5 / 2 (1).

A gentler one (``--lr 4e-4``, 24 minutes, about 1,800 steps on a busy
machine) kept the stand in 2 kingpi photos, left 2 kingpi dice unknown and
read the held-out DEV dice 890 right / 5 wrong (one more silent error).
The first such fine-tune also learned the renders' box sizes and boxed DEV's
nell dice 9-11 % small (held out 884 right); renders now teach where dice
are, not how big to box them (:func:`_targets`).

Since then the reader drops a coarse-look box beside the dice found that does
not look like a face (:func:`vision.closeups.close_up_dice`), which removes the
kingpi stand of all these fine-tunes (78 / 78, no extras). But every one of
them loses the close-ups (``benchmarks/close_ups.py``; shipped detector:
single 279 right / 2 wrong / 1 valued extra, a die filling the picture
(crop 1.00) 44 right / 0 valued extras):

* the lr 1e-3 run above: single 260 / 6 / 3; crop 1.00 18 right, 16 of its
  pips read as dice;
* the same with ``detect_data --clutter-share 0.5`` (33 minutes): single 252 /
  8 / 6; crop 1.00 14 right, 21 pips read; held-out DEV 885 right / 5 wrong;
  it no longer boxes the renders' coins (stress set ``clutter``, seeds 0-1,
  ``--n 40``: 0 phantoms against 19) but gave leaning dice a value 4 times
  against 2 (seed 0, ``--n 10``);
* the same with ``--clutter-share 0.5 --close-up-share 0.3`` (30 minutes):
  single 268 / 4 / 0; crop 1.00 20 right, 13 pips read; held-out DEV 883
  right / 5 wrong / 1 extra valued. On renders it beat the shipped detector
  everywhere: stress seed 0 ``--n 10`` 1 wrong / 2 leaning valued / 1 missed
  against 1 / 2 / 8; the hard looks and clutter of seeds 0-1 (``--n 40``)
  3 wrong / 3 leaning valued / 1 missed / 0 phantoms against 5 / 2 / 46 / 19
  (and one valued extra).

The renders hold small dice only (close-up renders are enlarged and soft), and
a short fine-tune forgets what the GPU run learned of big dice from TRAIN's
close-ups. Judge any new detector on ``benchmarks/close_ups.py`` as well as on
DEV and the stress sets.

Turned photos (``--turn-prob``, :func:`turn_photo`), measured and not shipped.
The shipped detector, trained with flips and quarter turns only, misses 7 of
DEV's 947 dice when the camera is turned 30 degrees (``benchmarks/camera_changes.py
--changes turn``), most beside a tray wall that then runs diagonally. A
photos-only fine-tune with half its crops turned (``--init
vision/models/die_detector.onnx --turn-prob 0.5 --minutes 30 --steps-per-epoch
100 --batch 16 --crop 320 --lr 5e-4 --device cpu``, 3,800 steps on 2 cores,
stop 31) missed 2 (right 893 against 887), read the tilted photos better (888
against 879) and the held-out DEV dice a little better (twins: 889 right / 5
wrong / 53 unknown against 887 / 5 / 55). But it too lost the close-ups: single
273 right / 3 wrong against 281 / 2; a die filling the picture (crop 1.00) 37
right with 6 values given to its pips against 44 and none; jim's big dice boxed
at IoU >= 0.5 none of 11 against 6 (``benchmarks/detect_dev.py``, 18 extras
against 7); rendered stress sets (seed 0, ``--n 10``) 1095 right / 1 wrong
against 1092 / 0. The table itself reads the tray rectified by the calibration's
homography, so its walls never run diagonally there; the turned camera matters
for ``dicetable read`` on other people's photos, not at the table, and does not
pay for silent errors on close-ups.

Torch is imported only here, never at run time.

References
----------
.. [1] X. Zhou, D. Wang, P. Krähenbühl, "Objects as Points", arXiv:1904.07850, 2019.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from vision.images import jpeg_roundtrip
from vision.lab.training.data import recorded_command
from vision.lab.training.detect_data import is_render, load_cache

STRIDE = 4
INPUT_LONG_SIDE = 384  # keep equal to vision.detect.INPUT_LONG_SIDE
WIDTHS = (12, 16, 32, 64)
MEAN, STD = 0.5, 0.25


def _cbr(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class DieNet(nn.Module):
    """Encoder to stride 16, two top-down merges to stride 4, a 5-channel 1x1 head."""

    def __init__(self, widths: tuple[int, int, int, int] = WIDTHS) -> None:
        super().__init__()
        a, b, c, d = widths
        self.c1, self.c2, self.c3 = _cbr(3, a, 2), _cbr(a, b, 2), _cbr(b, b)
        self.c4, self.c5 = _cbr(b, c, 2), _cbr(c, c)
        self.c6, self.c7, self.c8 = _cbr(c, d, 2), _cbr(d, d), _cbr(d, d, dilation=2)
        self.l1, self.u1 = nn.Conv2d(d, c, 1), _cbr(c, c)
        self.l2, self.u2 = nn.Conv2d(c, b, 1), _cbr(b, b)
        self.head = nn.Conv2d(b, 5, 1)
        nn.init.constant_(self.head.bias, 0.0)
        with torch.no_grad():
            self.head.bias[0] = -4.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f4 = self.c3(self.c2(self.c1(x)))
        f8 = self.c5(self.c4(f4))
        f16 = self.c8(self.c7(self.c6(f8)))
        y = self.u1(F.interpolate(self.l1(f16), scale_factor=2.0, mode="nearest") + f8)
        y = self.u2(F.interpolate(self.l2(y), scale_factor=2.0, mode="nearest") + f4)
        return self.head(y)


# ----------------------------------------------------------------------------- data

class DetectData(torch.utils.data.Dataset):
    """Random crops of the cached photos with augmentation, and their targets."""

    def __init__(self, cache: Path, crop: int, length: int, seed: int, turn_prob: float = 0.0) -> None:
        self.jpegs, self.boxes, self.ignores, self.names = load_cache(cache)
        self.crop, self.length, self.seed = crop, length, seed
        self.turn_prob = turn_prob
        self.epoch = 0

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int):
        cv2.setNumThreads(1)
        rng = np.random.default_rng((self.seed, self.epoch, i))
        k = int(rng.integers(len(self.jpegs)))
        image = cv2.imdecode(self.jpegs[k], cv2.IMREAD_COLOR)
        boxes, ign = self.boxes[k].copy(), self.ignores[k].copy()
        image, boxes, ign = _augment(image, boxes, ign, self.crop, rng, turn_prob=self.turn_prob)
        x = (image.astype(np.float32) / 255.0 - MEAN) / STD
        # a render teaches where dice are, not how big to box them: the photos' labels (TRAIN, as
        # DEV) box a die with a margin the renderer's outlines lack, and a first fine-tune that
        # learned render box sizes boxed DEV's nell dice 9-11 % small (box IoU >= 0.5: 99.2 -> 97.4 %)
        heat, reg, regmask, weight = _targets(boxes, ign, self.crop, learn_size=not is_render(self.names[k]))
        return (torch.from_numpy(x.transpose(2, 0, 1).copy()), torch.from_numpy(heat),
                torch.from_numpy(reg), torch.from_numpy(regmask), torch.from_numpy(weight))


def _augment(image, boxes, ign, crop, rng, turn_prob=0.0):
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
        image, boxes, ign = turn_photo(image, boxes, ign, float(rng.uniform(-45.0, 45.0)),
                                       _fill_colour(rng))
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
    image = image[y0:y0 + crop, x0:x0 + crop]
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


def turn_photo(image: np.ndarray, boxes: np.ndarray, ignores: np.ndarray, degrees: float,
               fill: list[int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        turned = cv2.warpAffine(image, m, (out_w, out_h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=fill)

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


def _targets(boxes, ign, crop, learn_size=True):
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


def _loss(out, heat, reg, regmask, weight):
    p = torch.sigmoid(out[:, :1]).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    neg = (1.0 - pos) * weight
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p ** 2 * (1 - heat) ** 4 * neg).sum()
    npos = pos.sum().clamp(min=1.0)
    focal = (pos_loss + neg_loss) / npos
    size = (F.l1_loss(out[:, 1:3], reg[:, 0:2], reduction="none") * regmask[:, 1:2]).sum() / npos
    off = (F.l1_loss(torch.sigmoid(out[:, 3:5]), reg[:, 2:4], reduction="none") * regmask[:, :1]).sum() / npos
    return focal + 0.5 * size + off, focal.item()


def load_onnx_weights(net: DieNet, path: Path) -> None:
    """Start `net` from an exported detector: its convolutions' weights, batch norms as identities.

    The exported graph has each batch norm folded into the convolution before
    it (13 ``Conv`` nodes, in the order of :meth:`DieNet.forward`). Each folded
    weight goes to the convolution and its bias to the batch norm's shift, with
    the batch norm's scale 1, running mean 0 and running variance ``1 - eps``,
    so that `net` in eval mode computes what the file does. Fine-tune it with
    the batch norms kept in eval mode (their statistics frozen): batch
    statistics would undo the folding.

    Parameters
    ----------
    net : DieNet
        The network to load into (widths as the file's).
    path : Path
        A ``die_detector.onnx`` written by this module.

    Raises
    ------
    ValueError
        If the file's convolutions do not match `net`'s in number or shape.
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    convs = [(weights[n.input[1]], weights[n.input[2]]) for n in model.graph.node if n.op_type == "Conv"]
    layers = [net.c1, net.c2, net.c3, net.c4, net.c5, net.c6, net.c7, net.c8, net.l1, net.u1, net.l2, net.u2, net.head]
    if len(convs) != len(layers):
        raise ValueError(f"{path}: {len(convs)} convolutions, the detector has {len(layers)}; "
                         "start from a die_detector.onnx of the same architecture")
    with torch.no_grad():
        for layer, (w, b) in zip(layers, convs):
            conv = layer[0] if isinstance(layer, nn.Sequential) else layer
            if tuple(conv.weight.shape) != w.shape:
                raise ValueError(f"{path}: a convolution of shape {w.shape} where the detector has "
                                 f"{tuple(conv.weight.shape)}; start from a die_detector.onnx of the same widths")
            conv.weight.copy_(torch.from_numpy(np.array(w)))
            if isinstance(layer, nn.Sequential):
                bn = layer[1]
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(np.array(b)))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            else:
                conv.bias.copy_(torch.from_numpy(np.array(b)))


def init_record(path: Path) -> dict:
    """What a fine-tune started from, for its JSON: the path alone stops naming it once the packaged file is replaced.

    Parameters
    ----------
    path : Path
        The exported detector fine-tuned (``--init``).

    Returns
    -------
    dict
        ``"path"``, ``"sha256"`` (hex digest of the file) and, when the
        detector's JSON recorded one, ``"trained_by"``: that network's training command.

    Raises
    ------
    vision.detect.DetectorModelError
        If the file is missing or unloadable, or its JSON unreadable (read by
        :class:`vision.detect.DieDetector`, as at run time).
    """
    import hashlib

    from vision.detect import DieDetector

    command = DieDetector(path).metadata.get("command")  # first: a clear error for a missing or broken file
    record = {"path": str(path), "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}
    if command:
        record["trained_by"] = command
    return record


def _freeze_batch_norms(net: nn.Module) -> None:
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


class Exportable(nn.Module):
    """The network with the heatmap and offset sigmoids built in (what ONNX ships)."""

    def __init__(self, net: DieNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.net(x)
        return torch.cat([torch.sigmoid(y[:, :1]), y[:, 1:3], torch.sigmoid(y[:, 3:5])], dim=1)


def main(argv: list[str] | None = None) -> int:
    """Command line: train the die detector and write ``die_detector.onnx`` and ``.json``."""
    parser = argparse.ArgumentParser(description="Train the die detector (CenterNet-style) and export ONNX.")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dicetable_detect_cache.npz"),
                        help="cache from `python -m vision.lab.training.detect_data` (built there if missing)")
    parser.add_argument("--out", type=Path, default=Path("vision/models"))
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--steps-per-epoch", type=int, default=60)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--crop", type=int, default=256, help="training crop side, px")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init", type=Path, default=None, metavar="ONNX",
                        help="fine-tune from this exported detector (for instance vision/models/die_detector.onnx) "
                             "instead of starting from random weights; batch-norm statistics stay frozen")
    parser.add_argument("--turn-prob", type=float, default=0.0,
                        help="share of training crops cut from a photo turned by a random angle of up to 45 degrees "
                             "(turn_photo; default 0: flips and quarter turns only)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="train for this wall-clock time instead of --epochs (cosine schedule over the time; "
                             "for a fast machine: the step count then depends on its speed)")
    args = parser.parse_args(argv)
    if not 0.0 <= args.turn_prob <= 1.0:
        parser.error(f"--turn-prob must be between 0 and 1, not {args.turn_prob}")

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    if not args.cache.exists():
        from vision.lab.training.detect_data import build_cache
        build_cache([Path("../shared/dice-images/train")], args.cache)
    data = DetectData(args.cache, args.crop, args.steps_per_epoch * args.batch, args.seed, args.turn_prob)
    n_renders = sum(is_render(name) for name in data.names)
    net = DieNet()
    # recorded before training: with --out beside it, the start's own file is overwritten at the end
    init = init_record(args.init) if args.init is not None else None
    if args.init is not None:
        load_onnx_weights(net, args.init)
    net = net.to(args.device)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    total = args.epochs * args.steps_per_epoch
    t0 = time.time()
    budget = None if args.minutes is None else 60.0 * args.minutes
    step = 0

    def lr_at() -> float:
        frac = step / total if budget is None else (time.time() - t0) / budget
        warm = 0.05
        if frac < warm:
            return args.lr * (0.1 + 0.9 * frac / warm)
        return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, (frac - warm) / (1 - warm)))))

    epoch = 0
    while (epoch < args.epochs) if budget is None else (time.time() - t0 < budget):
        data.epoch = epoch
        loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=False,
                                             num_workers=args.workers, persistent_workers=False)
        net.train()
        if args.init is not None:
            _freeze_batch_norms(net)
        losses, focals = [], []
        for x, heat, reg, regmask, weight in loader:
            x, heat, reg, regmask, weight = (t.to(args.device) for t in (x, heat, reg, regmask, weight))
            loss, focal = _loss(net(x), heat, reg, regmask, weight)
            for group in opt.param_groups:
                group["lr"] = lr_at()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            losses.append(loss.item())
            focals.append(focal)
        epoch += 1
        print(f"epoch {epoch} step {step} loss {np.mean(losses):.3f} focal {np.mean(focals):.3f} "
              f"({time.time() - t0:.0f} s)", flush=True)
    net = net.cpu().eval()
    args.out.mkdir(parents=True, exist_ok=True)
    onnx_path = args.out / "die_detector.onnx"
    torch.onnx.export(Exportable(net), torch.zeros(1, 3, INPUT_LONG_SIDE, INPUT_LONG_SIDE), str(onnx_path),
                      dynamo=False, input_names=["image"], output_names=["maps"], opset_version=13,
                      dynamic_axes={"image": {2: "height", 3: "width"}, "maps": {2: "grid_height", 3: "grid_width"}})
    meta = {
        "model": "die_detector",
        "architecture": f"CenterNet-style FCN, widths {list(WIDTHS)}, output stride {STRIDE}",
        "input": f"BGR, long side {INPUT_LONG_SIDE} px, padded to a multiple of 16, (x/255-{MEAN})/{STD}",
        "outputs": "channel 0 centre heatmap (sigmoid), 1-2 log(w/stride), log(h/stride), 3-4 centre offset in cells",
        "stride": STRIDE,
        "input_long_side": INPUT_LONG_SIDE,
        "mean": MEAN,
        "std": STD,
        "trained_on": "../shared/dice-images/train (box_kind 'die' positive; 'face'/'pips' boxes ignored)"
                      + (f" and {n_renders} vision.render.render_randomised renders" if n_renders else ""),
        "init": init,
        "epochs": epoch,
        "steps": step,
        "steps_per_epoch": args.steps_per_epoch,
        "batch": args.batch,
        "crop": args.crop,
        "turn_prob": args.turn_prob,
        "seed": args.seed,
        "device": args.device,
        "train_seconds": round(time.time() - t0),
        "parameters": int(sum(p.numel() for p in net.parameters())),
        "command": recorded_command("vision.lab.training.train_detector", argv),
        "torch": torch.__version__,
    }
    (args.out / "die_detector.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {onnx_path} ({onnx_path.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
