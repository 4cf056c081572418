"""Label files: the labelled positions of refine runs, kept on disk to be trained on again.

A label costs most where it is best (a rollout label is about a thousand 1-ply plays), and
a run's buffer ends with the run. With ``RefineConfig.label_store`` a run appends its labels
to that directory (at each checkpoint and whenever half its buffer is new), one compressed file each
(``labels-<UTC time>-<first>-<last>.npz``: ``boards`` (N, 26) int8 with the opponent of the
mover on roll, ``targets`` (N, 5) float32, ``decisions`` (N,) int64 shared by the results
of one roll, and the run's ``kind`` of labels); ``RefineConfig.replay`` puts such files
into the buffer before a later run's own labels.

Labels are Tabla's own (its search or rollouts at the time they were made), never
another engine's.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np


class LabelFileError(ValueError):
    """A label file that cannot be read, or is not one."""


FIELDS = {"boards": (np.int8, 26), "targets": (np.float32, 5), "decisions": (np.int64, None)}


def write_labels(directory: Path, boards: np.ndarray, targets: np.ndarray, decisions: np.ndarray, kind: str,
                 first: int) -> Path:
    """Write one label file into ``directory`` (created if needed) and return its path;
    ``first`` is the run's number of its first label (it names the file). The file
    appears whole or not at all (written beside, then renamed)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    path = directory / f"labels-{stamp}-{first:09d}-{first + len(boards) - 1:09d}.npz"
    tmp = directory / f".{path.name}.partial"  # not a labels-*.npz name: never replayed half-written
    with open(tmp, "wb") as f:
        np.savez_compressed(f, boards=np.asarray(boards, np.int8), targets=np.asarray(targets, np.float32),
                            decisions=np.asarray(decisions, np.int64), kind=np.array(kind))
    os.replace(tmp, path)
    return path


def label_files(paths: tuple[str, ...] | list[str]) -> list[Path]:
    """The label files named by ``paths``: files as given, directories by their
    ``labels-*.npz`` in name order (the order they were written)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(p.glob("labels-*.npz")))
        elif p.is_file():
            out.append(p)
        else:
            raise LabelFileError(f"{p}: no such label file or directory")
    return out


def read_labels(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``boards``, ``targets``, ``decisions`` and ``kind`` of one label file, checked."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in (*FIELDS, "kind")}
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise LabelFileError(f"{path}: not a label file ({exc.__class__.__name__}: {exc})") from None
    n = len(data["boards"])
    for name, (dtype, width) in FIELDS.items():
        a = data[name]
        shape = (n, width) if width else (n,)
        if a.dtype != dtype or a.shape != shape:
            raise LabelFileError(f"{path}: {name} should be {np.dtype(dtype).name} of shape {shape}, got {a.dtype} {a.shape}")
    t = data["targets"]
    if not np.isfinite(t).all() or (t < 0).any() or (t > 1).any():
        raise LabelFileError(f"{path}: targets must be probabilities in [0, 1]")
    b = data["boards"].astype(np.int64)
    if (b[:, 0] > 0).any() or (b[:, 25] < 0).any() or (np.where(b > 0, b, 0).sum(1) > 15).any() or (
            np.where(b < 0, -b, 0).sum(1) > 15).any():
        raise LabelFileError(f"{path}: boards are not positions (a bar of the wrong sign, or a side of more than 15 checkers)")
    return data["boards"], t, data["decisions"], str(data["kind"])


def replay_labels(paths: tuple[str, ...] | list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every label of the files named by ``paths`` in order, decisions renumbered so that
    no two files (nor the run that replays them, whose decisions are below 2**48) share one:
    file ``k``'s decision ``d`` becomes ``(k + 1) * 2**48 + d``; a label of no decision
    (negative) stays negative and distinct."""
    bs, ts, gs = [], [], []
    alone = 0
    for k, path in enumerate(label_files(paths)):
        b, t, g, _ = read_labels(path)
        g = g.copy()
        neg = g < 0
        g[~neg] += (k + 1) << 48
        g[neg] = -(1 << 62) + alone + np.arange(int(neg.sum()))  # far below the run's own negatives
        alone += int(neg.sum())
        bs.append(b)
        ts.append(t)
        gs.append(g)
    if not bs:
        return np.zeros((0, 26), np.int8), np.zeros((0, 5), np.float32), np.zeros(0, np.int64)
    return np.concatenate(bs), np.concatenate(ts), np.concatenate(gs)
