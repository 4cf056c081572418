"""``tabla bearoff``: build into a directory with verification, show a position, one-line errors."""
import contextlib
import hashlib
import io

import pytest

from engine import bearoff as bo
from scripts.tabla import main


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("bearoff_cli")
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["bearoff", "build", "--out", str(out), "--verify", "--no-progress"]) == 0
    return out, text.getvalue()


def test_build_writes_the_three_files_and_passes_its_verification(built):
    out, text = built
    assert (out / bo.ONE_SIDED_FILE).exists() and (out / bo.TWO_SIDED_FILE).exists()
    assert bo.read_db(out / bo.WIDE_FILE, bo.WIDE_KIND)["dist"].shape == (490314, 32)
    assert bo.file_meta(out / bo.ONE_SIDED_FILE)["digest"] == bo.file_meta(bo.SHIPPED_DIR / bo.ONE_SIDED_FILE)["digest"]
    bo.read_db(out / bo.TWO_SIDED_FILE, "two-sided")
    assert "FAILED" not in text and text.count(": ok") == 3


def test_build_output_names_the_sha256_of_each_file(built):
    out, text = built
    for name in (bo.ONE_SIDED_FILE, bo.TWO_SIDED_FILE, bo.WIDE_FILE):
        assert f"sha256 {hashlib.sha256((out / name).read_bytes()).hexdigest()}" in text


def test_show_prints_the_exact_two_sided_values(built, capsys):
    out, _ = built
    # one checker on the 6-point against one on the 1-point: 27/36 to win, a double/take
    assert main(["bearoff", "show", "--position-id", "AQAAgAAAAAAAAA", "--db", str(out)]) == 0
    text = capsys.readouterr().out
    assert "two-sided: win 0.750000" in text and "centred +1.000000" in text
    assert "expected rolls 1.2500" in text


def test_show_reads_a_race_one_roll_from_home_from_the_eight_point_file(built, capsys):
    from engine.ids import position_id
    from engine.position import Position

    out, _ = built
    # a lone checker on my 7-point against one on his 1-point: it is off in one roll when
    # the roll moves 7 pips or more: all but 21, 31, 41, 51, 32, 42 (twice each) and 11
    pid = position_id(Position.from_points({7: 1}, {1: 1}).array())
    assert main(["bearoff", "show", "--position-id", pid, "--db", str(out)]) == 0
    text = capsys.readouterr().out
    assert "eight-point database" in text
    assert "1: 0.6389" in text  # 23 of 36


@pytest.mark.parametrize("args, message", [
    (["show", "--position-id", "4HPwATDgc/ABMA"], "not a bearoff position"),
    (["show", "--position-id", "xyz"], "Position ID"),
    (["build", "--out", __file__], "not a directory"),
])
def test_bad_arguments_give_one_line_errors(args, message, capsys):
    assert main(["bearoff", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_missing_database_directory_is_a_one_line_error(tmp_path, capsys):
    assert main(["bearoff", "show", "--position-id", "AQAAgAAAAAAAAA", "--db", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no bearoff database" in err and len(err.strip().splitlines()) == 1
