"""``python -m scripts.widen --checkpoint models/tabla.pt --hidden 256 --out run/wide.pt``:
widen a trained network's hidden layer, or (``--encoding``) move one net to an encoding
that extends its inputs, without changing its outputs (see :mod:`training.widen`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from training.widen import extend_inputs, widen_state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.widen", description="Widen a trained network's hidden layer without changing its outputs.")
    parser.add_argument("--checkpoint", type=Path, required=True, help="training checkpoint (.pt) to widen")
    parser.add_argument("--hidden", type=int, default=None, help="hidden units of the widened net")
    parser.add_argument("--encoding", default=None,
                        help="instead of --hidden: the encoding that extends the net's inputs (e.g. tabla-contact-v3)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the widened checkpoint")
    parser.add_argument("--seed", type=int, default=0, help="seed of the new units' initial weights")
    parser.add_argument("--net", default="contact", help="which net of a class-net set to widen (default contact)")
    args = parser.parse_args(argv)
    if (args.hidden is None) == (args.encoding is None):
        print("error: give --hidden or --encoding (one of them)", file=sys.stderr)
        return 2
    try:
        if args.encoding is not None:
            state = extend_inputs(load_checkpoint(args.checkpoint), args.net, args.encoding)
        else:
            state = widen_state(load_checkpoint(args.checkpoint), args.hidden, args.seed, args.net)
    except (CheckpointError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    save_checkpoint(args.out, state)
    if args.encoding is not None:
        wf = state["stages"][-1]["widened_from"]
        print(f"{args.out}: the {args.net} net reads {args.encoding} ({wf['inputs']} -> "
              f"{state['nets'][args.net]['net_config']['inputs']} inputs, the new ones at zero weight)")
    else:
        print(f"{args.out}: {state['widened_from']['hidden']} -> {args.hidden} hidden units at {state['games']:,} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
