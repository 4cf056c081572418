"""Drive ``tabla play`` in tests: the real command on a pseudo-terminal (pexpect) against
the heuristic evaluator at ply 1, special positions set up through its own save files
(:func:`eval.save_file.snapshot`) and ``--load``."""
from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path

import pexpect

from engine.game import GameState
from engine.position import Position
from eval.board_text import ENGINE, HUMAN
from eval.play_common import PlayConfig
from eval.save_file import snapshot

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["-m", "scripts.tabla", "play", "--model", "heuristic", "--ply", "1"]

YOU = r"you> "
MOVE = r"move (\d)-(\d)> "
CONFIRM = r"confirm> "
TAKE = r"take(?:, drop or beaver| or drop)> "
NEXT = r"next game> "
EXPORT = r"export> "
QUIT = r"quit> "
PROMPTS = [YOU, MOVE, CONFIRM, TAKE, NEXT, EXPORT, pexpect.EOF]
HINT_FIRST = re.compile(r"\n  1\. (.+?) +[+-]?\d+\.\d+%?")
START = {6: 5, 8: 3, 13: 5, 24: 2}
"""The starting checkers of one side, in its own numbering."""


def spawn_tabla(args: list[str], timeout: float = 30) -> pexpect.spawn:
    """``python -m scripts.tabla ARGS`` in a 60 x 200 terminal, from the repository, with
    Ctrl-C's default action restored: a test run started in the background (``cmd &``) ignores
    SIGINT, the child would inherit that, and Python then installs no KeyboardInterrupt."""
    return pexpect.spawn(sys.executable, args, cwd=str(ROOT), encoding="utf-8",
                         timeout=timeout, echo=False, dimensions=(60, 200),
                         preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(*extra: str) -> pexpect.spawn:
    return spawn_tabla(ARGS + list(extra))


def save_file(tmp_path: Path, name: str, state: GameState, config: PlayConfig = PlayConfig(),
              dice=None) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(snapshot(state, config, dice=dice)))
    return str(path)


def human_state(mine: dict, theirs: dict, **kw) -> GameState:
    """A game with the human on roll: ``mine`` his checkers, ``theirs`` Tabla's (own numbering)."""
    return GameState(position=Position.from_points(mine, theirs), turn=HUMAN, **kw)


def engine_state(engine: dict, human: dict, **kw) -> GameState:
    """A game with Tabla on roll: ``engine`` its checkers, ``human`` the human's."""
    return GameState(position=Position.from_points(engine, human), turn=ENGINE, **kw)


def loaded(tmp_path: Path, state: GameState, prompt: str, *extra: str, seed: str = "1",
           config: PlayConfig = PlayConfig(), dice=None) -> pexpect.spawn:
    """A session loaded from a save of ``state`` (and ``dice`` rolled), at its first ``prompt``."""
    child = spawn("--seed", seed, *extra, "--load", save_file(tmp_path, "saved.json", state, config, dice))
    child.expect(prompt)
    return child


def at_move(tmp_path: Path, mine: dict, theirs: dict, dice: tuple[int, int], *extra: str) -> pexpect.spawn:
    """A session loaded at the human's move prompt with ``dice`` rolled."""
    return loaded(tmp_path, human_state(mine, theirs), MOVE, *extra, dice=dice)


def send(child: pexpect.spawn, line: str, prompt: str = MOVE) -> str:
    """Type ``line``, wait for ``prompt``, return what was printed in between."""
    child.sendline(line)
    child.expect(prompt)
    return child.before


def play_hinted(child: pexpect.spawn) -> str:
    """At a move prompt: ask for a hint, play its first suggestion, return it."""
    m = HINT_FIRST.search(send(child, "hint"))
    assert m, child.before
    child.sendline(m.group(1))
    return m.group(1)


def until(child: pexpect.spawn, wanted: str, on_take: str = "take", limit: int = 3000) -> int:
    """Answer prompts (roll, hinted plays, confirm, take) until ``wanted`` shows; its index."""
    target = PROMPTS.index(wanted)
    for _ in range(limit):
        i = child.expect(PROMPTS)
        if i == target:
            return i
        p = PROMPTS[i]
        if p in (YOU, CONFIRM):
            child.sendline("")
        elif p == MOVE:
            play_hinted(child)
        elif p == TAKE:
            child.sendline(on_take)
        else:
            raise AssertionError(f"unexpected prompt {p!r}: {child.before[-500:]}")
    raise AssertionError("too many prompts")


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def quit_session(child: pexpect.spawn) -> str:
    """``quit`` (in mid-game ``quit`` again at ``quit>``; after the game Enter at
    ``export>``): the session ends with status 0; returns what it printed on the way out."""
    child.sendline("quit")
    out = ""
    while (i := child.expect([QUIT, EXPORT, pexpect.EOF])) != 2:
        out += child.before
        child.sendline("quit" if i == 0 else "")
    out += child.before
    child.close()
    assert child.exitstatus == 0, out
    return out
