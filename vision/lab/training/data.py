"""Training samples for the face reader, cut once into a crop cache.

Sources (all from ``../shared/dice-images/train``, the TRAIN set, which is for
training only; the DEV set is never read here):

- ``box_kind == "die"`` boxes (Rune55 webcam trays, grayscale nell-byler
  copies, colour tray photos): used as they are.
- ``box_kind == "pips"`` boxes (matteop65 webcam photos of ivory dice): the box
  covers the pip pattern only, so it is widened to a die box: centred on the
  pip box, side = :data:`PIPS_TO_DIE` times the median side of the image's
  pip boxes of values 2-6 (a lone 1 has a tiny box, so its own size is not
  used). Images with only 1s are skipped.
- ``box_kind == "face"`` boxes (Rune55 oblique phone photos on white paper):
  the box is one face; side x :data:`FACE_TO_DIE`. Their values are less
  reliable (README), so they are used only when ``use_face_boxes`` is set.
- Negatives (class 0), per image: random squares whose box has IoU < 0.1 with
  every die box; squares centred between two neighbouring dice; and squares
  shifted half off a die (largest IoU with any die box at most 0.4). No
  negative has a die centre within :data:`NEG_CENTRE_GAP` die sides of its
  own centre (Chebyshev), so that at least about half of every die in it is
  cut off.

Every sample is stored as a *context crop*: a square of
``CONTEXT_FACTOR`` times the nominal crop side (the side :func:`vision.face.crop_die`
would use), resized to ``CONTEXT_SIZE`` px, so that the training augmentation
can rotate, scale and shift it and then take the nominal crop from the middle
(see :mod:`vision.lab.training.augment`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.face import DEFAULT_MARGIN, _crop_square
from vision.lab.dataset import DEFAULT_DEV_DIR  # noqa: F401 (re-exported for the trainers)
from vision.lab.holdout import without_held_out
from vision.lab.training.records import recorded_command, save_npz_atomically, source_hash  # noqa: F401 (re-exported)

#: Context crops cover this many times the nominal crop side.
CONTEXT_FACTOR: float = 1.6
#: Side of the stored context crops, in px (the nominal crop is then ~60 px).
CONTEXT_SIZE: int = 96
#: Die side over the median pip-pattern side (matteop65 ``pips`` boxes).
PIPS_TO_DIE: float = 1.45
#: Die side over the face-box side (Rune55 ``face`` boxes).
FACE_TO_DIE: float = 1.1

#: A negative's centre is at least this many die sides from every die centre.
NEG_CENTRE_GAP: float = 0.6

DEFAULT_TRAIN_DIR = Path(__file__).resolve().parents[3] / ".." / "shared" / "dice-images" / "train"

#: The DEV set is split into this many folds by image (:func:`dev_fold`) so that
#: a model trained on some folds can be measured on the others.
DEV_FOLDS: int = 2


def dev_fold(file: str, folds: int = DEV_FOLDS) -> int:
    """Fold of one labelled photo: a stable hash of its file name, 0..folds-1.

    Every die of a photo lands in the same fold (dice of one photo share the
    dice set, light and camera, so splitting them would leak).
    """
    return int(hashlib.sha1(file.encode("utf-8")).hexdigest()[:8], 16) % folds


def dev_train_selection(mode: str, files: np.ndarray | list[str]) -> tuple[np.ndarray, int | None]:
    """Which DEV samples a model trains on under ``--dev-train MODE``, and the fold held out.

    Parameters
    ----------
    mode : str
        ``none`` (no DEV sample), ``all`` (every one) or ``fold:K`` (all but the
        photos of fold K, which then measures the model honestly).
    files : sequence of str, length N
        Photo file name of each DEV sample.

    Returns
    -------
    train : ndarray of shape (N,), dtype bool
        The samples to train on.
    held_out : int or None
        K for ``fold:K``, else None.

    Raises
    ------
    ValueError
        If `mode` is none of those (K must be 0 to ``DEV_FOLDS - 1``).
    """
    n = len(files)
    if mode == "none":
        return np.zeros(n, bool), None
    if mode == "all":
        return np.ones(n, bool), None
    k = mode[5:] if mode.startswith("fold:") else ""
    if not (k.isdigit() and int(k) < DEV_FOLDS):
        raise ValueError(f"--dev-train must be none, all or fold:K with K in 0..{DEV_FOLDS - 1}, got {mode!r}")
    return np.array([dev_fold(f) != int(k) for f in files], bool), int(k)


DEFAULT_CACHE_DIR = Path("/tmp/dicetable_face_cache")


@dataclass(frozen=True, slots=True)
class Sample:
    """One crop to cut: image file, centre and nominal crop side (px), label 0-6."""

    file: str
    cx: float
    cy: float
    side: float
    label: int
    kind: str  # "die", "pips", "face", "neg_random", "neg_between", "neg_half"


def nominal_side(w: float, h: float, margin: float = DEFAULT_MARGIN) -> float:
    """Side of the square :func:`vision.face.crop_die` cuts for a ``w`` x ``h`` box, in px."""
    return max(w, h) * (1.0 + 2.0 * margin)


def iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over union of two ``(x, y, w, h)`` boxes."""
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def _far_from_dice(cx: float, cy: float, boxes: list[tuple[float, float, float, float]]) -> bool:
    for x, y, w, h in boxes:
        gap = max(abs(cx - (x + w / 2)), abs(cy - (y + h / 2)))
        if gap < NEG_CENTRE_GAP * max(w, h):
            return False
    return True


def _die_boxes(image: dict) -> list[tuple[tuple[float, float, float, float], int, str]]:
    """Whole-die boxes of one image (widened for pips/face kinds), with value and kind."""
    dice = image["dice"]
    pip_sides = [max(d["box"][2:]) for d in dice if d.get("box_kind") == "pips" and d["value"] >= 2]
    pip_med = float(np.median(pip_sides)) if pip_sides else None
    out = []
    for d in dice:
        x, y, w, h = (float(v) for v in d["box"])
        kind = d.get("box_kind", "die")
        cx, cy = x + w / 2, y + h / 2
        if kind == "pips":
            if pip_med is None:
                continue
            s = PIPS_TO_DIE * pip_med
            w = h = s
        elif kind == "face":
            w, h = w * FACE_TO_DIE, h * FACE_TO_DIE
        out.append(((cx - w / 2, cy - h / 2, w, h), int(d["value"]), kind))
    return out


def build_samples(
    train_dir: Path = DEFAULT_TRAIN_DIR,
    *,
    seed: int = 0,
    use_face_boxes: bool = False,
    negatives_per_image: int = 3,
) -> list[Sample]:
    """List the positive and negative samples of the TRAIN set.

    Parameters
    ----------
    train_dir : Path
        Folder with ``labels.json`` and the photos (TRAIN set only).
    seed : int
        Seed of the negative sampling.
    use_face_boxes : bool
        Also use the ``face`` boxes (less reliable values).
    negatives_per_image : int
        Random background squares tried per image (plus up to one "between"
        and one "half-off" square).

    Returns
    -------
    samples : list of Sample

    Raises
    ------
    OSError
        If ``labels.json`` is missing.
    """
    rng = np.random.default_rng(seed)
    labels = json.loads((Path(train_dir) / "labels.json").read_text(encoding="utf-8"))
    samples: list[Sample] = []
    for image in without_held_out(labels["images"]):  # the oblique evaluation slice (vision/lab/holdout.py)
        W, H = image["width"], image["height"]
        boxes = _die_boxes(image)
        kinds = {k for _, _, k in boxes}
        if "face" in kinds and not use_face_boxes:
            continue  # other dice in the photo would make bad negatives too
        for (x, y, w, h), value, kind in boxes:
            samples.append(Sample(image["file"], x + w / 2, y + h / 2, nominal_side(w, h), value, kind))
        all_boxes = [b for b, _, _ in boxes]
        if not all_boxes:
            continue
        sizes = [max(b[2], b[3]) for b in all_boxes]
        # random background squares
        for _ in range(negatives_per_image):
            for _try in range(20):
                s = float(rng.choice(sizes)) * rng.uniform(0.8, 1.25)
                x, y = rng.uniform(0, W - s), rng.uniform(0, H - s)
                cand = (x, y, s, s)
                if max(iou(cand, b) for b in all_boxes) < 0.1:
                    samples.append(Sample(image["file"], x + s / 2, y + s / 2, nominal_side(s, s), 0, "neg_random"))
                    break
        # between two neighbouring dice
        if len(all_boxes) >= 2:
            i, j = rng.choice(len(all_boxes), 2, replace=False)
            a, b = all_boxes[i], all_boxes[j]
            s = (max(a[2:]) + max(b[2:])) / 2
            cx = (a[0] + a[2] / 2 + b[0] + b[2] / 2) / 2
            cy = (a[1] + a[3] / 2 + b[1] + b[3] / 2) / 2
            cand = (cx - s / 2, cy - s / 2, s, s)
            if 0.0 < max(iou(cand, bb) for bb in all_boxes) <= 0.4 and _far_from_dice(cx, cy, all_boxes):
                samples.append(Sample(image["file"], cx, cy, nominal_side(s, s), 0, "neg_between"))
        # half off a die (not for widened pip boxes: their die outline is a guess)
        if "pips" in kinds:
            continue
        a = all_boxes[int(rng.integers(len(all_boxes)))]
        for _try in range(10):
            ang = rng.uniform(0, 2 * np.pi)
            d = rng.uniform(0.6, 0.85) * max(a[2:])
            cand = (a[0] + d * np.cos(ang), a[1] + d * np.sin(ang), a[2], a[3])
            m = max(iou(cand, bb) for bb in all_boxes)
            if m <= 0.4 and _far_from_dice(cand[0] + a[2] / 2, cand[1] + a[3] / 2, all_boxes):
                samples.append(
                    Sample(
                        image["file"], cand[0] + a[2] / 2, cand[1] + a[3] / 2, nominal_side(a[2], a[3]), 0, "neg_half"
                    )
                )
                break
    return samples


def cut_context(image: np.ndarray, cx: float, cy: float, side: float) -> np.ndarray:
    """Context crop of one sample: ``CONTEXT_FACTOR * side`` px square, resized to ``CONTEXT_SIZE``."""
    return _crop_square(image, cx, cy, side * CONTEXT_FACTOR, CONTEXT_SIZE)


def context_px(points: np.ndarray, cx: float, cy: float, side: float) -> np.ndarray:
    """Image points in px of the context crop :func:`cut_context` cuts with the same ``cx, cy, side``.

    Parameters
    ----------
    points : ndarray of shape (K, 3)
        ``x``, ``y`` and a length (a radius), image px.
    cx, cy, side : float
        As given to :func:`cut_context`, image px.

    Returns
    -------
    ndarray of shape (K, 3), dtype float64
        The same points in px of the ``CONTEXT_SIZE`` crop (the square's
        rounding as in :func:`vision.face._crop_square`).
    """
    side_px = max(1, int(round(side * CONTEXT_FACTOR)))
    x0, y0 = int(round(cx - side_px / 2.0)), int(round(cy - side_px / 2.0))
    f = CONTEXT_SIZE / side_px
    p = np.asarray(points, np.float64).reshape(-1, 3)
    return np.column_stack([(p[:, 0] - x0 + 0.5) * f - 0.5, (p[:, 1] - y0 + 0.5) * f - 0.5, p[:, 2] * f])


def samples_from_noted_photos(
    train_dir: Path, prefixes: list[str], *, seed: int = 0, use_face_boxes: bool = False
) -> np.ndarray:
    """Which TRAIN samples come from photos whose ``notes`` in labels.json begin with one of `prefixes`.

    Parameters
    ----------
    train_dir : Path
        The TRAIN folder (``labels.json`` and the photos).
    prefixes : list of str
        Beginnings of the ``notes`` field (see ``../shared/dice-images/README.md``,
        "Sources (train)"), e.g. ``"Rune55 grayscale copy"``.
    seed, use_face_boxes
        As given to :func:`load_cache`, whose samples this lines up with.

    Returns
    -------
    ndarray of shape (N,), dtype bool
        One entry per sample of :func:`build_samples` (the
        rows of the cache), True where the sample's photo matches. Filtering the
        cache rows keeps every other sample exactly as it was cut.

    Raises
    ------
    ValueError
        If a prefix matches no photo (a typo would silently change nothing).
    """
    labels = json.loads((Path(train_dir) / "labels.json").read_text(encoding="utf-8"))
    notes = {im["file"]: str(im.get("notes", "")) for im in labels["images"]}
    for prefix in prefixes:
        if not any(n.startswith(prefix) for n in notes.values()):
            raise ValueError(
                f"no photo's notes in {Path(train_dir) / 'labels.json'} begin with {prefix!r}; "
                "see 'Sources (train)' in the dice-images README for the sub-sources"
            )
    files = [s.file for s in build_samples(train_dir, seed=seed, use_face_boxes=use_face_boxes)]
    return np.array([notes[f].startswith(tuple(prefixes)) for f in files], dtype=bool)


def load_cache(
    train_dir: Path = DEFAULT_TRAIN_DIR,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    *,
    seed: int = 0,
    use_face_boxes: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Context crops of the TRAIN set, cut once and kept in `cache_dir`.

    Returns
    -------
    crops : ndarray of shape (N, CONTEXT_SIZE, CONTEXT_SIZE, 3), dtype uint8
    labels : ndarray of shape (N,), dtype int64
        0 = not a face, 1..6 = face value.
    kinds : ndarray of shape (N,), dtype str
        Sample kind (see :class:`Sample`) prefixed with the file's source prefix.

    Works for any folder in the labels format (``box_kind`` missing means a
    whole-die box), so the DEV set can be cut the same way when a model is
    trained on it (``train_face --dev-train``).
    """
    samples = build_samples(train_dir, seed=seed, use_face_boxes=use_face_boxes)
    key = hashlib.sha1(
        repr(
            (
                str(Path(train_dir).resolve()),
                CONTEXT_FACTOR,
                CONTEXT_SIZE,
                PIPS_TO_DIE,
                FACE_TO_DIE,
                samples[:50],
                len(samples),
            )
        ).encode()
    ).hexdigest()[:12]
    path = Path(cache_dir) / f"{Path(train_dir).resolve().name}_{key}.npz"
    if path.is_file():
        z = np.load(path)
        return z["crops"], z["labels"], z["kinds"]
    crops = np.zeros((len(samples), CONTEXT_SIZE, CONTEXT_SIZE, 3), np.uint8)
    by_file: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        by_file.setdefault(s.file, []).append(i)
    for f, idx in by_file.items():
        img = cv2.imread(str(Path(train_dir) / f), cv2.IMREAD_COLOR)
        if img is None:
            raise OSError(f"cannot read training image {str(Path(train_dir) / f)!r}")
        for i in idx:
            s = samples[i]
            crops[i] = cut_context(img, s.cx, s.cy, s.side)
    labels = np.array([s.label for s in samples], np.int64)
    kinds = np.array([s.file.split("_")[0] + ":" + s.kind for s in samples])
    path.parent.mkdir(parents=True, exist_ok=True)
    save_npz_atomically(path, crops=crops, labels=labels, kinds=kinds)
    return crops, labels, kinds
