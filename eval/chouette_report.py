"""What a chouette run reports: per-player figures, the ledger, and one JSON line per game.

The log line of a game (:func:`game_line`), players named by their labels::

    {"game": 7, "box": "pubeval", "captain": "random", "team": ["random", "tabla:ply=1"],
     "first": "team", "opening": [5, 2], "auto_doubles": 0, "turns": 41,
     "box_actions": [{"action": "double", "cube": 2}],
     "members": [{"player": "random", "actions": [{"action": "pass", "cube": 1}],
                  "stake": 1, "points": -1}, ...],
     "result": {"winner": "box", "kind": "gammon", "end": "played", "cube": 2,
                "captain_won": false},
     "points": {"pubeval": 5, "random": -1, "tabla:ply=1": -4},
     "disagreements": [{"turn": 3, "kind": "play", "dice": [6, 4],
                        "decided": "24/14", "opinions": {"random": "24/14", ...}}]}

``team`` is the team line at the start of the game, captain first; ``members`` follows
it. ``result`` is the game on the board as it ended: played out (``single``, ``gammon``,
``backgammon``), or ended by the cube (``end``: ``passed``, ``kind``: ``single``);
``captain_won`` is what decides the rotation. ``stake`` is the cube a member played for
at the end (for one who passed: the points he paid).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from engine.chouette import BOX, ChouetteGame
from engine.game import EndReason
from eval.chouette import ChouetteGameRecord, ChouetteRun

_KIND = {1: "single", 2: "gammon", 3: "backgammon"}


@dataclass
class PlayerFigures:
    """One player's figures over a run."""

    player: str
    points: int = 0
    games: int = 0
    box_games: int = 0
    captain_games: int = 0
    double: int = 0
    take: int = 0
    pass_: int = 0
    beaver: int = 0
    overruled: int = 0
    """Team plays on which his opinion was not the captain's choice."""

    @property
    def ppg(self) -> float:
        return self.points / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pass"] = d.pop("pass_")
        d["ppg"] = round(self.ppg, 4)
        return d


def _result(game: ChouetteGame) -> dict[str, Any]:
    s = game.state
    passed = s.end_reason is EndReason.DROPPED
    return {
        "winner": "box" if s.winner == BOX else "team",
        "kind": "single" if passed else _KIND[int(s.result)],
        "end": "passed" if passed else "played",
        "cube": s.points if passed else s.cube_value,
        "captain_won": game.captain_won,
    }


def game_line(rec: ChouetteGameRecord, labels: tuple[str, ...]) -> dict[str, Any]:
    """The JSON log line of one game."""
    g = rec.game
    name = labels.__getitem__
    pts = g.points()

    def actions(player: int) -> list[dict[str, Any]]:
        return [{"action": e.action, "cube": e.cube} for e in g.events if e.player == player]

    return {
        "game": rec.number,
        "box": name(rec.lineup.box),
        "captain": name(rec.lineup.captain),
        "team": [name(m) for m in rec.lineup.team],
        "first": "box" if rec.first == BOX else "team",
        "opening": list(rec.opening),
        "auto_doubles": g.state.automatic_doubles,
        "turns": rec.turns,
        "box_actions": actions(rec.lineup.box),
        "members": [{"player": name(m), "actions": actions(m), "stake": g.stake(m), "points": pts[m]}
                    for m in rec.lineup.team],
        "result": _result(g),
        "points": {name(p): pts[p] for p in sorted(pts)},
        "disagreements": [
            {"turn": d.turn, "kind": d.kind, **({"dice": list(d.dice)} if d.dice else {}),
             "decided": d.decided, "opinions": {name(m): o for m, o in d.opinions.items()}}
            for d in rec.disagreements
        ],
    }


def figures(run: ChouetteRun) -> list[PlayerFigures]:
    """Every player's figures, in seat order."""
    out = [PlayerFigures(label) for label in run.labels]
    for rec in run.games:
        g = rec.game
        out[rec.lineup.box].box_games += 1
        out[rec.lineup.captain].captain_games += 1
        for p, pts in g.points().items():
            out[p].points += pts
            out[p].games += 1
        for e in g.events:
            attr = "pass_" if e.action == "pass" else e.action
            setattr(out[e.player], attr, getattr(out[e.player], attr) + 1)
        for d in rec.disagreements:
            if d.kind == "play":
                for m, o in d.opinions.items():
                    out[m].overruled += o != d.decided
    return out


def ledger_matrix(run: ChouetteRun) -> np.ndarray:
    """``m[i, j]``: what player ``i`` won from player ``j`` (box against each member)."""
    n = len(run.labels)
    m = np.zeros((n, n), dtype=np.int64)
    for rec in run.games:
        box = rec.lineup.box
        for member, pts in rec.game.settlements():
            m[member, box] += pts
            m[box, member] -= pts
    return m


def table(run: ChouetteRun) -> str:
    """The per-player figures and the ledger, as text."""
    figs = figures(run)
    w = max(8, *(len(f.player) for f in figs))
    games = len(run.games)
    opts = run.options
    flags = [n for n, on in (("Jacoby", opts.jacoby), ("beavers", opts.beavers),
                             (f"{opts.auto_doubles} automatic double(s)", opts.auto_doubles),
                             (f"cube max {opts.max_cube}", opts.max_cube != 64)) if on]
    lines = [f"chouette: {len(figs)} players, {games} game{'s' if games != 1 else ''}" + (f" ({', '.join(flags)})" if flags else ""),
             f"seating: box {run.labels[run.seating.order[0]]}, captain {run.labels[run.seating.order[1]]}, "
             f"then {', '.join(run.labels[p] for p in run.seating.order[2:])}",
             "",
             f"{'player':<{w}} {'points':>7} {'ppg':>7} {'box':>5} {'capt':>5} {'double':>6} {'take':>5} "
             f"{'pass':>5} {'beaver':>6} {'overruled':>9}"]
    for f in figs:
        lines.append(f"{f.player:<{w}} {f.points:>+7d} {f.ppg:>+7.3f} {f.box_games:>5d} {f.captain_games:>5d} "
                     f"{f.double:>6d} {f.take:>5d} {f.pass_:>5d} {f.beaver:>6d} {f.overruled:>9d}")
    m = ledger_matrix(run)
    lines += ["", "ledger (row won from column):"]
    cw = max(7, *(len(s) for s in run.labels))
    lines.append(f"{'':<{w}} " + " ".join(f"{s:>{cw}}" for s in run.labels) + f" {'total':>7}")
    for i, s in enumerate(run.labels):
        cells = " ".join(f"{'-':>{cw}}" if i == j else f"{int(m[i, j]):>+{cw}d}" for j in range(len(run.labels)))
        lines.append(f"{s:<{w}} {cells} {int(m[i].sum()):>+7d}")
    lines.append(f"{'sum':<{w}} {int(m.sum()):>+{cw}d}")
    return "\n".join(lines)


def summary(run: ChouetteRun) -> dict[str, Any]:
    """The run as one JSON object (what ``--json`` prints)."""
    opts = run.options
    return {
        "players": list(run.labels),
        "games": len(run.games),
        "options": {"jacoby": opts.jacoby, "beavers": opts.beavers, "auto_doubles": opts.auto_doubles,
                    "max_cube": opts.max_cube},
        "seating": [run.labels[p] for p in run.seating.order],
        "figures": [f.to_dict() for f in figures(run)],
        "ledger": {run.labels[p]: t for p, t in enumerate(run.session.ledger)},
        "ledger_sum": sum(run.session.ledger),
        "ledger_pairs": {a: {b: int(v) for b, v in zip(run.labels, row) if b != a}
                         for a, row in zip(run.labels, ledger_matrix(run))},
        "next_lineup": {"box": run.labels[run.session.lineup.box],
                        "team": [run.labels[m] for m in run.session.lineup.team]},
    }


__all__ = ["PlayerFigures", "figures", "game_line", "ledger_matrix", "summary", "table"]
