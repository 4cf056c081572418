"""`tabla arena`: result table, JSON, export, plot, duplicate dice and clear errors."""
import json

import numpy as np
import pytest

from eval import arena
from eval.mat import parse_mat
from scripts.tabla import main


def test_json_output_reports_ppg_with_ci_and_counts(capsys):
    assert main(["arena", "pubeval", "random", "--games", "40", "--seed", "3", "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "cubeless" and out["games"] == 40
    assert out["ppg"] - out["ci95"] > 1.0
    assert out["wins"] + out["losses"] == 40
    assert out["gammons"] >= out["backgammons"]


def test_table_output_has_ppg_ci_and_speed(capsys):
    assert main(["arena", "race", "random", "--games", "20", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "ppg A" in text and "95% CI" in text and "games/s" in text


def test_a_bot_against_itself_scores_zero_with_duplicate_dice():
    r = arena.run_arena("pubeval", "pubeval", 30, seed=4, cube=True)
    assert r.ppg == 0.0 and r.wins == r.losses
    assert r.cube_a.doubles == r.cube_b.doubles


def test_cubeful_run_counts_cube_actions_and_exports_a_readable_mat(tmp_path, capsys):
    out = tmp_path / "run.mat"
    png = tmp_path / "run.png"
    code = main(["arena", "pipcube", "pubeval", "--games", "16", "--cube", "--seed", "2", "--export", str(out),
                 "--plot", str(png), "--json", "--no-progress"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["kind"] == "cubeful"
    a, b = res["cube_a"], res["cube_b"]
    assert a["doubles"] + b["doubles"] > 0
    assert a["takes"] + a["drops"] + a["beavers"] == b["doubles"]
    mat = parse_mat(out.read_text())
    assert mat.match_length == 0 and len(mat.games) == 16
    assert png.stat().st_size > 1000


def test_match_run_reports_match_wins_with_ci(capsys):
    assert main(["arena", "pubeval", "random", "--match", "3", "--games", "6", "--seed", "1", "--json", "--no-progress"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["kind"] == "match" and res["matches"] == 6 and res["match_length"] == 3
    assert 0 <= res["match_wins"] <= 6
    assert res["match_win_rate"] == pytest.approx(res["match_wins"] / 6)


def test_cumulative_ppg_ends_at_the_run_figure():
    r = arena.run_arena("pubeval", "race", 40, seed=9)
    x, mean, ci = arena.cumulative_ppg(r.points)
    assert x[-1] == r.games
    assert mean[-1] == pytest.approx(r.ppg)
    assert ci[-1] == pytest.approx(r.ci95)


def test_workers_give_the_same_games():
    one = arena.run_arena("pubeval", "race", 24, seed=5, cube=True)
    two = arena.run_arena("pubeval", "race", 24, seed=5, cube=True, workers=2)
    np.testing.assert_array_equal(one.points, two.points)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["arena", "nobot", "random"], "unknown bot"),
        (["arena", "gnubg:ply=9", "random"], "ply must be"),
        (["arena", "random", "random", "--games", "0"], "--games"),
        (["arena", "random", "random", "--jacoby"], "money games"),
        (["arena", "random", "random", "--export", "x.txt"], ".mat"),
        (["arena", "random", "random", "--max-cube", "3"], "power of two"),
        (["arena", "tabla:model=/no/such.pt", "random"], "not found"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(argv, message, capsys):
    assert main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


def _figures(out: dict) -> dict:
    return {k: v for k, v in out.items() if k not in ("seconds", "games_per_s", "exported")}


def test_arena_export_does_not_change_the_results(tmp_path, capsys):
    from eval.replay import replay_match

    argv = ["arena", "pubeval", "random", "--games", "40", "--seed", "1", "--json", "--no-progress"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    mat = tmp_path / "run.mat"
    assert main(argv + ["--export", str(mat)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert _figures(exported) == _figures(plain)
    # the file holds the games behind the figures: A's points game by game
    games = replay_match(parse_mat(mat.read_text())).games
    got = [g.points if g.winner == 0 else -g.points for g in games]
    want = arena.run_arena("pubeval", "random", 40, seed=1).points
    assert got == list(want) and sum(got) / len(got) == pytest.approx(plain["ppg"])


def test_plot_into_a_folder_writes_arena_png_and_says_where(tmp_path, capsys):
    assert main(["arena", "race", "random", "--games", "10", "--plot", str(tmp_path), "--no-progress"]) == 0
    png = tmp_path / "arena.png"
    assert png.stat().st_size > 1000 and f"plot {png}" in capsys.readouterr().out


@pytest.mark.parametrize(("where", "message"), [("adir", ".png file or into an existing folder"),
                                                ("no/such/folder/x.png", "does not exist")])
def test_plot_to_a_path_it_cannot_write_is_refused_before_the_games(tmp_path, where, message, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(arena, "run_arena", lambda *a, **k: pytest.fail("the games were played"))
    assert main(["arena", "race", "random", "--games", "10", "--plot", where, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not list(tmp_path.iterdir())


def test_no_progress_bar_when_stderr_is_not_a_terminal(capsys):
    assert main(["arena", "race", "random", "--games", "10"]) == 0
    assert capsys.readouterr().err == ""
