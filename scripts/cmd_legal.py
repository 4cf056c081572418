"""``tabla legal``: list the legal plays of a roll.

    tabla legal --position-id 4HPwATDgc/ABMA --dice 31
    tabla legal --xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10 --json

One line per distinct resulting position (play in standard notation, then the
resulting Position ID with the opponent on roll); ``--json`` prints the protocol's
``legal`` reply object instead.
"""
from __future__ import annotations

import argparse
import json

from engine.dice import Roll
from engine.ids import position_from_id, position_id, xgid_from_text
from engine.notation import legal_plays


class UsageError(ValueError):
    """Bad command-line input for ``tabla legal``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--position-id", help="GNU Backgammon Position ID (player on roll moves)")
    src.add_argument("--xgid", help="XGID (its dice are used when --dice is absent)")
    parser.add_argument("--dice", help="the roll, e.g. 31 or 3-1")
    parser.add_argument("--json", action="store_true", help="print the protocol's legal reply as one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.xgid is not None:
        x = xgid_from_text(args.xgid)
        position = x.position
        xdice = x.dice
    else:
        position = position_from_id(args.position_id)
        xdice = None
    if args.dice is not None:
        roll = Roll.parse(args.dice)
    elif xdice is not None:
        roll = Roll.of(*xdice)
    else:
        raise UsageError("give the roll with --dice (e.g. --dice 31)")
    plays = legal_plays(position, roll)
    if args.json:
        reply = {
            "ok": True,
            "plays": [
                {"play": p.text, "steps": p.steps(), "position_id": position_id(p.next_position)}
                for p in plays
            ],
        }
        print(json.dumps(reply))
        return 0
    if len(plays) == 1 and not plays[0].moves:
        print(f"{roll.high}-{roll.low} cannot be played.")
        return 0
    width = max(len(p.text) for p in plays)
    print(f"{len(plays)} legal play{'s' if len(plays) != 1 else ''} for {roll.high}-{roll.low}:")
    for p in plays:
        print(f"  {p.text:<{width}}  {position_id(p.next_position)}")
    return 0
