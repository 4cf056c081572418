"""``python -m scripts.graft --checkpoint run/latest.pt --net crashed --from models/tabla.pt --out run/mixed.pt``:
one class net of a checkpoint replaced by another checkpoint's (see :mod:`training.graft`),
written as a checkpoint and its ``.npz`` inference file."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from models.checkpoint import CheckpointError, load_checkpoint, save_with_npz
from training.graft import graft_net


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.graft",
                                     description="Replace one class net of a checkpoint by another checkpoint's.")
    parser.add_argument("--checkpoint", type=Path, required=True, help="the checkpoint (.pt) that receives the net")
    parser.add_argument("--net", required=True, help="which class net to take (contact, crashed or race)")
    parser.add_argument("--from", dest="donor", type=Path, required=True, help="the checkpoint (.pt) the net comes from")
    parser.add_argument("--out", type=Path, required=True, help="the new checkpoint (.pt); the .npz goes beside it")
    args = parser.parse_args(argv)
    try:
        state = graft_net(load_checkpoint(args.checkpoint), load_checkpoint(args.donor), args.net, str(args.donor))
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    save_with_npz(args.out, state)
    print(f"{args.out}: the {args.net} net of {args.donor} in {args.checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
