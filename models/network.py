"""The value network: encoded position in, five probabilities for the player on roll out.

Five outputs are produced as conditional probabilities so that they are always
consistent (``win_backgammon <= win_gammon <= win``, ``lose_backgammon <= lose_gammon
<= 1 - win``)::

    win            = σ(a0)
    win_gammon     = win · σ(a1)
    win_backgammon = win_gammon · σ(a2)
    lose_gammon    = (1 − win) · σ(a3)
    lose_backgammon= lose_gammon · σ(a4)

:class:`ValueNet` (torch) is used for training; :class:`NumpyNet` holds the same weights
for fast inference without torch and implements :class:`engine.evaluator.Evaluator`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from numba import njit

from models.encoding import NUM_INPUTS, encoder


@dataclass(frozen=True)
class NetConfig:
    """Shape of the network."""

    inputs: int = NUM_INPUTS
    """Number of inputs; must equal the encoding's :data:`models.encoding.NUM_INPUTS`."""
    hidden: int = 128
    """Hidden units (one hidden layer, sigmoid)."""
    encoding: str = "tabla-v1"
    """Name of the input encoding the weights were trained with."""

    def to_dict(self) -> dict:
        return asdict(self)


@njit(cache=True, fastmath=True)
def _hidden_anchored(x, w, bias, h):
    """``h`` (N, H) = ``bias`` (H) + ``x`` (N, I) @ ``w`` (I, H), summing few inputs per row.

    A row is summed directly over its non-zero inputs (three quarters of an encoded
    position's are zero), or, when it differs from the last directly summed row (the
    *anchor*) in fewer inputs than it has non-zero ones, as the anchor's sum plus the
    differences. The plays of one roll, and the replies to one position, are neighbours in
    a batch and differ in about a third of their non-zero inputs, so most rows take the
    second way: about half the time of the direct sums, and of a BLAS product for the
    thousands of rows of a 2-ply search, on this project's 2-core machines. A row's sum may
    then differ from its direct sum by float rounding (a few 1e-5 of the hidden inputs, a
    few 1e-7 of the probabilities), so a position's value can depend on its neighbours in
    the batch in the last digits of float32; a batch's first row, and a batch of one, are
    summed directly.
    """
    n_rows, n_in = x.shape
    n_hid = w.shape[1]
    no_inputs = np.zeros(n_in, x.dtype)  # what a directly summed row differs from
    anchor = -1
    for n in range(n_rows):
        from_anchor = False
        if anchor >= 0:
            nonzero = 0
            differ = 0
            for i in range(n_in):
                v = x[n, i]
                if v != 0.0:
                    nonzero += 1
                if v != x[anchor, i]:
                    differ += 1
            from_anchor = differ < nonzero
        if from_anchor:
            base, ref = h[anchor], x[anchor]
        else:
            base, ref = bias, no_inputs
            anchor = n
        for k in range(n_hid):
            h[n, k] = base[k]
        for i in range(n_in):
            d = x[n, i] - ref[i]
            if d != 0.0:
                for k in range(n_hid):
                    h[n, k] += d * w[i, k]


@njit(cache=True, fastmath=True)
def _output_layer(e, w2t, b2, out):
    """``out`` (N, 5) = consistent probabilities from ``e`` (N, H) = exp(−hidden input).

    One compiled loop for the hidden sigmoids 1 / (1 + e) (in place), the small output
    layer (5 units), its five sigmoids and the conditional products: a dozen numpy calls
    otherwise, which cost more than the arithmetic for the batches of a search.
    """
    hidden = e.shape[1]
    one = np.float32(1.0)
    s = np.empty(5, np.float32)  # the five sigmoids of one row
    for n in range(e.shape[0]):
        hn = e[n]
        for k in range(hidden):
            hn[k] = one / (one + hn[k])
        for o in range(5):
            z = b2[o]
            wo = w2t[o]
            for k in range(hidden):
                z += hn[k] * wo[k]
            s[o] = one / (one + np.exp(-z))
        wg = s[0] * s[1]
        lg = (one - s[0]) * s[3]
        out[n, 0] = s[0]
        out[n, 1] = wg
        out[n, 2] = wg * s[2]
        out[n, 3] = lg
        out[n, 4] = lg * s[4]


class NumpyNet:
    """Inference with plain numpy: an :class:`engine.evaluator.Evaluator`."""

    def __init__(self, config: NetConfig, weights: dict[str, np.ndarray]) -> None:
        inputs, self.encode = encoder(config.encoding)
        if config.inputs != inputs:
            raise ValueError(f"the model expects {config.inputs} inputs, encoding {config.encoding} has {inputs}")
        self.config = config
        self.w1 = np.ascontiguousarray(weights["fc1.weight"].T, dtype=np.float32)
        self.b1 = np.asarray(weights["fc1.bias"], dtype=np.float32)
        # the hidden layer is computed negated, −(x·W1 + b1), for the exp of the sigmoids
        self._neg_w1 = np.ascontiguousarray(-self.w1)
        self._neg_b1 = np.ascontiguousarray(-self.b1)
        self.w2t = np.ascontiguousarray(weights["fc2.weight"], dtype=np.float32)  # (5, hidden)
        self.b2 = np.asarray(weights["fc2.bias"], dtype=np.float32)
        if self.w1.shape != (config.inputs, config.hidden) or self.w2t.shape != (5, config.hidden):
            raise ValueError("weight shapes do not match the network config")

    def _outputs(self, h: np.ndarray) -> np.ndarray:
        """Probabilities from the negated hidden inputs −(x·W1 + b1) (N, hidden), in place."""
        np.exp(h, out=h)
        out = np.empty((h.shape[0], 5), np.float32)
        _output_layer(h, self.w2t, self.b2, out)
        return out

    def evaluate(self, boards: np.ndarray) -> np.ndarray:
        """(N, 26) boards, player on roll → (N, 5) probabilities."""
        n = len(boards)
        if n == 0:
            return np.zeros((0, 5), np.float32)
        x = self.encode(boards, out=np.empty((n, self.config.inputs), np.float32))
        h = np.empty((n, self.config.hidden), np.float32)
        _hidden_anchored(x, self._neg_w1, self._neg_b1, h)
        return self._outputs(h)


def make_torch_net(config: NetConfig):
    """Build the torch module (imports torch lazily so that inference never needs it)."""
    import torch
    from torch import nn

    class ValueNet(nn.Module):
        """One hidden sigmoid layer, five conditional sigmoid outputs."""

        def __init__(self, cfg: NetConfig) -> None:
            super().__init__()
            self.config = cfg
            self.fc1 = nn.Linear(cfg.inputs, cfg.hidden)
            self.fc2 = nn.Linear(cfg.hidden, 5)

        def forward(self, x: "torch.Tensor") -> "torch.Tensor":
            """Encoded inputs → consistent probabilities (N, 5)."""
            s = torch.sigmoid(self.fc2(torch.sigmoid(self.fc1(x))))
            w = s[:, 0]
            wg = w * s[:, 1]
            wbg = wg * s[:, 2]
            lg = (1 - w) * s[:, 3]
            lbg = lg * s[:, 4]
            return torch.stack([w, wg, wbg, lg, lbg], dim=1)

    return ValueNet(config)


def numpy_weights(module) -> dict[str, np.ndarray]:
    """The torch module's weights as numpy arrays (copies)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}
