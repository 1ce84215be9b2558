"""The face reader's network: :class:`FaceNet`, a small CNN from a context crop to 7 logits.

Class 0 is "not a readable face", classes 1-6 the face values
(:data:`vision.face.CLASS_NAMES`). :mod:`vision.lab.training.train_face` trains it.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from vision.face import CLASS_NAMES


class FaceNet(nn.Module):
    """Small CNN.

    4 conv+BN+ReLU stages (the first with stride 2) with max-pooling between, global average pool, linear 7.
    """

    def __init__(self, widths: tuple[int, ...] = (32, 48, 64, 96), depth: int = 1) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for i, w in enumerate(widths):
            layers += [
                nn.Conv2d(cin, w, 3, stride=2 if i == 0 else 1, padding=1, bias=False),
                nn.BatchNorm2d(w),
                nn.ReLU(inplace=True),
            ]
            for _ in range(depth - 1 if i > 0 else 0):  # extra convs in the stages after the first
                layers += [nn.Conv2d(w, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True)]
            if i < len(widths) - 1:
                layers.append(nn.MaxPool2d(2))
            cin = w
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(cin, len(CLASS_NAMES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x)).flatten(1)
        return self.head(self.drop(x))


def train_one_epoch(
    model: nn.Module,
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
    loss_fn: nn.Module,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LRScheduler,
) -> tuple[float, float]:
    """One pass over `batches` (``(crops, labels)``: float32 ``(B, 3, S, S)``, int64 ``(B,)``), a step each.

    Returns the mean loss and the training accuracy over the samples seen. The caller sets train or eval mode.
    """
    tot, correct, n = 0.0, 0, 0
    for xb, yb in batches:
        logits = model(xb)
        loss = loss_fn(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        tot += loss.item() * len(yb)
        correct += int((logits.argmax(1) == yb).sum())
        n += len(yb)
    return tot / max(n, 1), correct / max(n, 1)
