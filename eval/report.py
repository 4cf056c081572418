"""Text and plot of an :class:`~eval.analysis.Analysis` (``tabla analyse``)."""
from __future__ import annotations

from pathlib import Path

from eval.analysis import BAD, DOUBTFUL, VERY_BAD, Analysis, Graded, PlayerStats
from eval.board_text import BoardView, render_board

_ROWS = (
    ("Checker plays (unforced)", lambda p: f"{p.moves} ({p.unforced})"),
    ("  marked doubtful / bad / very bad", lambda p: f"{p.marks['doubtful']} / {p.marks['bad']} / {p.marks['very bad']}"),
    ("  error EMG (points)", lambda p: f"{p.checker_error:.3f} ({p.checker_points:.3f})"),
    ("  error rate mEMG", lambda p: f"{1000 * p.checker_rate:.1f}"),
    ("Cube decisions (close or actual)", lambda p: f"{p.cube_decisions} ({p.close_cube})"),
    ("  marked doubtful / bad / very bad",
     lambda p: f"{p.cube_marks['doubtful']} / {p.cube_marks['bad']} / {p.cube_marks['very bad']}"),
    ("  error EMG (points)", lambda p: f"{p.cube_error:.3f} ({p.cube_points:.3f})"),
    ("Error rate mEMG per decision", lambda p: f"{1000 * p.error_rate:.1f}"),
    ("PR (non-obvious decisions)", lambda p: f"{p.pr:.1f} ({p.non_obvious})"),
    ("Rating", lambda p: p.rating),
    ("Luck EMG (points)", lambda p: f"{p.luck:+.3f} ({p.luck_points:+.3f})"),
    ("Result (luck adjusted)", lambda p: f"{p.result:+.1f} ({p.luck_adjusted:+.2f})"),
)


def _table(players: tuple[PlayerStats, PlayerStats]) -> list[str]:
    cells = [(label, fn(players[0]), fn(players[1])) for label, fn in _ROWS]
    w = 2 + max([len(p.name) for p in players] + [max(len(a), len(b)) for _, a, b in cells])
    lines = [f"{'':36s}{players[0].name:>{w}s}{players[1].name:>{w}s}"]
    lines += [f"{label:36s}{a:>{w}s}{b:>{w}s}" for label, a, b in cells]
    return lines


def mistake_text(a: Analysis, g: Graded) -> list[str]:
    """A worst-mistake entry: where, what, the board, and why."""
    who = a.names[g.player]
    unit = "EMG"
    head = f"Game {g.game}, move {g.move}: {who}"
    lines = []
    if g.kind == "play":
        lines.append(f"{head} rolled {g.dice[0]}{g.dice[1]} and played {g.chosen}; best {g.best} "
                     f"(-{g.error:.3f} {unit}, {g.mark})")
    else:
        lines.append(f"{head}: {g.chosen}; best {g.best} (-{g.error:.3f} {unit}, {g.mark})")
    if g.state is not None:
        gs = g.state
        owner = None if gs.cube_owner is None else (0 if gs.cube_owner == gs.turn else 1)
        view = BoardView(position=gs.position, names=(a.names[gs.turn], a.names[1 - gs.turn]),
                         cube_value=gs.cube_value, cube_owner=owner, match_length=gs.match_length,
                         score=gs.score_relative(), crawford=gs.crawford, on_roll=0, dice=g.dice,
                         note=f"Position ID {g.position_id}")
        lines.extend("    " + ln for ln in render_board(view).splitlines())
    if g.kind == "play":
        lines.append(f"    played: {g.why}")
        lines.append(f"    best:   {g.why_best}")
    elif g.chosen_value is not None:
        lines.append(f"    {g.chosen} {g.chosen_value:+.3f}, {g.best} {g.best_value:+.3f} (for {who})")
    return lines


def format_analysis(a: Analysis, worst: int = 5) -> str:
    kind = f"{a.match_length}-point match" if a.match_length else "money session"
    head = [f"Analysis of a {kind}: {a.names[0]} vs {a.names[1]}, final score {a.score[0]}-{a.score[1]}",
            f"checker plays at {a.ply} ply, cube decisions at {a.cube_ply} ply; marks: doubtful >= {DOUBTFUL}, "
            f"bad >= {BAD}, very bad >= {VERY_BAD} EMG", ""]
    body = _table(a.players)
    out = head + body
    games = sorted(set(a.players[0].luck_per_game) | set(a.players[1].luck_per_game))
    if games:
        per = ", ".join(f"{g}: {a.players[0].luck_per_game.get(g, 0.0) - a.players[1].luck_per_game.get(g, 0.0):+.2f}"
                        for g in games)
        out += ["", f"Net luck of {a.names[0]} per game (points): {per}"]
    top = a.worst(worst)
    if top:
        out += ["", f"Worst {len(top)} mistakes:"]
        for g in top:
            out += mistake_text(a, g)
    return "\n".join(out) + "\n"


def plot_analysis(a: Analysis, path: str | Path) -> None:
    """A PNG of the first player's equity (money: points won so far plus the current
    game's equity; match: MWC) after each decision, mistakes marked."""
    import matplotlib  # noqa: PLC0415 (only for --plot)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    xs, ys, marks = [], [], []
    base = 0.0
    last_game = None
    for g in a.decisions:
        if g.equity_p0 is None or g.state is None:
            continue
        if g.game != last_game:
            last_game = g.game
            s = g.state.score
            base = float(s[0] - s[1]) if a.match_length == 0 else 0.0
        y = base + g.equity_p0 * (g.state.cube_value if a.match_length == 0 else 1)
        xs.append(len(xs))
        ys.append(y)
        if g.mark in ("bad", "very bad"):
            marks.append((xs[-1], y, g.mark, g.player))
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=100)
    ax.plot(xs, ys, color="tab:blue", lw=1, label=f"{a.names[0]}")
    for mk, colour in (("bad", "orange"), ("very bad", "red")):
        pts = [(x, y) for x, y, m, _ in marks if m == mk]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=18, color=colour, zorder=3, label=mk)
    ax.set_xlabel("decision")
    ax.set_ylabel("points (money)" if a.match_length == 0 else f"match-winning chance of {a.names[0]}")
    ax.set_title(f"{a.names[0]} vs {a.names[1]}")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
