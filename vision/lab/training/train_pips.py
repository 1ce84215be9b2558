"""Train the pip finder (:mod:`vision.pips`) and export it to ONNX for ``cv2.dnn``.

Usage::

    pip install -e .[train]          # torch==2.13.0, onnx
    python -m vision.lab.training.train_pips --out vision/models [--dev-train none|all|fold:K] [--epochs N] [--seed S]

The pip finder is a small encoder-decoder (U-Net after Ronneberger et al.,
"U-Net: Convolutional Networks for Biomedical Image Segmentation", MICCAI 2015,
shrunk to three levels of 16-48 channels at half resolution) that maps a 64 px die crop to a 32 px map
of "pip of the top face here". Targets (:mod:`vision.lab.training.pip_data`): drawn
dice with exact pips; domain-randomised renders (``--render-randomised N``,
:func:`vision.render.render_randomised`: coloured pips, marbled and dark
dice, surfaces, glare, tilt) with the renderer's own pip positions; and real
photos (TRAIN set; DEV with ``--dev-train``) whose pips the classical layout
check found for the labelled value (with ``--teacher``, also dice whose
labelled layout an earlier pip finder's marks hold, by threshold or by pose
search, :func:`vision.lab.training.pip_data.fit_layout_on_map`). Loss:
binary cross-entropy (pips weighted 3x) plus a soft Dice term. CPU only,
``torch.set_num_threads(2)``, seeded.

Outputs in ``--out``: ``pip_finder.onnx`` (probabilities, sigmoid included) and
``pip_finder.json`` (data counts, settings, time, and the layout agreement on
the held-out DEV dice: how often the map holds the true value's layout and
how often it holds a wrong one).

The packaged network is this float one quantised to 8-bit integers:
``python -m vision.lab.training.quantise OUT/pip_finder.onnx --out vision/models``
(:mod:`vision.lab.training.quantise`).

The packaged network was trained with ``--widths 24 48 64`` (the option's
default, ``16 32 48``, is half the parameters and 0.91 of the reader's time
per photo, but lost a few dice on every rendered set) and before
:func:`~vision.lab.training.pip_data.fit_layout_on_map` tried turns up to 180
degrees; both measured, with the retraining advice, in ``docs/training.md``
("Pip finder").
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from vision.face import CROP_SIZE, preprocess
from vision.lab.training.augment import add_augment_options, augment, augment_options, augment_record
from vision.lab.training.data import (
    CONTEXT_SIZE,
    DEFAULT_CACHE_DIR,
    DEFAULT_DEV_DIR,
    DEFAULT_TRAIN_DIR,
    build_samples,
    dev_train_selection,
    load_cache,
    recorded_command,
)
from vision.lab.training.half_weights import store_half_weights
from vision.lab.training.pip_data import label_real, pip_target, synth_with_pips


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class PipNet(nn.Module):
    """Three-level U-Net, widths 16-32-48; input (N, 3, 64, 64), output (N, 1, 32, 32) logits (stride 2)."""

    def __init__(self, widths: tuple[int, int, int] = (16, 32, 48)) -> None:
        super().__init__()
        w1, w2, w3 = widths
        self.e1 = nn.Sequential(_conv(3, w1, 2), _conv(w1, w1))
        self.e2 = _conv(w1, w2)
        self.e3 = nn.Sequential(_conv(w2, w3), _conv(w3, w3))
        self.pool = nn.MaxPool2d(2)
        self.u2, self.d2 = nn.ConvTranspose2d(w3, w2, 2, stride=2), _conv(2 * w2, w2)
        self.u1, self.d1 = nn.ConvTranspose2d(w2, w1, 2, stride=2), _conv(2 * w1, w1)
        self.head = nn.Conv2d(w1, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.e1(x)
        b = self.e2(self.pool(a))
        c = self.e3(self.pool(b))
        b = self.d2(torch.cat([self.u2(c), b], 1))
        a = self.d1(torch.cat([self.u1(b), a], 1))
        return self.head(a)


class _WithSigmoid(nn.Module):
    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.net(x))


def _dev_samples(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DEV context crops, labels and a mask of those to train on (per ``--dev-train``)."""
    files = [s.file for s in build_samples(args.dev_dir, seed=args.seed)]
    train, _ = dev_train_selection(args.dev_train, files)
    crops, labels, _ = load_cache(args.dev_dir, args.cache_dir, seed=args.seed)
    return crops, labels, train


def train(args: argparse.Namespace) -> dict:
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    augmenting = augment_options(args)
    t0 = time.time()
    real, real_y, _ = load_cache(args.train_dir, args.cache_dir, seed=args.seed)
    finder = None
    if args.teacher is not None:
        from vision.pips import PipFinder

        finder = PipFinder(args.teacher)
    keep, real_pips = label_real(real, real_y, finder)
    negs = np.flatnonzero(real_y[keep] == 0)
    drop = set(rng.choice(negs, max(0, len(negs) - args.negatives), replace=False).tolist())
    sel = [j for j in range(len(keep)) if j not in drop]
    keep, real_pips = keep[sel], [real_pips[j] for j in sel]
    dev, dev_y, dev_train = _dev_samples(args)
    dkeep, dev_pips = label_real(dev[dev_train], dev_y[dev_train], finder)
    syn, syn_pips = synth_with_pips(args.synth, args.seed, CONTEXT_SIZE)
    from vision.lab.training.render_data import cached_render_samples

    ren, _, ren_pips = cached_render_samples(
        args.render_randomised, args.seed + 1, args.cache_dir, randomised=True, with_pips=True
    )
    ctx = np.concatenate([real[keep], syn, ren] + [dev[dev_train][dkeep]] * args.dev_weight)
    pips = real_pips + syn_pips + ren_pips + dev_pips * args.dev_weight
    counts = {
        "train_photos": int(len(keep)),
        "train_dice_without_layout": int((real_y > 0).sum() - (real_y[keep] > 0).sum()),
        "drawn": int(len(syn)),
        "rendered_randomised": int(len(ren)),
        "dev": int(len(dkeep)),
        "dev_weight": args.dev_weight,
        "dev_unlabelled": int(dev_train.sum() - len(dkeep)),
    }
    print(f"{len(ctx)} samples: {counts}", flush=True)
    model = PipNet(tuple(args.widths))
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = int(np.ceil(len(ctx) / args.batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * steps, pct_start=0.15)
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.0))
    history = []
    for epoch in range(args.epochs):
        te = time.time()
        model.train()
        order = rng.permutation(len(ctx))
        tot = 0.0
        for b in range(steps):
            idx = order[b * args.batch : (b + 1) * args.batch]
            xs, ts = [], []
            for i in idx:
                img, p = augment(ctx[i], rng, pips=pips[i], **augmenting)
                xs.append(img)
                ts.append(pip_target(p, scale=0.5))
            xb = torch.from_numpy(preprocess(np.stack(xs)))
            tb = torch.from_numpy(np.stack(ts)[:, None])
            logits = model(xb)
            prob = torch.sigmoid(logits)
            inter = (prob * tb).sum((1, 2, 3))
            dice = 1 - (2 * inter + 1) / (prob.sum((1, 2, 3)) + tb.sum((1, 2, 3)) + 1)
            loss = bce(logits, tb) + dice.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += loss.item() * len(idx)
        line = f"epoch {epoch + 1}/{args.epochs}: loss {tot / len(ctx):.4f} ({time.time() - te:.0f} s)"
        print(line, flush=True)
        history.append(line)
    model.eval()
    return {
        "model": model,
        "train_s": time.time() - t0,
        "counts": counts,
        "n_params": n_params,
        "history": history,
        "ctx": ctx,
    }


def export(model: nn.Module, out: Path, ctx: np.ndarray, *, half_weights: bool = False) -> float:
    """Write ONNX to `out`; return the max abs difference of cv2.dnn against torch on a few crops.

    With `half_weights` the weights are stored as float16
    (:func:`vision.lab.training.half_weights.store_half_weights`) before the difference is measured.
    """
    import cv2

    from vision.lab.training.augment import centre_crop

    wrapped = _WithSigmoid(model).eval()
    torch.onnx.export(
        wrapped,
        torch.zeros(1, 3, CROP_SIZE, CROP_SIZE),
        str(out),
        input_names=["crops"],
        output_names=["pip_prob"],
        dynamic_axes={"crops": {0: "n"}, "pip_prob": {0: "n"}},
        opset_version=13,
        dynamo=False,
    )
    if half_weights:
        store_half_weights(out, out)
    blob = preprocess(np.stack([centre_crop(c) for c in ctx[:: max(1, len(ctx) // 8)][:8]]))
    with torch.no_grad():
        ref = wrapped(torch.from_numpy(blob)).numpy()
    net = cv2.dnn.readNetFromONNX(str(out))
    net.setInput(blob)
    return float(np.abs(net.forward().reshape(ref.shape) - ref).max())


def measure(onnx_path: Path, args: argparse.Namespace) -> dict:
    """Layout agreement of the exported pip finder on DEV dice it was not trained on (all dice when none held out)."""
    from vision.lab.training.evaluate import dev_crops
    from vision.pips import PipFinder

    finder = PipFinder(onnx_path)
    data = dev_crops(args.dev_dir)
    trained, held = dev_train_selection(args.dev_train, list(data["files"]))
    keep = np.ones(len(data["values"]), bool) if held is None else ~trained
    crops, values, sources = data["crops"][keep], data["values"][keep], data["sources"][keep]
    maps = finder.predict(list(crops))
    from vision.pips import layouts_on_map

    true_ok, wrong_ok = [], []
    for m, v in zip(maps, values):
        fits = layouts_on_map(m, 0.15)
        true_ok.append(int(v) in fits)
        wrong_ok.append(any(f != int(v) for f in fits))
    true_ok, wrong_ok = np.array(true_ok), np.array(wrong_ok)
    out = {
        "dice": int(len(values)),
        "held_out_fold": held,
        "true_layout_found": round(float(true_ok.mean()), 4),
        "a_wrong_layout_found": round(float(wrong_ok.mean()), 4),
    }
    for s in sorted(set(sources.tolist())):
        sel = sources == s
        out[s] = {
            "dice": int(sel.sum()),
            "true_layout_found": round(float(true_ok[sel].mean()), 4),
            "a_wrong_layout_found": round(float(wrong_ok[sel].mean()), 4),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m vision.lab.training.train_pips", description="Train the pip finder and export ONNX."
    )
    p.add_argument("--out", type=Path, required=True, help="folder for pip_finder.onnx and pip_finder.json")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--synth", type=int, default=400, help="drawn dice per face value (and as many without)")
    p.add_argument(
        "--widths",
        type=int,
        nargs=3,
        default=[16, 32, 48],
        metavar="W",
        help="channels of the three levels (default 16 32 48)",
    )
    p.add_argument(
        "--render-randomised",
        type=int,
        default=600,
        help="vision.render.render_randomised images whose dice (exact pips) are added (0: none)",
    )
    p.add_argument(
        "--teacher",
        type=Path,
        default=None,
        metavar="ONNX",
        help="an earlier pip finder: its marks that hold the labelled value's layout become targets "
        "for dice the classical check cannot read (self-training)",
    )
    add_augment_options(p)
    p.add_argument("--negatives", type=int, default=1500, help="TRAIN-set crops without a die to use (default 1500)")
    p.add_argument(
        "--dev-train",
        default="none",
        metavar="MODE",
        help="also train on DEV photos: none (default), all, or fold:K (all but fold K, measured on K)",
    )
    p.add_argument("--dev-weight", type=int, default=3, help="times each DEV sample is repeated per epoch")
    p.add_argument("--train-dir", type=Path, default=DEFAULT_TRAIN_DIR)
    p.add_argument("--dev-dir", type=Path, default=DEFAULT_DEV_DIR)
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    p.add_argument(
        "--half-weights",
        action="store_true",
        help="store the weights as float16 (half the file; arithmetic stays float32)",
    )
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    res = train(args)
    onnx_path = args.out / "pip_finder.onnx"
    diff = export(res["model"], onnx_path, res["ctx"], half_weights=args.half_weights)
    print(
        f"exported {onnx_path} ({onnx_path.stat().st_size} bytes); cv2.dnn vs torch max abs diff {diff:.2e}", flush=True
    )
    meta = {
        "model": "pip_finder.onnx",
        "crop_size": CROP_SIZE,
        "output": "probability of 'pip of the top face' per pixel",
        "architecture": "U-Net, 3 levels, widths "
        + "-".join(map(str, args.widths))
        + ", stride-2 stem, transposed-conv upsampling, output 32x32",
        "n_params": res["n_params"],
        "training_data": {
            "train_set": "../shared/dice-images/train: dice whose labelled value's layout the classical check found "
            "(pips = those blobs); negatives with no pips",
            "drawn": f"vision.lab.training.synth dice with exact pips, {args.synth} per value + {args.synth} without",
            "rendered": "vision.render.render_randomised images with the renderer's pip positions: "
            f"{args.render_randomised}",
            "dev_set": f"../shared/dice-images/dev trained on: {args.dev_train} (x{args.dev_weight})",
            "teacher": (
                f"earlier pip finder {args.teacher.name} labels dice the classical check cannot read"
                if args.teacher
                else "none"
            ),
            "counts": res["counts"],
        },
        "command": recorded_command("vision.lab.training.train_pips", argv),
        "training": {
            "epochs": args.epochs,
            "seed": args.seed,
            "batch": args.batch,
            "lr": args.lr,
            **augment_record(args),
            "loss": "BCE (pos_weight 3) + soft Dice",
            "torch": torch.__version__,
            "threads": 2,
            "train_seconds": round(res["train_s"], 1),
            "history": res["history"],
        },
        "export_max_abs_diff_cv2_vs_torch": diff,
        "weights_storage": "float16, cast to float32 on loading (vision.lab.training.half_weights)"
        if args.half_weights
        else "float32",
    }
    from vision.lab.training.evaluate import pip_probe_answers
    from vision.pips import PipFinder

    meta["fixed_probes"] = pip_probe_answers(PipFinder(onnx_path))
    print("fixed probes: " + ", ".join(f"{n} {v['layouts']}" for n, v in meta["fixed_probes"].items()), flush=True)
    if Path(args.dev_dir).is_dir():
        meta["dev_layout_agreement"] = measure(onnx_path, args)
        print(json.dumps(meta["dev_layout_agreement"], indent=1), flush=True)
    (args.out / "pip_finder.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
