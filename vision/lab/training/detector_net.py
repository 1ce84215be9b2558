"""The die detector's network (a tiny CenterNet-style FCN), its loss, and loading an exported one back.

:class:`DieNet` maps a normalised BGR image, shape (N, 3, H, W) float32 with H and
W multiples of 16, to 5 maps at stride 4, shape (N, 5, H/4, W/4): channel 0 the
centre heatmap (logits), 1-2 the box size (log of width and height in cells of
the stride), 3-4 the centre's offset within its cell (logits) (Zhou et al. [1]_).
:class:`Exportable` adds the sigmoids, as the shipped ONNX file has them.
Needs torch (the ``train`` extra); nothing here is imported at run time.

References
----------
.. [1] X. Zhou, D. Wang, P. Krähenbühl, "Objects as Points", arXiv:1904.07850, 2019.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["WIDTHS", "MEAN", "STD", "DieNet", "Exportable", "detector_loss", "freeze_batch_norms", "load_onnx_weights"]

#: Channels of the four encoder stages (strides 2, 4, 8, 16); the shipped detector's.
WIDTHS = (12, 16, 32, 64)
#: Input normalisation: ``(bgr / 255 - MEAN) / STD``, recorded in the model's JSON.
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


class Exportable(nn.Module):
    """The network with the heatmap and offset sigmoids built in (what ONNX ships)."""

    def __init__(self, net: DieNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.net(x)
        return torch.cat([torch.sigmoid(y[:, :1]), y[:, 1:3], torch.sigmoid(y[:, 3:5])], dim=1)


def detector_loss(out, heat, reg, regmask, weight):
    """Focal loss on the heatmap plus L1 on size (x 0.5) and offset, per die centre; returns ``(loss, focal)``.

    `out` is :class:`DieNet`'s output, the others :func:`~vision.lab.training.detector_samples.heatmap_targets`'
    maps batched; ``focal`` is the heatmap term alone, as a float for the log.
    """
    p = torch.sigmoid(out[:, :1]).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    neg = (1.0 - pos) * weight
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg).sum()
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
        A ``die_detector.onnx`` written by :mod:`vision.lab.training.train_detector`.

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
        raise ValueError(
            f"{path}: {len(convs)} convolutions, the detector has {len(layers)}; "
            "start from a die_detector.onnx of the same architecture"
        )
    with torch.no_grad():
        for layer, (w, b) in zip(layers, convs):
            conv = layer[0] if isinstance(layer, nn.Sequential) else layer
            if tuple(conv.weight.shape) != w.shape:
                raise ValueError(
                    f"{path}: a convolution of shape {w.shape} where the detector has "
                    f"{tuple(conv.weight.shape)}; start from a die_detector.onnx of the same widths"
                )
            conv.weight.copy_(torch.from_numpy(np.array(w)))
            if isinstance(layer, nn.Sequential):
                bn = layer[1]
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(np.array(b)))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            else:
                conv.bias.copy_(torch.from_numpy(np.array(b)))


def freeze_batch_norms(net: nn.Module) -> None:
    """Put every batch norm of `net` in eval mode (statistics frozen), as fine-tuning a loaded detector needs."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
