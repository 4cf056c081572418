"""tabla analyse: grading, marks, rates, luck; the command on a real session file."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from engine.api import Engine
from engine.cube import CubeState
from engine.dice import ALL_ROLLS, Roll
from engine.game import GameState
from engine.heuristic import HeuristicEvaluator
from engine.movegen import legal_results_with_steps
from engine.position import Position
from eval.analysis import Grader, PlayerStats, mark, rating
from eval.bots import PipCubeBot, PubevalBot
from eval.mat import format_mat
from eval.match import DiceSource, play_match, play_session
from eval.replay import Decision
from scripts.tabla import main


@pytest.fixture(scope="module")
def grader():
    return Grader(Engine(HeuristicEvaluator()), ply=1, cube_ply=0)


def _decision(gs: GameState, roll: Roll, k: int) -> Decision:
    boards, steps, nsteps = legal_results_with_steps(gs.position.array(), roll.high, roll.low)
    st = tuple((int(steps[k, j, 0]), int(steps[k, j, 1])) for j in range(int(nsteps[k])))
    return Decision(1, gs.turn, "move", gs, roll=roll, after=Position(tuple(int(x) for x in boards[k])), steps=st)


MIDGAME = Position.from_points({6: 4, 8: 3, 13: 4, 20: 2, 24: 2}, {6: 5, 7: 2, 8: 2, 13: 4, 24: 2})


def test_the_best_play_loses_nothing_and_the_worst_loses_the_gap_in_emg(grader):
    gs = GameState(position=MIDGAME, turn=0)
    roll = Roll.of(6, 4)
    r = grader.search.rank_plays(gs.position.array(), 6, 4, 1, CubeState())
    best = grader.grade_play(_decision(gs, roll, r.best), 1)
    worst_k = int(r.order[-1])
    worst = grader.grade_play(_decision(gs, roll, worst_k), 1)
    assert best.error == 0.0 and best.mark == ""
    assert worst.error == pytest.approx(r.score[r.best] - r.score[worst_k])
    assert worst.mark == mark(worst.error) and worst.error > 0
    assert worst.why and worst.why_best and worst.best == best.chosen


def test_a_forced_play_is_counted_but_not_graded(grader):
    gs = GameState(position=Position.from_points({1: 1, 6: 14}, {1: 15}), turn=0)
    g = grader.grade_play(_decision(gs, Roll.of(6, 6), 0), 1)
    assert g.forced and not g.graded and g.mark == ""


def test_the_luck_of_the_21_rolls_averages_to_zero(grader):
    gs = GameState(position=MIDGAME, turn=0)
    total = 0.0
    for roll in ALL_ROLLS:
        total += roll.weight / 36 * grader.luck(_decision(gs, roll, 0), opening=False)
    assert total == pytest.approx(0.0, abs=1e-9)


def test_the_opening_roll_luck_averages_to_zero_over_the_15_non_doubles(grader):
    gs = GameState.new_game(first_player=0)
    rolls = [r for r in ALL_ROLLS if not r.is_double]
    total = sum(grader.luck(_decision(gs, r, 0), opening=True) for r in rolls)
    assert total == pytest.approx(0.0, abs=1e-9)


def test_marks_follow_gnubg_thresholds():
    assert [mark(x) for x in (0.0, 0.029, 0.03, 0.059, 0.06, 0.119, 0.12, 1.0)] == \
           ["", "", "doubtful", "doubtful", "bad", "bad", "very bad", "very bad"]


def test_rating_words_follow_gnubg_scale_in_memg_per_decision():
    assert [rating(x / 1000) for x in (1, 4, 7, 11, 17, 25, 34, 60)] == [
        "Supernatural", "World class", "Expert", "Advanced", "Intermediate", "Casual player", "Beginner", "Awful!"]


def test_error_rate_and_pr_are_totals_per_decision():
    p = PlayerStats("x", unforced=40, close_cube=10, checker_error=0.5, cube_error=0.25, non_obvious=30)
    assert p.error_rate == pytest.approx(0.75 / 50)
    assert p.pr == pytest.approx(500 * 0.75 / 30)


def test_match_errors_are_converted_to_emg_by_the_value_of_the_cube_in_mwc(grader):
    # at double match point winning the game wins the match: W - L = 1, so 1% MWC = 0.02 EMG
    dmp = CubeState(match_length=5, score=(4, 4))
    assert grader.to_emg(dmp, 0.01) == pytest.approx(0.02)
    assert grader.to_emg(CubeState(value=4), 0.4) == pytest.approx(0.1)


@pytest.mark.parametrize("kind", ["session", "match"])
def test_every_decision_of_a_session_or_match_is_graded_and_counted(tmp_path, capsys, kind):
    bots = (PipCubeBot(), PubevalBot())
    dice = DiceSource(np.random.default_rng(8))
    rec = play_session(bots, 3, dice) if kind == "session" else play_match(bots, 3, dice)
    f = tmp_path / "x.mat"
    f.write_text(format_mat(rec))
    plot = tmp_path / "p.png"
    assert main(["analyse", str(f), "--ply", "1", "--cube-ply", "0", "--heuristic", "--json", "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    moves = sum(1 for g in rec.games for a in g.actions if a.kind == "move")
    cube_actions = sum(1 for g in rec.games for a in g.actions if a.kind in ("double", "take", "drop"))
    plays = [d for d in out["decisions"] if d["kind"] == "play"]
    assert len(plays) == moves
    assert sum(1 for d in out["decisions"] if d["kind"] in ("take",) or d["chosen"] == "double") == cube_actions
    assert all(d["graded"] or d["forced"] for d in out["decisions"])
    for seat, p in enumerate(out["players"]):
        mine = [d for d in plays if d["player"] == seat and d["graded"]]
        assert p["unforced"] == len(mine)
        assert p["checker_error"] == pytest.approx(sum(d["error"] for d in mine))
        assert p["result"] == sum(g.points_for(seat) for g in rec.games)
    assert out["players"][0]["luck_points"] != 0.0
    assert plot.exists() and plot.stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gnubg") is None and not Path("/usr/games/gnubg").exists(),
                    reason="GNU Backgammon (gnubg) is not installed")
def test_grading_agrees_with_gnubg_on_a_20_game_pubeval_session(tmp_path):
    """Issue 17's requirement, end to end (several minutes: gnubg's 2-ply analysis)."""
    from scripts.compare_gnubg_analysis import main as compare  # noqa: PLC0415

    assert compare(["--workdir", str(tmp_path)]) == 0
