"""Train the die detector (a tiny CenterNet-style network) and export it to ONNX.

Writes ``OUT/die_detector.onnx`` and ``OUT/die_detector.json`` (architecture,
input convention, data, steps, and the command that ran). The network
(:mod:`vision.lab.training.detector_net`) takes a BGR photo resized so that its
long side is :data:`vision.detect.INPUT_LONG_SIDE` pixels and returns, at
stride 4, a heatmap of die centres, the box size and the sub-cell offset of
each centre; the training crops and their targets are made by
:mod:`vision.lab.training.detector_samples`.

Training data: the photos of ``../shared/dice-images/train`` whose boxes cover
whole dice; photos with face- or pip-only boxes are used as background with the
boxed regions ignored (see :mod:`vision.lab.training.detect_data`), and the
cache's renders when it holds some. The dev set is never trained on; it is only
used by ``dicetable eval``.

Run (CPU: the defaults take about 20 minutes on 2 idle cores; seeded)::

    pip install -e .[train]
    python -m vision.lab.training.detect_data --out /tmp/dicetable_detect_cache.npz [--renders N]
        [--clutter-share S] [--close-up-share S]
    python -m vision.lab.training.train_detector --cache /tmp/dicetable_detect_cache.npz --out vision/models

``--init vision/models/die_detector.onnx`` fine-tunes an exported detector
instead of starting from random weights (:func:`load_onnx_weights`; batch-norm
statistics frozen); ``--turn-prob P`` cuts a share of the crops from photos
turned by any angle (:func:`turn_photo`); ``--minutes M`` trains for a
wall-clock time instead of ``--epochs``.

The shipped model was trained on a GPU machine (its exact command is in
``vision/models/die_detector.json``). The fine-tunes measured and not shipped,
with their numbers, are in ``docs/training.md`` (section "Die detector"):
judge a new detector on ``benchmarks/close_ups.py`` as well as on DEV and the
stress sets before shipping it.

Torch is imported only here and in :mod:`~vision.lab.training.detector_net`,
never at run time.
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

from vision.lab.training.data import recorded_command
from vision.lab.training.detect_data import is_render, load_cache
from vision.lab.training.detector_net import (
    MEAN,
    STD,
    WIDTHS,
    DieNet,
    Exportable,
    detector_loss,
    freeze_batch_norms,
    load_onnx_weights,
)
from vision.lab.training.detector_samples import INPUT_LONG_SIDE, STRIDE, augment_crop, heatmap_targets, turn_photo

__all__ = [
    "DieNet",
    "Exportable",
    "DetectData",
    "load_onnx_weights",
    "init_record",
    "turn_photo",
    "main",
    "STRIDE",
    "INPUT_LONG_SIDE",
    "WIDTHS",
    "MEAN",
    "STD",
]


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
        image, boxes, ign = augment_crop(image, boxes, ign, self.crop, rng, turn_prob=self.turn_prob)
        x = (image.astype(np.float32) / 255.0 - MEAN) / STD
        # a render teaches where dice are, not how big to box them: the photos' labels (TRAIN, as
        # DEV) box a die with a margin the renderer's outlines lack, and a first fine-tune that
        # learned render box sizes boxed DEV's nell dice 9-11 % small (box IoU >= 0.5: 99.2 -> 97.4 %)
        heat, reg, regmask, weight = heatmap_targets(boxes, ign, self.crop, learn_size=not is_render(self.names[k]))
        return (
            torch.from_numpy(x.transpose(2, 0, 1).copy()),
            torch.from_numpy(heat),
            torch.from_numpy(reg),
            torch.from_numpy(regmask),
            torch.from_numpy(weight),
        )


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


def main(argv: list[str] | None = None) -> int:
    """Command line: train the die detector and write ``die_detector.onnx`` and ``.json``."""
    parser = argparse.ArgumentParser(description="Train the die detector (CenterNet-style) and export ONNX.")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path("/tmp/dicetable_detect_cache.npz"),
        help="cache from `python -m vision.lab.training.detect_data` (built there if missing)",
    )
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
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        metavar="ONNX",
        help="fine-tune from this exported detector (for instance vision/models/die_detector.onnx) "
        "instead of starting from random weights; batch-norm statistics stay frozen",
    )
    parser.add_argument(
        "--turn-prob",
        type=float,
        default=0.0,
        help="share of training crops cut from a photo turned by a random angle of up to 45 degrees "
        "(turn_photo; default 0: flips and quarter turns only)",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="train for this wall-clock time instead of --epochs (cosine schedule over the time; "
        "for a fast machine: the step count then depends on its speed)",
    )
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
        loader = torch.utils.data.DataLoader(
            data, batch_size=args.batch, shuffle=False, num_workers=args.workers, persistent_workers=False
        )
        net.train()
        if args.init is not None:
            freeze_batch_norms(net)
        losses, focals = [], []
        for x, heat, reg, regmask, weight in loader:
            x, heat, reg, regmask, weight = (t.to(args.device) for t in (x, heat, reg, regmask, weight))
            loss, focal = detector_loss(net(x), heat, reg, regmask, weight)
            for group in opt.param_groups:
                group["lr"] = lr_at()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            losses.append(loss.item())
            focals.append(focal)
        epoch += 1
        print(
            f"epoch {epoch} step {step} loss {np.mean(losses):.3f} focal {np.mean(focals):.3f} "
            f"({time.time() - t0:.0f} s)",
            flush=True,
        )
    net = net.cpu().eval()
    args.out.mkdir(parents=True, exist_ok=True)
    onnx_path = args.out / "die_detector.onnx"
    torch.onnx.export(
        Exportable(net),
        torch.zeros(1, 3, INPUT_LONG_SIDE, INPUT_LONG_SIDE),
        str(onnx_path),
        dynamo=False,
        input_names=["image"],
        output_names=["maps"],
        opset_version=13,
        dynamic_axes={"image": {2: "height", 3: "width"}, "maps": {2: "grid_height", 3: "grid_width"}},
    )
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
