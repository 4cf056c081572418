"""``tabla play --chouette 3``: scripted terminal sessions (pexpect), the person in one
seat and Tabla (heuristic evaluator, ply 1) in the others.

The seed fixes the initial roll: it is the first thing drawn from the session's
generator (:func:`engine.chouette.seat_players` on :func:`dice_thrower`), so
:func:`seed_where` finds a seed that puts the person in the box, as captain or as a
member.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pexpect

from engine.chouette import dice_thrower, seat_players
from play_helpers import spawn_tabla

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["-m", "scripts.tabla", "play", "--chouette", "3", "--model", "heuristic", "--ply", "1"]

BOX = r"box> "
CAPTAIN = r"captain> "
VOTE = r"team double\? yes/no> "
MOVE = r"move (\d)-(\d)> "
OPINION = r"opinion (\d)-(\d)> "
ANSWER = r"take, pass or beaver> |take or pass> "
NEXT = r"next game> "
PROMPTS = [BOX, CAPTAIN, VOTE, MOVE, OPINION, ANSWER, NEXT, pexpect.EOF]
EXAMPLE = re.compile(r"e\.g\. (.+?)\.\r?\n")


def seed_where(role: str) -> int:
    """The first seed whose initial roll gives the person (seat 0) ``role``."""
    for seed in range(100):
        lineup = seat_players(3, dice_thrower(np.random.default_rng(seed))).lineup
        if {"box": lineup.box, "captain": lineup.captain, "member": lineup.team[-1]}[role] == 0:
            return seed
    raise AssertionError(role)


def spawn(seed: int) -> pexpect.spawn:
    return spawn_tabla(ARGS + ["--seed", str(seed)], timeout=60)


def until(child: pexpect.spawn, wanted: list[str], answer: str = "take", limit: int = 5000) -> tuple[str, str]:
    """Answer every prompt (roll, no double, the suggested play, no opinion, ``answer``)
    until one of ``wanted`` shows; returns it and the text before it."""
    text = []
    for _ in range(limit):
        i = child.expect(PROMPTS)
        text.append(child.before)
        p = PROMPTS[i]
        if p in wanted:
            return p, "".join(text)
        if p in (BOX, CAPTAIN, OPINION):
            child.sendline("")
        elif p == VOTE:
            child.sendline("no")
        elif p == MOVE:
            child.sendline(EXAMPLE.search(child.before).group(1))
        elif p == ANSWER:
            child.sendline(answer)
        elif p == NEXT:
            child.sendline("")
        else:
            raise AssertionError(f"session ended: {''.join(text)[-800:]}")
    raise AssertionError("too many prompts")


def quit_session(child: pexpect.spawn) -> str:
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return child.before


def test_a_whole_chouette_game_by_script_shows_box_and_captain_and_ends_with_a_zero_sum_ledger():
    child = spawn(seed_where("box"))
    _, text = until(child, [NEXT])
    assert "Initial roll: you" in text and "Box: you. Captain: P" in text
    assert re.search(r"Game 1 over: .*Points: you [+-]\d+, P2 [+-]\d+, P3 [+-]\d+\.", text)
    points = [int(x) for x in re.search(r"Points: you ([+-]\d+), P2 ([+-]\d+), P3 ([+-]\d+)", text).groups()]
    assert sum(points) == 0
    assert re.search(r"The captain \(P\d\) (won|lost)", text)
    final = quit_session(child)
    assert "chouette: 3 players, 1 game" in final and re.search(r"\nsum +\+0", final)


def test_in_the_box_a_double_is_answered_by_each_member_on_his_own():
    child = spawn(seed_where("box"))
    until(child, [BOX])
    child.sendline("double")
    child.expect([MOVE, NEXT, BOX])
    text = child.before
    new = int(re.search(r"You \(box\) double to (\d+)\.", text).group(1))
    for bot in ("P2", "P3"):
        assert re.search(rf"{bot} (takes: stake {new}|passes and pays {new // 2})\.", text), text[-600:]
    quit_session(child)


def test_as_captain_the_person_sees_the_members_opinions_and_votes_and_a_refused_double_is_not_played():
    child = spawn(seed_where("captain"))
    prompt, text = until(child, [MOVE])
    assert "Captain: you" in text and re.search(r"Opinions: P\d: \S", text)
    child.sendline(EXAMPLE.search(child.before).group(1))
    prompt, text = until(child, [CAPTAIN])
    votes = re.findall(r"Votes: (P\d) would (not )?double\.", text)[-1]
    assert votes[1], "the member does not want to double this early"
    child.sendline("double")
    child.expect(MOVE)
    assert f"No team double: {votes[0]} would not double" in child.before
    quit_session(child)


def test_as_a_member_passing_a_box_double_pays_the_current_stake_and_sits_out_the_game():
    child = spawn(seed_where("member"))
    for _ in range(8):
        prompt, text = until(child, [ANSWER, NEXT])
        if prompt == ANSWER and re.findall(r"Box: (\S+)\.", text)[-1] != "you":
            break
        if prompt == ANSWER:
            child.sendline("take")
    else:
        raise AssertionError("no box double in 8 games")
    stake = int(re.findall(r"or pass and pay (\d+)\.", text)[-1])
    child.sendline("pass")
    prompt, rest = until(child, [NEXT])
    assert f"You pass and pay {stake}." in rest and "You are out of this game" in rest
    assert re.search(rf"Points: you -{stake},", rest)
    quit_session(child)


def test_an_illegal_play_is_refused_with_the_reason_and_legal_lists_the_plays():
    child = spawn(seed_where("box"))
    until(child, [MOVE])
    child.sendline("1/7")
    child.expect(MOVE)
    assert "Illegal play:" in child.before
    child.sendline("legal")
    child.expect(MOVE)
    assert "Legal plays: " in child.before
    quit_session(child)


def test_a_bad_chouette_size_or_option_is_a_one_line_error():
    for extra, message in ((["--chouette", "2"], "--chouette takes 3 to 10 players"),
                           (["--chouette", "3", "--match", "5"], "played for money")):
        proc = subprocess.run([sys.executable, "-m", "scripts.tabla", "play", "--model", "heuristic", *extra],
                              cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert proc.returncode == 2 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr
