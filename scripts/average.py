"""``python -m scripts.average --out run/avg.pt A.pt B.pt ...``: the mean weights of several
checkpoints of one run (see :mod:`training.average`), written as a checkpoint and its
``.npz`` inference file."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from models.checkpoint import CheckpointError, load_checkpoint, save_with_npz
from training.average import average_states


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.average",
                                     description="Average the weights of several checkpoints of one run.")
    parser.add_argument("checkpoints", type=Path, nargs="+", help="training checkpoints (.pt), oldest first")
    parser.add_argument("--out", type=Path, required=True, help="the averaged checkpoint (.pt); the .npz goes beside it")
    args = parser.parse_args(argv)
    try:
        states = [load_checkpoint(p) for p in args.checkpoints]
        state = average_states(states, [p.name for p in args.checkpoints])
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    save_with_npz(args.out, state)
    print(f"{args.out}: mean of {len(states)} checkpoints ({', '.join(p.name for p in args.checkpoints)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
