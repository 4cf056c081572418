"""What the pieces of ``tabla play`` share: the session settings, a judged decision, the
cube state seen by the player on roll, and small text helpers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from engine.game import GameOptions, GameState, NoDouble
from eval.board_text import HUMAN


ERROR_THRESHOLD = 0.001
"""A decision that loses more than this (equity per cube, or MWC) counts as an error."""

HELP = """Commands:
  roll (or Enter)   roll the dice (before your roll)
  double            offer the cube (before your roll)
  8/5 6/5           a play in standard notation after rolling: bar/22, 6/off, 13/7*, 8/4(2)
  8/5  then  6/5    ...or the play in parts: each part is checked and shown on the board
  undo              take back the last part you typed (again and again, to the start of
                    the turn); at confirm> it takes back the last part of the play. A play
                    counts once confirmed (before your roll, undo says why it cannot come back)
  Enter             at confirm>: the play counts ("once the dice are picked up")
                    A forced play (the roll's only legal play) is shown and played when you
                    press Enter at confirm>.
  set autoconfirm on|off   a complete play counts at once, without confirming (default off;
                    also --auto-confirm); a play that could still go on is still asked
  legal             list the legal plays of your roll (those starting with what you typed)
  take / drop / beaver   answer a double
  resign [single|gammon|backgammon]   offer to resign (on your turn)
  hint              Tabla's best plays or cube decision, with equities
  eval              Tabla's evaluation of the position, from your side
  pip               pip counts
  board             show the board again
  save FILE / load FILE   save or load the game in progress (JSON); a save in mid-turn
                    keeps the moves you have typed, and load brings them back
  export FILE       write the finished games as a .mat file
  quit              end the session (in mid-game it asks first, and offers to save)"""

RESIGN_LEVELS = {"single": 1, "s": 1, "1": 1, "": 1, "gammon": 2, "g": 2, "2": 2, "backgammon": 3, "b": 3, "bg": 3, "3": 3}
RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class SessionEnd(Exception):
    """The player ended the session (``quit`` or end of input)."""


class LineConsole:
    """Text in and out for a terminal session: ``self.inp`` and ``self.out`` are streams."""

    inp: TextIO
    out: TextIO

    def say(self, text: str = "") -> None:
        """Write one line (flushed at once: the other side is a person or a pipe)."""
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        """Show ``prompt`` and read one line, stripped; end of input ends the session."""
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            raise SessionEnd("end of input")
        return line.strip()


class Reloaded(Exception):
    """A saved game replaced the one in progress: restart the turn loop."""


@dataclass(frozen=True, slots=True)
class PlayConfig:
    """Settings of a session (the CLI options)."""

    match_length: int = 0
    """0 for money games, else the match length."""
    jacoby: bool = False
    beavers: bool = False
    ply: int = 2
    """Depth of Tabla's checker play; cube decisions use ``ply - 1``."""
    home: str = "right"
    names: tuple[str, str] = ("you", "tabla")
    auto_confirm: bool = False
    """A complete play counts at once, without ``confirm>`` (``--auto-confirm``,
    ``set autoconfirm on``); off by default."""

    @property
    def cube_ply(self) -> int:
        return max(0, self.ply - 1)

    def options(self) -> GameOptions:
        money = self.match_length == 0
        return GameOptions(jacoby=self.jacoby and money, beavers=self.beavers and money)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One decision of the human, as Tabla judged it."""

    game: int
    move: int
    kind: str
    """``play``, ``cube`` (double or not) or ``response`` (take / drop / beaver)."""
    situation: str
    chosen: str
    best: str
    loss: float
    """Equity (per cube value) or MWC given away; 0 for the best decision."""


# --------------------------------------------------------------------------- helpers
def why_no_double(gs: GameState) -> str:
    """Why the player on roll may not double now (:meth:`GameState.no_double_reason`)."""
    reason = gs.no_double_reason()
    if reason is NoDouble.CRAWFORD:
        return "no doubling in the Crawford game"
    if reason is NoDouble.OPPONENT_OWNS:
        return "tabla owns the cube" if gs.turn == HUMAN else "you own the cube"
    if reason is NoDouble.MAXIMUM:
        return f"the cube is at its maximum ({gs.options.max_cube})"
    return "the cube is not available now"


def money_balance(score: tuple[int, int]) -> tuple[int, int]:
    """What each player (human, engine) has won (+) or lost (-) in a money session, from
    the points each has won: the board's panel and the text both show this figure."""
    return (score[0] - score[1], score[1] - score[0])


def split_command(line: str) -> tuple[str, str]:
    head, _, rest = line.strip().partition(" ")
    return head.lower(), rest.strip()


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


