"""``dicetable eval``: measure the pip reader on a labelled photo set."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

#: Number of DEV folds (:data:`vision.lab.training.data.DEV_FOLDS`, checked by a test; kept here so that
#: building the parser imports nothing heavy).
DEV_FOLDS = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "eval",
        help="measure the pip reader on a folder of labelled photos (labels.json)",
        description=(
            "Read every photo of DATASET_DIR (a folder with labels.json, in the format of "
            "../shared/dice-images) and report per-die accuracy, silent errors (a wrong value given), "
            "unknown, missed and extra dice, a confusion matrix, time per image (one OpenCV thread), "
            "and a breakdown by source (file-name prefix) and by true face."
        ),
    )
    parser.add_argument("dataset", metavar="DATASET_DIR", type=Path, help="folder with labels.json and its photos")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON instead of the text report")
    parser.add_argument(
        "--report",
        metavar="OUT_DIR",
        type=Path,
        help="write metrics.json, reliability.png (stated confidence against observed "
        "accuracy), failures.png (a contact sheet of every failure) and annotated "
        "failure photos into OUT_DIR",
    )
    parser.add_argument(
        "--face-model", metavar="ONNX", type=Path, help="face-reader model to measure instead of the packaged one"
    )
    parser.add_argument(
        "--detector-model", metavar="ONNX", type=Path, help="die-detector model to measure instead of the packaged one"
    )
    parser.add_argument(
        "--pip-model", metavar="ONNX", type=Path, help="pip-finder model to measure instead of the packaged one"
    )
    parser.add_argument(
        "--fold",
        metavar="K",
        type=int,
        choices=range(DEV_FOLDS),
        help="only the photos of DEV fold K (a stable hash of the file name, as the trainers' "
        "--dev-train fold:K holds them out): read by networks trained with --dev-train fold:K, "
        "this is the held-out measure",
    )
    parser.add_argument(
        "--label-review",
        metavar="JSON",
        type=Path,
        help="also report the readings scored against reviewed labels: corrections to labels.json "
        "in a JSON file, each with what a person sees (benchmarks/dev_label_review.json for "
        "DEV; see vision.lab.label_review); the labels as given stay the official measure",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate; print the report; exit 0 (2 on a missing or malformed dataset, model or --report folder)."""
    import cv2

    from vision.images import output_folder
    from vision.lab.evaluate import evaluate, format_report, format_summary, load_dataset, rescore, write_report
    from vision.reader import networks_from_files, read_image

    items = load_dataset(args.dataset)  # fail early, with one clear line, before loading the models
    reviewed_items = None
    if args.label_review is not None:
        from vision.lab.label_review import load_label_review

        review = load_label_review(args.label_review)
        reviewed_items = review.apply(items, args.dataset)  # a stale review is said now, before a photo is read
    if args.report is not None:
        output_folder(args.report, "--report")  # a file or an unwritable folder is said now, not after every photo
    cv2.setNumThreads(1)  # time as on one core
    interactive = sys.stderr.isatty()

    def progress(done: int, total: int, path: Path) -> None:
        if done == total or done % 10 == 0:
            end = "\n" if done == total or not interactive else "\r"
            print(f"read {done}/{total} images", end=end, file=sys.stderr, flush=True)

    networks = networks_from_files(args.face_model, args.detector_model, args.pip_model)
    keep = None
    if args.fold is not None:
        from vision.lab.training.data import dev_fold

        def keep(name: str) -> bool:
            return dev_fold(name) == args.fold

    def read(image):
        return read_image(image, **networks)

    result = evaluate(args.dataset, read, progress=progress, keep=keep)
    reviewed = rescore(result, reviewed_items) if reviewed_items is not None else None
    extra = {}
    if reviewed is not None:
        read_names = {im.path for im in result.images}
        applied = sum(item.path in read_names and new is not item for item, new in zip(items, reviewed_items))
        on_read = sum(1 for c in review.changes if Path(args.dataset) / c.file in read_names)
        extra["reviewed_labels"] = {
            "file": str(args.label_review),
            "changes": len(review.changes),
            "changes_on_photos_read": on_read,
            "photos_changed": applied,
            **reviewed.metrics(),
        }
    if args.json:
        doc = result.to_json()
        doc.pop("images")
        print(json.dumps({**doc, **extra}, indent=1))
    else:
        if args.fold is not None:
            print(f"DEV fold {args.fold} only: {len(result.images)} photos (vision.lab.training.data.dev_fold)")
        print(format_report(result))
        if reviewed is not None:
            counted = extra["reviewed_labels"]["changes_on_photos_read"]
            of_them = f", {counted} of them on the photos read" if counted != len(review.changes) else ""
            print(
                f"\nthe same readings against the reviewed labels of {args.label_review} ({len(review.changes)} "
                f"changes{of_them}, each with what a person sees; the labels as given, above, stay the official "
                "measure):"
            )
            print("\n".join(format_summary(reviewed)[1:]))
    if args.report is not None:
        written = write_report(result, args.report, extra=extra)
        print(f"report: {len(written)} files in {args.report}", file=sys.stderr)
    if args.face_model is None and _is_the_dev_set(Path(args.dataset)) and _shipped_reader_trained_on_dev():
        print(
            'note: the shipped face reader was trained on these DEV photos too ("dev_set" in '
            "vision/models/face_reader.json), so these numbers are in-sample; the held-out estimate (each half of DEV "
            'read by networks trained without it) is under "fold_metrics" in vision/models/reader_confidence.json; '
            "measure one with --fold K --face-model TWIN/face_reader.onnx --pip-model TWIN/pip_finder.onnx, "
            "networks trained with --dev-train fold:K (see docs/training.md)",
            file=sys.stderr,
        )
    return 0


def _is_the_dev_set(dataset: Path) -> bool:
    """Whether `dataset` is the DEV set (:data:`vision.lab.evaluate.DEFAULT_DEV_DIR`).

    That folder beside the source checkout, or beside the working folder (an
    installed copy, run from the checkout as the README does). Never raises:
    a path that cannot be resolved (a working folder deleted under the
    process, where ``Path.cwd()`` raises FileNotFoundError) is not DEV.
    """
    from vision.lab.evaluate import DEFAULT_DEV_DIR

    try:
        resolved = dataset.resolve()
        if resolved == DEFAULT_DEV_DIR.resolve():
            return True
        return resolved == (Path.cwd() / ".." / "shared" / "dice-images" / "dev").resolve()
    except OSError:
        return False


def _shipped_reader_trained_on_dev() -> bool:
    """Whether the packaged face reader's metadata says DEV photos were trained on (``training_data.dev_set``)."""
    from vision.face import default_face_reader

    dev_set = str(default_face_reader().metadata.get("training_data", {}).get("dev_set", ""))
    return "trained on" in dev_set
