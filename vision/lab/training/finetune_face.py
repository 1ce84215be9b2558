"""Fine-tune a trained face reader with drawn things that are not dice added to class 0.

Usage::

    git show 450aaed:vision/models/face_reader.onnx > /tmp/float.onnx   # the shipped reader, float
    python -m vision.lab.training.finetune_face --init /tmp/float.onnx --out OUT --not-dice 3000
    python -m vision.lab.training.quantise OUT/face_reader.onnx --out DIR

The float network's weights are read from its ONNX file (:func:`facenet_from_onnx`): the export
folded each batch norm into its convolution, so the batch norms start as identities and stay in
eval mode (frozen statistics) while their scale and shift train; the start is then the shipped
function exactly. Each epoch draws ``--replay`` crops of the usual data (TRAIN photos, drawn dice,
tray renders, DEV photos x ``--dev-weight`` as the shipped recipe) and adds every not-dice crop
(:mod:`vision.lab.training.not_dice`, pasted half the time on the TRAIN photos' background
squares, never DEV), with the same augmentation (:func:`vision.lab.training.augment.augment`);
AdamW with a cosine learning rate from ``--lr``. Writes ``face_reader.onnx`` (float) and
``face_reader.json`` (the init's recipe plus a ``fine_tune`` record and fresh measurements).
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

from vision.face import CLASS_NAMES, FaceReader, preprocess
from vision.lab.training import not_dice, not_dice_drawers
from vision.lab.training.augment import add_augment_options, augment, augment_options, augment_record
from vision.lab.training.data import (
    CONTEXT_SIZE,
    DEFAULT_CACHE_DIR,
    DEFAULT_TRAIN_DIR,
    load_cache,
    recorded_command,
    save_npz_atomically,
    source_hash,
)
from vision.lab.training.face_caches import render_cache, synth_cache
from vision.lab.training.face_net import FaceNet, train_one_epoch


def facenet_from_onnx(path: Path, widths: tuple[int, ...], depth: int) -> FaceNet:
    """A :class:`FaceNet` holding the weights of an exported (batch norms folded) float ONNX file.

    The convolutions take the ONNX weights in graph order; each batch norm becomes the identity
    plus the folded bias (mean 0, variance ``1 - eps``), so the net computes what the file does.
    """
    import onnx
    from onnx import numpy_helper

    g = onnx.load(str(path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    convs = [n for n in g.node if n.op_type == "Conv"]
    gemm = next(n for n in g.node if n.op_type == "Gemm")
    model = FaceNet(widths, depth)
    pairs = [m for m in model.features if isinstance(m, (nn.Conv2d, nn.BatchNorm2d))]
    if len(pairs) != 2 * len(convs):
        raise ValueError(f"{path}: {len(convs)} convolutions, the net has {len(pairs) // 2}")
    with torch.no_grad():
        for node, conv, bn in zip(convs, pairs[0::2], pairs[1::2]):
            w, b = inits[node.input[1]].copy(), inits[node.input[2]].copy()
            conv.weight.copy_(torch.from_numpy(w))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(b))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        model.head.weight.copy_(torch.from_numpy(inits[gemm.input[1]].copy()))
        model.head.bias.copy_(torch.from_numpy(inits[gemm.input[2]].copy()))
    return model


def not_dice_cache(n: int, seed: int, cache_dir: Path, backgrounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`n` not-dice context crops (:func:`vision.lab.training.not_dice.not_dice_set`), cached on disk."""
    code = source_hash(not_dice.__file__, not_dice_drawers.__file__)
    path = Path(cache_dir) / f"notdice_{n}_{seed}_{CONTEXT_SIZE}_{code}.npz"
    if path.is_file():
        z = np.load(path)
        return z["crops"], z["labels"]
    crops, labels, _ = not_dice.not_dice_set(n, seed, backgrounds=backgrounds)
    save_npz_atomically(path, crops=crops, labels=labels)
    return crops, labels


def _freeze_bn(model: nn.Module) -> None:
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def finetune(args: argparse.Namespace) -> dict:
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    augmenting = augment_options(args)
    t0 = time.time()
    real, real_y, kinds = load_cache(args.train_dir, args.cache_dir, seed=args.seed)
    syn, syn_y = synth_cache(args.synth, args.seed, args.cache_dir)
    ren, ren_y = render_cache(args.render, args.seed, args.cache_dir)
    rnd, rnd_y = render_cache(args.render_randomised, args.seed + 1, args.cache_dir, randomised=True)
    parts, ys = [real, syn, ren, rnd], [real_y, syn_y, ren_y, rnd_y]
    if args.dev_weight:
        dv, dv_y, _ = load_cache(args.dev_dir, args.cache_dir, seed=args.seed)
        parts += [dv] * args.dev_weight
        ys += [dv_y] * args.dev_weight
    usual, usual_y = np.concatenate(parts), np.concatenate(ys)
    backgrounds = real[np.char.endswith(kinds.astype(str), "neg_random")]  # TRAIN background squares only
    nd, nd_y = not_dice_cache(args.not_dice, args.seed + 7, args.cache_dir, backgrounds)
    counts = {
        "usual": int(len(usual_y)),
        "usual_by_class": {CLASS_NAMES[k]: int(v) for k, v in sorted(Counter(usual_y.tolist()).items())},
        "replay_per_epoch": int(min(args.replay, len(usual_y))),
        "not_dice": int(len(nd_y)),
        "not_dice_backgrounds": int(len(backgrounds)),
    }
    print(f"data: {counts} ({time.time() - t0:.0f} s)", flush=True)
    model = facenet_from_onnx(args.init, tuple(args.widths), args.depth)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    per_epoch = counts["replay_per_epoch"] + len(nd_y)
    steps = int(np.ceil(per_epoch / args.batch))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * steps)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    history = []
    for epoch in range(args.epochs):
        te = time.time()
        model.train()
        _freeze_bn(model)
        pick = rng.choice(len(usual_y), counts["replay_per_epoch"], replace=False)
        pool = [(usual, i) for i in pick] + [(nd, i) for i in range(len(nd_y))]
        labels = np.concatenate([usual_y[pick], nd_y])
        order = rng.permutation(len(pool))
        batches = (
            (
                torch.from_numpy(
                    preprocess(np.stack([augment(pool[i][0][pool[i][1]], rng, **augmenting) for i in idx]))
                ),
                torch.from_numpy(labels[idx]),
            )
            for idx in (order[b * args.batch : (b + 1) * args.batch] for b in range(steps))
        )
        mean_loss, acc = train_one_epoch(model, batches, loss_fn, opt, sched)
        line = f"epoch {epoch + 1}/{args.epochs}: loss {mean_loss:.4f} train-acc {acc:.3f}"
        line += f" ({time.time() - te:.0f} s)"
        print(line, flush=True)
        history.append(line)
    model.eval()
    return {"model": model, "train_s": time.time() - t0, "counts": counts, "history": history, "ctx": usual}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.lab.training.finetune_face", description=__doc__.split("\n")[0])
    p.add_argument("--init", type=Path, required=True, help="float face_reader.onnx to start from")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--not-dice", type=int, default=3000, help="drawn not-dice class-0 crops, all used every epoch")
    p.add_argument("--replay", type=int, default=12000, help="crops of the usual data drawn afresh each epoch")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--label-smoothing", type=float, default=0.05)
    p.add_argument("--widths", type=int, nargs=4, default=[64, 96, 128, 192])
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--synth", type=int, default=500)
    p.add_argument("--render", type=int, default=300)
    p.add_argument("--render-randomised", type=int, default=0, help="as train_face (the shipped reader: 1200)")
    p.add_argument("--dev-weight", type=int, default=3, help="DEV photos' crops x this (the shipped reader: 3)")
    p.add_argument("--dev-dir", type=Path, default=Path(DEFAULT_TRAIN_DIR).parent / "dev")
    p.add_argument("--train-dir", type=Path, default=DEFAULT_TRAIN_DIR)
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    add_augment_options(p)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    res = finetune(args)
    from vision.lab.training.train_face import export

    onnx_path = args.out / "face_reader.onnx"
    diff = export(res["model"], onnx_path, res["ctx"])
    print(f"exported {onnx_path}; cv2.dnn vs torch max abs logit diff {diff:.2e}", flush=True)
    init_meta = args.init.with_suffix(".json")
    meta = json.loads(init_meta.read_text(encoding="utf-8")) if init_meta.is_file() else {}
    for k in ("quantisation", "weights_storage", "dev_metrics_rotations4"):
        meta.pop(k, None)
    meta["fine_tune"] = {
        "init": str(args.init),
        "command": recorded_command("vision.lab.training.finetune_face", argv),
        "epochs": args.epochs,
        "lr": args.lr,
        "seed": args.seed,
        "optimizer": f"AdamW wd 1e-4, cosine, label smoothing {args.label_smoothing}; batch norms frozen",
        **augment_record(args),
        "counts": res["counts"],
        "not_dice": "vision.lab.training.not_dice: " + ", ".join(not_dice.KINDS),
        "train_seconds": round(res["train_s"], 1),
        "history": res["history"],
    }
    meta["export_max_abs_diff_cv2_vs_torch"] = diff
    meta["weights_storage"] = "float32"
    from vision.lab.training.evaluate import dev_crops, evaluate, face_probe_answers, format_table

    reader = FaceReader(onnx_path)
    meta["fixed_probes"] = face_probe_answers(reader)
    if args.dev_dir.is_dir():
        ev = evaluate(reader, dev_crops(args.dev_dir))
        meta["dev_metrics"] = ev
        print(format_table(ev), flush=True)
    (args.out / "face_reader.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
