"""Extra training crops for the face reader, cut once and cached on disk.

Drawn dice (:func:`synth_cache`), dice in :mod:`vision.render` images
(:func:`render_cache`) and the DEV photos trained on with ``--dev-train``
(:func:`dev_training_cache`); :mod:`vision.lab.training.train_face` adds them to
the TRAIN photos' crops.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from vision.lab.training import synth
from vision.lab.training.data import CONTEXT_SIZE, load_cache, save_npz_atomically, source_hash


def synth_cache(n_per_class: int, seed: int, cache_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """Drawn context crops (:func:`vision.lab.training.synth.synth_set`), cached in `cache_dir`."""
    path = Path(cache_dir) / f"synth_{n_per_class}_{seed}_{CONTEXT_SIZE}_{source_hash(synth.__file__)}.npz"
    if path.is_file():
        z = np.load(path)
        return z["crops"], z["labels"]
    t = time.time()
    crops, labels = synth.synth_set(n_per_class, seed, size=CONTEXT_SIZE)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_npz_atomically(path, crops=crops, labels=labels)
    print(f"drew {len(labels)} synthetic crops in {time.time() - t:.0f} s", flush=True)
    return crops, labels


def render_cache(
    n_images: int, seed: int, cache_dir: Path, *, randomised: bool = False, leaning: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Context crops of dice in :mod:`vision.render` images (tray scenes, or domain-randomised ones,
    with a leaning die in each when `leaning`), cached (:func:`vision.lab.training.render_data.cached_render_samples`).

    Returns
    -------
    crops : ndarray of shape (N, CONTEXT_SIZE, CONTEXT_SIZE, 3), dtype uint8
        BGR context crops; N is 0 when `n_images` is 0.
    labels : ndarray of shape (N,), dtype int64
        0 (not a readable face: background, half off a die, a leaning die) or the face value 1-6.
    """
    from vision.lab.training.render_data import cached_render_samples

    crops, labels, _ = cached_render_samples(n_images, seed, cache_dir, randomised=randomised, leaning=leaning)
    return crops, labels


def dev_training_cache(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Context crops of the DEV photos to train on (``--dev-train``), and the held-out fold.

    ``none``: no DEV crops. ``all``: every DEV photo (positives and negatives,
    cut as in :func:`vision.lab.training.data.build_samples`). ``fold:K``: the
    photos outside fold K (:func:`vision.lab.training.data.dev_fold`), so that
    fold K measures the model honestly.

    Returns
    -------
    crops : ndarray of shape (N, CONTEXT_SIZE, CONTEXT_SIZE, 3), dtype uint8
    labels : ndarray of shape (N,), dtype int64
    held_out : int or None
        The fold not trained on, or None.

    Raises
    ------
    ValueError
        If ``--dev-train`` is not ``none``, ``all`` or ``fold:K``.
    """
    from vision.lab.training.data import build_samples, dev_train_selection

    mode = args.dev_train
    if mode == "none":
        return np.zeros((0, CONTEXT_SIZE, CONTEXT_SIZE, 3), np.uint8), np.zeros(0, np.int64), None
    files = [s.file for s in build_samples(args.dev_dir, seed=args.seed)]
    keep, held_out = dev_train_selection(mode, files)  # checks the mode before any crop is cut
    crops, labels, _ = load_cache(args.dev_dir, args.cache_dir, seed=args.seed)
    print(f"DEV photos trained on ({mode}): {keep.sum()} of {len(keep)} samples", flush=True)
    return crops[keep], labels[keep], held_out
