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
def _hidden_sparse(x, w, bias, h):
    """``h`` (N, H) = ``bias`` (H) + ``x`` (N, I) @ ``w`` (I, H), skipping zero inputs: three
    quarters of an encoded position's are zero, so for the small batches of a search this
    beats BLAS. Each row is summed on its own: its result does not depend on the batch."""
    n_rows, n_in = x.shape
    n_hid = w.shape[1]
    for n in range(n_rows):
        for k in range(n_hid):
            h[n, k] = bias[k]
        for i in range(n_in):
            v = x[n, i]
            if v != 0.0:
                for k in range(n_hid):
                    h[n, k] += v * w[i, k]


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


SPARSE_MAX_ROWS = 64
"""Batches up to this many positions take :func:`_hidden_sparse`, larger ones BLAS."""


class NumpyNet:
    """Inference with plain numpy: an :class:`engine.evaluator.Evaluator`."""

    def __init__(self, config: NetConfig, weights: dict[str, np.ndarray]) -> None:
        inputs, self.encode = encoder(config.encoding)
        if config.inputs != inputs:
            raise ValueError(f"the model expects {config.inputs} inputs, encoding {config.encoding} has {inputs}")
        self.config = config
        self.w1 = np.ascontiguousarray(weights["fc1.weight"].T, dtype=np.float32)
        self.b1 = np.asarray(weights["fc1.bias"], dtype=np.float32)
        # −W1 with −b1 as one more row: a batch encoded with a trailing column of ones
        # gives the negated hidden input −(x·W1 + b1) in one product
        self._neg_w1b = np.ascontiguousarray(np.vstack([-self.w1, -self.b1[None, :]]), dtype=np.float32)
        self._neg_b1 = np.ascontiguousarray(self._neg_w1b[-1])
        self.w2t = np.ascontiguousarray(weights["fc2.weight"], dtype=np.float32)  # (5, hidden)
        self.b2 = np.asarray(weights["fc2.bias"], dtype=np.float32)
        if self.w1.shape != (config.inputs, config.hidden) or self.w2t.shape != (5, config.hidden):
            raise ValueError("weight shapes do not match the network config")

    def _input_buffer(self, n: int) -> np.ndarray:
        """A zeroed (n, inputs + 1) float32 buffer whose last column is ones (the bias input)."""
        xb = np.zeros((n, self.config.inputs + 1), np.float32)
        xb[:, -1] = 1.0
        return xb

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
        if n <= SPARSE_MAX_ROWS:
            x = self.encode(boards, out=np.empty((n, self.config.inputs), np.float32))
            h = np.empty((n, self.config.hidden), np.float32)
            # x has no column of ones, so the product stops before −W1b's last row (−b1)
            _hidden_sparse(x, self._neg_w1b, self._neg_b1, h)
            return self._outputs(h)
        return self._outputs(self.encode(boards, out=self._input_buffer(n)) @ self._neg_w1b)


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
