"""Train the face reader and export it to ONNX for ``cv2.dnn``.

Usage::

    pip install -e .[train]          # torch==2.13.0, onnx
    python -m vision.lab.training.train_face --out vision/models [--epochs N] [--seed S]

Training data (the TRAIN set; the DEV set too with ``--dev-train``, see below):

- ``../shared/dice-images/train`` (Rune55 and matteop65 photos, see
  :mod:`vision.lab.training.data`): whole-die boxes as they are, matteop65
  pip-pattern boxes widened to die boxes, Rune55 single-face boxes skipped by
  default (less reliable values; ``--face-boxes`` adds them); negatives
  (class 0) cut from the same photos: background squares, squares between two
  dice, squares half off a die.
- Procedurally drawn dice (:mod:`vision.lab.training.synth`): ``--synth`` per class
  (default 500) plus as many class-0 drawings (dice far off centre, blank faces).
- Synthetic tray images from :mod:`vision.render` when it is importable and
  ``--render N`` > 0 (default 300 images; each die box becomes a sample,
  plus background and half-off squares as class 0), and
  ``--render-randomised N`` domain-randomised images (default 600; the
  shipped face reader v8 used 1200,
  :func:`vision.render.render_randomised`: every look including coloured pips,
  surfaces, glare, tilt, blur, noise, JPEG; leaning dice as class 0), and
  ``--render-leaning N`` more of them with a die leaning on a wall or another
  die in each (default 0; at random only one image in ten has one). Not used
  for the shipped reader: with 600 of them a fold-1 twin read 433 held-out
  DEV dice right against 439 (``docs/training.md``, "Face reader").

- ``--leave-out-train NOTES``: the TRAIN photos whose ``notes`` begin with
  NOTES are left out (their dice and negatives; every other sample exactly as
  cut), to measure what one TRAIN sub-source adds. Two seeds of one recipe
  differ by 2-5 dice on each check, so a change must beat that to count
  (measurements in ``docs/training.md``).

- ``--dev-train all|fold:K``: the DEV photos' dice and negatives, cut the same
  way, each repeated ``--dev-weight`` times per epoch. ``fold:K`` leaves out
  the photos of fold K (:func:`vision.lab.training.data.dev_fold`) and measures
  on them, which gives an honest DEV number for a model trained on DEV.

Crops are cut once into a cache under ``/tmp/dicetable_face_cache`` (never in
the repository). Every epoch draws fresh augmentations
(:mod:`vision.lab.training.augment`). CPU only, ``torch.set_num_threads(2)``;
the run is seeded (numpy and torch), so the same seed gives the same model on
the same machine.

Outputs in ``--out``: ``face_reader.onnx`` (logits; :class:`vision.face.FaceReader`
applies the softmax) and ``face_reader.json`` (crop size, class names,
preprocessing, data counts, training settings and time, DEV metrics from
:mod:`vision.lab.training.evaluate`, and the top classes on fixed drawn crops
that the tests check). The export is checked: ``cv2.dnn`` must give the same
logits as torch on a few crops (max abs difference printed).

The packaged network is this float one quantised to 8-bit integers:
``python -m vision.lab.training.quantise OUT/face_reader.onnx --out vision/models``
(:mod:`vision.lab.training.quantise`).

Fine-tuning a trained reader (its float ONNX) with drawn things that are not dice added to
class 0 is :mod:`vision.lab.training.finetune_face`.

The network is :class:`vision.lab.training.face_net.FaceNet`; the drawn, rendered
and DEV crops come from :mod:`vision.lab.training.face_caches` (both re-exported here).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from torch import nn

from vision.face import CLASS_NAMES, CROP_SIZE, DEFAULT_MARGIN, FaceReader, preprocess
from vision.lab.training.augment import add_augment_options, augment, augment_options, augment_record, centre_crop
from vision.lab.training.data import (
    CONTEXT_FACTOR,
    CONTEXT_SIZE,
    DEFAULT_CACHE_DIR,
    DEFAULT_TRAIN_DIR,
    FACE_TO_DIE,
    PIPS_TO_DIE,
    load_cache,
    recorded_command,
    samples_from_noted_photos,
)
from vision.lab.training.face_caches import dev_training_cache, render_cache, synth_cache
from vision.lab.training.face_net import FaceNet, train_one_epoch
from vision.lab.training.half_weights import store_half_weights


def train(args: argparse.Namespace) -> dict:
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    augmenting = augment_options(args)
    t0 = time.time()
    real, real_y, kinds = load_cache(args.train_dir, args.cache_dir, seed=args.seed, use_face_boxes=args.face_boxes)
    if args.left_out is not None:  # worked out (and a typo refused) by main before any cache was built
        keep = ~args.left_out
        print(f"TRAIN samples left out (--leave-out-train): {int((~keep).sum())} of {len(keep)}", flush=True)
        real, real_y, kinds = real[keep], real_y[keep], kinds[keep]
    syn, syn_y = synth_cache(args.synth, args.seed, args.cache_dir)
    ren, ren_y = render_cache(args.render, args.seed, args.cache_dir)
    rnd, rnd_y = render_cache(args.render_randomised, args.seed + 1, args.cache_dir, randomised=True)
    lean, lean_y = render_cache(args.render_leaning, args.seed + 2, args.cache_dir, randomised=True, leaning=True)
    dv, dv_y, held_out = dev_training_cache(args)
    ctx = np.concatenate([real, syn, ren, rnd, lean] + [dv] * args.dev_weight)
    y = np.concatenate([real_y, syn_y, ren_y, rnd_y, lean_y] + [dv_y] * args.dev_weight)
    counts = {
        "train_photos_by_kind": dict(Counter(kinds.tolist())),
        "synthetic_drawn": int(len(syn_y)),
        "rendered": int(len(ren_y)),
        "rendered_randomised": int(len(rnd_y)),
        "rendered_leaning": int(len(lean_y)),
        "dev_samples": int(len(dv_y)),
        "dev_weight": args.dev_weight,
        "by_class": {CLASS_NAMES[k]: int(v) for k, v in sorted(Counter(y.tolist()).items())},
    }
    print(f"{len(y)} samples: {counts}", flush=True)
    model = FaceNet(tuple(args.widths), args.depth)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps_per_epoch = int(np.ceil(len(y) / args.batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch, pct_start=0.15
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    dev = None
    if args.dev_dir is not None and Path(args.dev_dir).is_dir():
        from vision.lab.training.evaluate import dev_crops

        dev = dev_crops(args.dev_dir)
        if held_out is not None:  # measure on the held-out fold only
            from vision.lab.training.data import dev_fold

            keep = np.array([dev_fold(f) == held_out for f in dev["files"]])
            dev = {k: (v[keep] if k != "bg_crops" else v) for k, v in dev.items()}
    history = []
    for epoch in range(args.epochs):
        te = time.time()
        model.train()
        order = rng.permutation(len(y))
        batches = (
            (
                torch.from_numpy(preprocess(np.stack([augment(ctx[i], rng, **augmenting) for i in idx]))),
                torch.from_numpy(y[idx]),
            )
            for idx in (order[b * args.batch : (b + 1) * args.batch] for b in range(steps_per_epoch))
        )
        mean_loss, acc = train_one_epoch(model, batches, loss_fn, opt, sched)
        line = f"epoch {epoch + 1}/{args.epochs}: loss {mean_loss:.4f} train-acc {acc:.3f}"
        if dev is not None:
            model.eval()
            with torch.no_grad():
                pd = model(torch.from_numpy(preprocess(dev["crops"]))).argmax(1).numpy()
            accs = {
                s: float((pd[dev["sources"] == s] == dev["values"][dev["sources"] == s]).mean())
                for s in sorted(set(dev["sources"].tolist()))
            }
            line += " dev-acc " + " ".join(f"{s} {a:.3f}" for s, a in accs.items())
            line += f" all {float((pd == dev['values']).mean()):.3f}"
        line += f" ({time.time() - te:.0f} s)"
        print(line, flush=True)
        history.append(line)
    train_s = time.time() - t0
    model.eval()
    return {
        "model": model,
        "train_s": train_s,
        "counts": counts,
        "n_params": n_params,
        "history": history,
        "dev": dev,
        "ctx": ctx,
    }


def export(model: nn.Module, out: Path, ctx: np.ndarray, *, half_weights: bool = False) -> float:
    """Write ONNX to `out` and return the max abs logit difference cv2.dnn vs torch on a few crops.

    With `half_weights` the weights are stored as float16
    (:func:`vision.lab.training.half_weights.store_half_weights`) before the difference is measured.
    """
    import cv2

    dummy = torch.zeros(1, 3, CROP_SIZE, CROP_SIZE)
    torch.onnx.export(
        model,
        dummy,
        str(out),
        input_names=["crops"],
        output_names=["logits"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
        opset_version=13,
        dynamo=False,
    )
    if half_weights:
        store_half_weights(out, out)
    crops = np.stack([centre_crop(c) for c in ctx[:: max(1, len(ctx) // 16)][:16]])
    blob = preprocess(crops)
    with torch.no_grad():
        ref = model(torch.from_numpy(blob)).numpy()
    net = cv2.dnn.readNetFromONNX(str(out))
    net.setInput(blob)
    got = net.forward().reshape(len(blob), -1)
    return float(np.abs(got - ref).max())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m vision.lab.training.train_face", description="Train the face reader and export ONNX."
    )
    p.add_argument("--out", type=Path, required=True, help="folder for face_reader.onnx and face_reader.json")
    p.add_argument("--epochs", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=4e-3)
    p.add_argument("--synth", type=int, default=500, help="drawn dice per class (and as many class-0 drawings)")
    p.add_argument("--render", type=int, default=300, help="vision.render tray images to add (0: none)")
    p.add_argument(
        "--render-randomised",
        type=int,
        default=600,
        help="vision.render.render_randomised images to add (every look, surface and camera condition; 0: none)",
    )
    p.add_argument(
        "--render-leaning",
        type=int,
        default=0,
        help="more render_randomised images, each with a die leaning on a wall or another die "
        "(class 0; every other factor at random; 0: none, the default)",
    )
    p.add_argument("--label-smoothing", type=float, default=0.05)
    add_augment_options(p)
    p.add_argument(
        "--widths",
        type=int,
        nargs=4,
        default=[32, 48, 64, 96],
        metavar="W",
        help="channels of the four conv stages (default 32 48 64 96)",
    )
    p.add_argument(
        "--depth", type=int, default=1, choices=(1, 2, 3), help="convolutions in each stage after the first (default 1)"
    )
    p.add_argument("--face-boxes", action="store_true", help="also use Rune55 single-face boxes")
    p.add_argument(
        "--leave-out-train",
        action="append",
        default=[],
        metavar="NOTES",
        help="leave out the TRAIN photos whose notes begin with NOTES (repeatable), e.g. "
        "'Rune55 grayscale copy' (grey copies of nell tray photos)",
    )
    p.add_argument(
        "--dev-train",
        default="none",
        metavar="MODE",
        help="also train on the DEV photos: none (default), all, or fold:K (all but fold K, which then "
        "measures the model honestly)",
    )
    p.add_argument("--dev-weight", type=int, default=3, help="times each DEV sample is repeated per epoch (default 3)")
    p.add_argument("--train-dir", type=Path, default=DEFAULT_TRAIN_DIR)
    p.add_argument(
        "--dev-dir", type=Path, default=None, help="DEV set to measure on (default ../shared/dice-images/dev)"
    )
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    p.add_argument(
        "--half-weights",
        action="store_true",
        help="store the weights as float16 (half the file; arithmetic stays float32)",
    )
    args = p.parse_args(argv)
    if args.dev_dir is None:
        from vision.lab.training.evaluate import DEFAULT_DEV_DIR

        args.dev_dir = DEFAULT_DEV_DIR
    args.left_out = None  # the TRAIN cache rows of --leave-out-train: a typo stops the run before minutes of caching
    if args.leave_out_train:
        try:
            args.left_out = samples_from_noted_photos(
                args.train_dir, args.leave_out_train, seed=args.seed, use_face_boxes=args.face_boxes
            )
        except (OSError, ValueError) as exc:
            p.error(f"--leave-out-train: {exc}")
    args.out.mkdir(parents=True, exist_ok=True)
    res = train(args)
    onnx_path = args.out / "face_reader.onnx"
    diff = export(res["model"], onnx_path, res["ctx"], half_weights=args.half_weights)
    print(
        f"exported {onnx_path} ({onnx_path.stat().st_size} bytes); cv2.dnn vs torch max abs logit diff {diff:.2e}",
        flush=True,
    )
    meta_path = args.out / "face_reader.json"
    meta: dict = {
        "model": "face_reader.onnx",
        "crop_size": CROP_SIZE,
        "crop_margin": DEFAULT_MARGIN,
        "class_names": list(CLASS_NAMES),
        "output": "logits; FaceReader applies softmax",
        "preprocessing": "BGR uint8 -> /255 -> minus per-crop mean, divided by per-crop std + 0.05; NCHW",
        "architecture": "4 stages of conv3x3 + BN + ReLU (first stride 2; "
        + f"{args.depth} conv(s) in stages 2-4; maxpool between), widths "
        + "-".join(str(w) for w in args.widths)
        + ", global avg pool, dropout 0.2, linear 7",
        "n_params": res["n_params"],
        "training_data": {
            "train_set": "../shared/dice-images/train (TRAIN set only): box_kind 'die' boxes as is; "
            "matteop65 'pips' boxes widened "
            f"to die boxes (side = {PIPS_TO_DIE} x median pip-box side of values 2-6); Rune55 'face' boxes "
            + (f"used (x{FACE_TO_DIE:.2f})" if args.face_boxes else "not used")
            + "; negatives: background squares (IoU<0.1), between two dice, half off a die"
            + "".join(f"; photos whose notes begin {t!r} left out" for t in args.leave_out_train),
            "synthetic": f"vision.lab.training.synth procedural dice, {args.synth} per class + {args.synth} class-0",
            "render": f"vision.render tray images: {args.render}; domain-randomised images "
            f"(vision.render.render_randomised, leaning dice as class 0): {args.render_randomised}"
            + (f"; images with a leaning die each: {args.render_leaning}" if args.render_leaning else ""),
            "counts": res["counts"],
            "context": {"factor": CONTEXT_FACTOR, "size": CONTEXT_SIZE},
            "dev_set": (
                "../shared/dice-images/dev used only to measure, never to train"
                if args.dev_train == "none"
                else f"../shared/dice-images/dev trained on ({args.dev_train}, each sample x{args.dev_weight}); "
                + (
                    "dev metrics below are on the held-out fold only"
                    if args.dev_train.startswith("fold:")
                    else "dev metrics below are on photos the model was trained on"
                )
            ),
        },
        "command": recorded_command("vision.lab.training.train_face", argv),
        "training": {
            "epochs": args.epochs,
            "seed": args.seed,
            "batch": args.batch,
            "lr": args.lr,
            "optimizer": f"AdamW wd 1e-4, OneCycle, label smoothing {args.label_smoothing}",
            **augment_record(args),
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
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    reader = FaceReader(onnx_path)
    from vision.lab.training.evaluate import face_probe_answers

    meta["fixed_probes"] = face_probe_answers(reader)
    for n, answer in meta["fixed_probes"].items():
        print(f"probe {n}: top {answer['top']} p={answer['prob']:.3f}")
    if res["dev"] is not None:
        from vision.lab.training.evaluate import evaluate, format_table

        ev = evaluate(reader, res["dev"])
        meta["dev_metrics"] = ev
        print(format_table(ev), flush=True)
        ev4 = evaluate(FaceReader(onnx_path, rotations=4), res["dev"])
        meta["dev_metrics_rotations4"] = ev4
        print("with rotations=4 (test-time 90-degree turns):\n" + format_table(ev4), flush=True)
    import cv2

    cv2.setNumThreads(1)
    reader = FaceReader(onnx_path)  # loaded after setNumThreads(1): its runtime uses one thread
    batch = [centre_crop(c) for c in res["ctx"][:64]]
    reader.predict(batch)
    t = time.perf_counter()
    for _ in range(5):
        reader.predict(batch)
    ms = (time.perf_counter() - t) / (5 * len(batch)) * 1e3
    meta["ms_per_crop_1_thread_batch64"] = round(ms, 3)
    print(f"inference {ms:.3f} ms per crop ({reader._net.backend}, 1 thread, batch 64)")
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
