"""``tabla play``: play money games or a match against Tabla in the terminal.

``tabla play [--match 7 | --money] [--ply 2] [--model PATH|heuristic] [--seed S] [--jacoby]
[--beavers] [--home left|right] [--load FILE] [--auto-confirm]``

The human is ``X`` (player 0) and Tabla is ``O`` (player 1); the board is drawn from the
human's side (:mod:`eval.board_text`). Input is read a line at a time from standard input,
so a terminal, a pipe and a pexpect script all work. The prompts:

* ``you> `` before your roll: Enter (or ``roll``) rolls, ``double`` offers the cube,
  ``resign [single|gammon|backgammon]`` offers to resign; ``undo`` says why your last
  play can no longer be taken back (tabla has rolled since).
* ``move 5-4> `` after the roll: a play in standard notation (``8/5 6/5``, ``bar/22``,
  ``6/off``, ``13/7*``, ``6/off(2)``), whole or in parts (``8/5``, then ``6/5``). Each
  part must begin a legal play (:class:`TypedTurn`); the board is redrawn with it and the
  dice still to play are shown; ``undo`` takes back the last part, down to the start of
  the turn. An illegal or malformed play or part is refused with the reason; ``legal``
  lists the legal plays (those starting with the typed part). A roll that cannot be
  played is announced and passes.
* ``confirm> `` once the typed parts make a whole play: it is shown on the board; Enter
  confirms it ("the move counts once the dice are picked up"), ``undo`` takes back its
  last part, and a move that goes on with the play (6/off 3/off after 6/off, which is
  already the play 6/3/off) is taken. A forced play (the roll's only legal play) goes
  straight to ``confirm> ``, where Enter plays it. With ``--auto-confirm`` (or
  ``set autoconfirm on``; off by default) a complete play that cannot go on, and a forced
  play, count at once.
* ``take, drop or beaver> `` when Tabla doubles.
* ``next game> `` between games and ``export> `` at the very end (``export FILE`` writes
  the games as a Jellyfish ``.mat`` file).

Everywhere: ``hint`` (Tabla's top plays, or its cube decision, with equities), ``eval``,
``pip``, ``board``, ``save FILE`` / ``load FILE`` (a game in progress as JSON, with the
parts of a play typed in mid-turn; a bad file is refused in one line and the game goes
on), ``export FILE``, ``set autoconfirm on|off``, ``help``, ``quit`` (in mid-game it asks
at ``quit> ``: ``save FILE`` saves and quits, ``quit`` quits, Enter plays on). End of
input and Ctrl-C end the session politely. The board shows the game's GNU Backgammon
Position ID and Match ID, and in money play each side's balance (the same figure as
"Money so far").

Tabla plays at ``--ply`` (see :mod:`engine.search`), decides the cube at ``ply - 1``
before the roll, accepts a resignation when it is worth at least what Tabla expects from
playing on, and judges every decision of the human at the same depths: at the end a
summary lists the equity lost per decision (per cube value in money play, match-winning
chances in a match).
"""
from __future__ import annotations

import sys
from dataclasses import replace
from typing import TextIO

import numpy as np

from engine.api import Engine
from engine.dice import Roll, opening_roll
from engine.game import EndReason, GameState
from engine.ids import match_id, position_id
from engine.notation import Play, play_from_steps
from engine.position import GameResult, Position
from eval.board_text import ENGINE, HUMAN, BoardView, render_board
from eval.match import Action, GameRecord
from eval.coach import Coach
from eval.play_commands import SessionCommands
from eval.play_common import (
    RESULT_NAMES,
    Judgement,
    LineConsole,
    PlayConfig,
    Reloaded,
    SessionEnd,
    money_balance,
    split_command,
    why_no_double,
)
from eval.play_cube import CubeTalk
from eval.play_input import TypedInput
from eval.save_file import Loaded
from eval.typed_turn import TypedTurn


# --------------------------------------------------------------------------- the session
class PlaySession(LineConsole, Coach, TypedInput, CubeTalk, SessionCommands):
    """One sitting at the board: money games or a match against the engine.

    The text session and the game loop live here; the human's typed play in
    :class:`TypedInput`, the cube and resignations in :class:`CubeTalk`, the commands of
    every prompt in :class:`SessionCommands`, hints and judgements in :class:`Coach`."""

    def __init__(
        self,
        engine: Engine,
        config: PlayConfig,
        rng: np.random.Generator,
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
    ) -> None:
        self.engine = engine
        self.config = config
        self.rng = rng
        self.inp = stdin
        self.out = stdout
        self.state: GameState | None = None
        self.dice: tuple[int, int] | None = None
        self.games: list[GameRecord] = []
        self.record: GameRecord | None = None
        self.judgements: list[Judgement] = []
        self.move = 0
        self._ranking_key = None
        self._ranking = None
        self.typed: TypedTurn | None = None
        """The human's turn in progress: the parts of the play typed so far."""
        self._restored_parts: tuple = ()

    # ----------------------------------------------------------------- I/O
    @property
    def money(self) -> bool:
        return self.config.match_length == 0

    def view(self, position: Position | None = None, dice: tuple[int, int] | None = None) -> BoardView:
        gs = self.state
        pos = position if position is not None else (gs.position if gs.turn == HUMAN else gs.position.flip())
        return BoardView(
            position=pos,
            names=self.config.names,
            cube_value=gs.cube_value,
            cube_owner=gs.cube_owner,
            match_length=gs.match_length,
            score=money_balance(gs.score) if gs.is_money else gs.score,
            crawford=gs.crawford,
            on_roll=None if gs.is_over else gs.turn,
            dice=dice if dice is not None else self.dice,
            home=self.config.home,
            note=self._ids() if position is None and not gs.is_over else "",
        )

    def _ids(self) -> str:
        """The GNU Backgammon Position ID and Match ID of the game (dice included once rolled)."""
        gs = self.state
        info = replace(gs.match_info(), dice=self.dice or (0, 0))
        return f"Position ID {position_id(gs.position)}  Match ID {match_id(info)}"

    def show_board(self, position: Position | None = None) -> None:
        self.say(render_board(self.view(position)))

    # ----------------------------------------------------------------- session
    def load(self, loaded: Loaded) -> None:
        """Replace the session's game by a loaded one."""
        self.config = replace(self.config, match_length=loaded.config.match_length,
                              jacoby=loaded.config.jacoby, beavers=loaded.config.beavers)
        self.state = loaded.state
        self.dice = loaded.dice
        if loaded.rng_state is not None:
            self.rng.bit_generator.state = loaded.rng_state
        self.games = loaded.games
        gs = loaded.state
        self.record = loaded.current or GameRecord(number=len(self.games) + 1, score=gs.score,
                                                   match_length=gs.match_length, crawford=gs.crawford, first=gs.turn)
        self.judgements = loaded.judgements
        self.move = loaded.move
        self._ranking_key = None
        self.typed = None
        self._restored_parts = loaded.partial

    def run(self) -> int:
        """Play until the match ends or the player stops; returns the exit status."""
        try:
            self.say(self._intro())
            if self.state is None:
                self._start_game()
            while True:
                try:
                    self._play_game()
                except Reloaded:
                    continue
                self._end_of_game()
                if not self._another_game():
                    break
                self._start_game()
            self.say(self.summary())
            self._final_prompt()
        except SessionEnd as end:
            self.say(f"\n({end}) Goodbye.")
            if self.judgements:
                self.say(self.summary())
        return 0

    def _intro(self) -> str:
        c = self.config
        if c.match_length:
            kind = f"a {c.match_length}-point match"
        else:
            opts = [o for o, on in (("Jacoby rule", c.jacoby), ("beavers", c.beavers)) if on]
            kind = "money games" + (f" ({', '.join(opts)})" if opts else "")
        return (f"Tabla backgammon: {kind}. You are X and play from your 24-point to your 1-point; "
                f"tabla is O. Type help for the commands.")

    def _start_game(self) -> None:
        roll, _ties, first = opening_roll(self.rng)
        if self.state is None:
            self.state = GameState.new_game(self.config.options(), first_player=first, match_length=self.config.match_length)
        else:
            self.state = self.state.next_game(first_player=first)
        gs = self.state
        self.record = GameRecord(number=len(self.games) + 1, score=gs.score, match_length=gs.match_length,
                                 crawford=gs.crawford, first=first)
        self.move = 0
        mine, theirs = (roll.high, roll.low) if first == HUMAN else (roll.low, roll.high)
        head = f"Game {self.record.number}"
        if gs.match_length:
            head += f" of the {gs.match_length}-point match, score: you {gs.score[HUMAN]}, tabla {gs.score[ENGINE]}"
            if gs.crawford:
                head += " (Crawford game: no doubling)"
        self.say(head)
        who = "you play" if first == HUMAN else "tabla plays"
        self.say(f"Opening roll: you {mine}, tabla {theirs}: {who} first with {roll.high}-{roll.low}.")
        self.dice = (roll.high, roll.low)

    def _play_game(self) -> None:
        while not self.state.is_over:
            if self.state.turn == HUMAN:
                self._human_turn()
            else:
                self._engine_turn()

    def _roll(self) -> tuple[int, int]:
        r = self.rng.integers(1, 7, size=2)
        return int(max(r)), int(min(r))

    def _apply_play(self, player: int, play: Play, dice: tuple[int, int]) -> None:
        gs = self.state
        self.record.actions.append(Action(player, "move", dice=dice, before=gs.position.board,
                                          after=play.result.board, steps=tuple(tuple(s) for s in play.steps())))
        self.state = gs.play(play)
        self.dice = None
        self.typed = None
        self._ranking_key = None
        if player == HUMAN:
            self.move += 1

    # ----------------------------------------------------------------- engine
    def _engine_turn(self) -> None:
        gs = self.state
        if self.dice is None:
            if gs.can_double():
                cr = self.engine.cube(gs.position, self.config.cube_ply, gs.cube_state())
                if cr.decision.double:
                    self._engine_doubles(cr.decision)
                    if self.state.is_over:
                        return
            self.dice = self._roll()
        gs = self.state
        dice = self.dice
        roll = Roll.of(*dice)
        best = self.engine.best(gs.position, roll, self.config.ply, 1, gs.cube_state()).plays[0]
        play = play_from_steps(gs.position, roll, best.steps)
        if play.moves:
            self.say(f"tabla rolls {dice[0]}-{dice[1]} and plays {play.text}.")
        else:
            self.say(f"tabla rolls {dice[0]}-{dice[1]} and cannot move.")
        self._apply_play(ENGINE, play, dice)
        if not self.state.is_over:
            self.show_board()

    # ----------------------------------------------------------------- human
    def _human_turn(self) -> None:
        if self.dice is None:
            self._before_roll()
            if self.state.is_over or self.dice is None:
                return
        self._human_play()

    def _before_roll(self) -> None:
        self.say("Your turn: press Enter to roll" + (", or type double." if self.state.can_double() else "."))
        while True:
            cmd, arg = split_command(self.ask("you> "))
            if cmd in ("", "roll", "r"):
                if self.state.can_double():
                    self._judge_cube(doubled=False)
                self.dice = self._roll()
                return
            if cmd in ("double", "d"):
                if not self.state.can_double():
                    self.say(f"You cannot double: {why_no_double(self.state)}.")
                    continue
                self._human_doubles()
                if self.state.is_over:
                    return
                self.dice = self._roll()
                return
            if cmd == "hint":
                self.say(self._cube_hint())
            elif cmd == "resign":
                self._human_resigns(arg)
                if self.state.is_over:
                    return
            elif cmd in ("undo", "u"):
                self.say(self._why_no_undo())
            elif not self._common(cmd, arg):
                self.say(f"Unknown command {cmd!r}: press Enter to roll, or type help.")

    # ----------------------------------------------------------------- game end
    def _end_of_game(self) -> None:
        gs = self.state
        rec = self.record
        rec.winner = gs.winner
        rec.points = gs.points
        rec.cube_value = gs.cube_value
        rec.result = 0 if gs.end_reason is EndReason.DROPPED else int(gs.result)
        self.games.append(rec)
        win_name = "You win" if gs.winner == HUMAN else "tabla wins"
        pts = f"{gs.points} point{'s' if gs.points != 1 else ''}"
        if gs.end_reason is EndReason.PLAYED:
            self.show_board()
            kind = GameResult(gs.result)
            winner, loser = ("you", "tabla") if gs.winner == HUMAN else ("tabla", "you")
            bore = "bore off all 15 checkers"
            has = "has" if gs.winner == HUMAN else "have"
            why = {
                GameResult.SINGLE: f"a single game ({loser} {has} borne off checkers)",
                GameResult.GAMMON: f"a gammon ({loser} {has} borne off no checker)",
                GameResult.BACKGAMMON: (f"a backgammon ({loser} {has} borne off no checker and still {has} "
                                        f"one on the bar or in {'your' if gs.winner == HUMAN else 'its'} home board)"),
            }[kind]
            if gs.jacoby_applies and kind is not GameResult.SINGLE:
                why += ", counted single by the Jacoby rule (the cube was not turned)"
            cube = f", cube at {gs.cube_value}" if gs.cube_value > 1 else ""
            self.say(f"{win_name} {pts}: {winner} {bore}; {why}{cube}.")
        elif gs.end_reason is EndReason.DROPPED:
            dropper = "tabla" if gs.winner == HUMAN else "you"
            self.say(f"{win_name} {pts}: {dropper} dropped the double.")
        else:
            loser = "tabla" if gs.winner == HUMAN else "you"
            self.say(f"{win_name} {pts}: {loser} resigned {RESULT_NAMES[gs.resign_level]}.")
        final = gs.final_score()
        if gs.is_money:
            self.say(f"Money so far: you {money_balance(final)[HUMAN]:+d} after {len(self.games)} game"
                     f"{'s' if len(self.games) != 1 else ''}.")
        else:
            self.say(f"Score: you {final[HUMAN]}, tabla {final[ENGINE]} ({gs.match_length}-point match).")
            mw = gs.match_winner()
            if mw is not None:
                self.say(("You win" if mw == HUMAN else "tabla wins") + f" the match {final[mw]}-{final[1 - mw]}.")

    def _another_game(self) -> bool:
        if self.state.match_winner() is not None:
            return False
        while True:
            cmd, arg = split_command(self.ask("next game> "))
            if cmd in ("", "y", "yes", "next"):
                return True
            if cmd in ("quit", "q", "exit", "stop", "no"):
                return False
            if cmd == "export":
                self._export(arg)
            elif cmd == "help":
                self.say("Press Enter for the next game, export FILE to write the games as .mat, or quit.")
            else:
                self.say("Press Enter for the next game, or type quit.")

    def _final_prompt(self) -> None:
        if not self.games:
            return
        self.say("Type export FILE.mat to write the games as a .mat file, or press Enter to quit.")
        while True:
            cmd, arg = split_command(self.ask("export> "))
            if cmd in ("", "quit", "q", "exit"):
                return
            if cmd == "export":
                self._export(arg)
            else:
                self.say("Type export FILE.mat, or press Enter to quit.")

