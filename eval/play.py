"""``tabla play``: play money games or a match against Tabla in the terminal.

``tabla play [--match 7 | --money] [--ply 2] [--model PATH|heuristic] [--seed S] [--jacoby]
[--beavers] [--home left|right] [--load FILE]``

The human is ``X`` (player 0) and Tabla is ``O`` (player 1); the board is drawn from the
human's side (:mod:`eval.board_text`). Input is read a line at a time from standard input,
so a terminal, a pipe and a pexpect script all work. The prompts:

* ``you> `` before your roll: Enter (or ``roll``) rolls, ``double`` offers the cube,
  ``resign [single|gammon|backgammon]`` offers to resign.
* ``move 5-4> `` after the roll: a play in standard notation (``8/5 6/5``, ``bar/22``,
  ``6/off``, ``13/7*``, ``6/off(2)``), whole or in parts (``8/5``, then ``6/5``). Each
  part must begin a legal play (:class:`TypedTurn`); the board is redrawn with it and the
  dice still to play are shown; ``undo`` takes back the last part, down to the start of
  the turn. An illegal or malformed play or part is refused with the reason; ``legal``
  lists the legal plays (those starting with the typed part). A roll that cannot be
  played is announced and passes.
* ``confirm> `` once the typed parts make a whole play: it is shown on the board; Enter
  confirms it ("the move counts once the dice are picked up"), ``undo`` takes back its
  last part. A forced play (the roll's only legal play) goes straight to ``confirm> ``,
  where Enter plays it.
* ``take, drop or beaver> `` when Tabla doubles.
* ``next game> `` between games and ``export> `` at the very end (``export FILE`` writes
  the games as a Jellyfish ``.mat`` file).

Everywhere: ``hint`` (Tabla's top plays, or its cube decision, with equities), ``eval``,
``pip``, ``board``, ``save FILE`` / ``load FILE`` (a game in progress as JSON, with the
parts of a play typed in mid-turn; a bad file is refused in one line and the game goes on), ``export FILE``, ``help``, ``quit``. End of
input and Ctrl-C end the session politely.

Tabla plays at ``--ply`` (see :mod:`engine.search`), decides the cube at ``ply - 1``
before the roll, accepts a resignation when it is worth at least what Tabla expects from
playing on, and judges every decision of the human at the same depths: at the end a
summary lists the equity lost per decision (per cube value in money play, match-winning
chances in a match).
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

import numpy as np

from engine.api import Engine
from engine.dice import Roll, opening_roll
from engine.game import EndReason, GameState
from engine.ids import position_id
from engine.met import default_met
from engine.notation import Play, play_from_steps
from engine.position import GameResult, Position
from eval.board_text import ENGINE, HUMAN, BoardView, render_board
from eval.mat import format_mat
from eval.match import Action, GameRecord, MatchRecord
from eval.play_common import (
    HELP,
    RESIGN_LEVELS,
    RESULT_NAMES,
    Judgement,
    PlayConfig,
    Reloaded,
    SessionEnd,
    split_command,
    why_no_double,
)
from eval.save_file import Loaded, SaveFileError, load_file, snapshot
from eval.typed_turn import TypedTurn
from eval.coach import Coach
from eval.play_input import TypedInput


# --------------------------------------------------------------------------- the session
class PlaySession(Coach, TypedInput):
    """One sitting at the board: money games or a match against the engine."""

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
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            raise SessionEnd("end of input")
        return line.strip()

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
            score=gs.score,
            crawford=gs.crawford,
            on_roll=None if gs.is_over else gs.turn,
            dice=dice if dice is not None else self.dice,
            home=self.config.home,
            note=f"Position ID {position_id(gs.position)}" if position is None and not gs.is_over else "",
        )

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

    def _engine_doubles(self, dec) -> None:
        gs = self.state
        self.state = gs.double()
        new = gs.cube_value * 2
        self.record.actions.append(Action(ENGINE, "double", cube=new))
        self.show_board()
        self.say(f"tabla doubles to {new}.")
        options = ["take", "drop"] + (["beaver"] if self.state.can_beaver() else [])
        values = {"take": dec.double_take, "drop": dec.double_drop}
        if "beaver" in options and dec.double_beaver is not None:
            values["beaver"] = dec.double_beaver
        prompt = ("take, drop or beaver> " if "beaver" in options else "take or drop> ")
        while True:
            cmd, arg = split_command(self.ask(prompt))
            if cmd in ("take", "t", "accept"):
                choice = "take"
            elif cmd in ("drop", "pass", "p", "reject"):
                choice = "drop"
            elif cmd in ("beaver", "b") and "beaver" in options:
                choice = "beaver"
            elif cmd == "hint":
                self.say(self._response_hint(values, dec.mwc))
                continue
            elif self._common(cmd, arg, saving=False):
                continue
            else:
                self.say(f"Answer {', '.join(options[:-1])} or {options[-1]} (or hint).")
                continue
            break
        best = min(values, key=values.get)  # the doubler's value: the responder minimises it
        self._judge("response", f"tabla doubled to {new}", choice, best, values[choice] - values[best])
        if choice == "drop":
            self.record.actions.append(Action(HUMAN, "drop"))
            self.state = self.state.drop()
            self.say(f"You drop: tabla wins {self.state.points} point{'s' if self.state.points != 1 else ''}.")
            return
        if choice == "take":
            self.record.actions.append(Action(HUMAN, "take", cube=new))
            self.state = self.state.take()
            self.say(f"You take: the cube is at {new}, on your side.")
            return
        self.record.actions.append(Action(HUMAN, "beaver", cube=new * 2))
        self.state = self.state.beaver()
        self.say(f"You beaver: the cube goes to {new * 2} and stays on your side.")
        # tabla keeps playing for the beavered cube when that beats giving up 2 cubes
        if dec.double_beaver is not None and dec.double_beaver >= -2.0:
            self.record.actions.append(Action(ENGINE, "take", cube=new * 2))
            self.state = self.state.take()
            self.say("tabla takes the beaver.")
        else:
            self.record.actions.append(Action(ENGINE, "drop"))
            self.state = self.state.drop()
            self.say(f"tabla drops the beaver: you win {self.state.points} points.")

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
            elif not self._common(cmd, arg):
                self.say(f"Unknown command {cmd!r}: press Enter to roll, or type help.")

    def _human_doubles(self) -> None:
        dec = self._judge_cube(doubled=True)  # from the human's side: dec.take is tabla's answer
        gs = self.state
        new = gs.cube_value * 2
        self.state = gs.double()
        self.record.actions.append(Action(HUMAN, "double", cube=new))
        self.say(f"You double to {new}.")
        if dec.beaver and self.state.can_beaver():
            self.record.actions.append(Action(ENGINE, "beaver", cube=new * 2))
            self.state = self.state.beaver()
            self.say(f"tabla beavers: the cube goes to {new * 2} and stays on tabla's side.")
            values = {"take": dec.double_beaver, "drop": -2.0}
            while True:
                cmd, arg = split_command(self.ask("take or drop the beaver> "))
                if cmd in ("take", "t", "drop", "pass", "p"):
                    break
                if cmd == "hint":
                    best = max(values, key=values.get)
                    self.say(f"tabla's view: you should {best} (take {values['take']:+.3f}, drop -2.000 per cube)")
                elif not self._common(cmd, arg, saving=False):
                    self.say("Answer take or drop.")
            choice = "take" if cmd in ("take", "t") else "drop"
            best = max(values, key=values.get)
            self._judge("response", f"tabla beavered to {new * 2}", choice, best, values[best] - values[choice])
            if choice == "take":
                self.record.actions.append(Action(HUMAN, "take", cube=new * 2))
                self.state = self.state.take()
                self.say(f"You take the beaver: the cube is at {new * 2}.")
            else:
                self.record.actions.append(Action(HUMAN, "drop"))
                self.state = self.state.drop()
                self.say(f"You drop the beaver: tabla wins {self.state.points} points.")
            return
        if dec.take:
            self.record.actions.append(Action(ENGINE, "take", cube=new))
            self.state = self.state.take()
            self.say(f"tabla takes: the cube is at {new}, on tabla's side.")
        else:
            self.record.actions.append(Action(ENGINE, "drop"))
            self.state = self.state.drop()
            self.say(f"tabla drops: you win {self.state.points} point{'s' if self.state.points != 1 else ''}.")

    def _human_resigns(self, arg: str) -> None:
        level = RESIGN_LEVELS.get(arg.lower())
        if level is None:
            self.say("Resign single, gammon or backgammon.")
            return
        gs = self.state
        offer = gs.resign(level)
        points = gs.points_of(level)
        ev = self.engine.eval(gs.position, self.config.cube_ply, gs.cube_state())
        if gs.is_money:
            resign_value = -points / gs.cube_value
        else:
            met = self.engine.met or default_met()
            away_h, away_e = gs.match_length - gs.score[HUMAN], gs.match_length - gs.score[ENGINE]
            resign_value = 1.0 - met.mwc_after_game(away_e - points, away_h, gs.crawford or gs.post_crawford)
        # tabla accepts when the resignation gives it at least its expected value
        if resign_value <= ev.cubeful_equity + 1e-9:
            self.state = offer.accept_resignation()
            self.say(f"You offer to resign {RESULT_NAMES[level]}; tabla accepts.")
        else:
            self.state = offer.reject_resignation()
            self.say(f"You offer to resign {RESULT_NAMES[level]}; tabla refuses and plays on.")

    # ----------------------------------------------------------------- common commands
    def _common(self, cmd: str, arg: str, saving: bool = True) -> bool:
        """Commands available at every prompt; False when ``cmd`` is not one of them."""
        if cmd in ("help", "?", "h"):
            self.say(HELP)
        elif cmd == "board":
            self._show_typed()
        elif cmd == "pip":
            typed = self.typed is not None and bool(self.typed.steps)
            pos = self.typed.current if typed else self.view().position
            me, them = pos.pips()
            lead = them - me
            rel = f"you lead by {lead}" if lead > 0 else f"you trail by {-lead}" if lead < 0 else "even"
            after = f" after {self.typed.text}" if typed else ""
            self.say(f"Pip count{after}: you {me}, tabla {them} ({rel}).")
        elif cmd == "eval":
            self.say(self._eval_text())
        elif cmd == "save":
            if not saving:
                self.say("Answer the cube first, then save.")
            elif not arg:
                self.say("Usage: save FILE")
            else:
                self._save(arg)
        elif cmd == "load":
            if not saving:
                self.say("Answer the cube first, then load.")
            elif not arg:
                self.say("Usage: load FILE")
            else:
                self._load(arg)
        elif cmd == "export":
            self._export(arg)
        elif cmd in ("quit", "exit", "q"):
            raise SessionEnd("quit")
        else:
            return False
        return True

    def _save(self, path: str) -> None:
        partial = self.typed.parts if self.typed is not None and self.state.turn == HUMAN and self.dice else ()
        data = snapshot(self.state, self.config, dice=self.dice, rng=self.rng, games=self.games,
                        current=self.record, judgements=self.judgements, move=self.move, partial=partial)
        try:
            Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            self.say(f"Cannot save to {path}: {exc.strerror or exc}.")
            return
        typed = f" (with your moves typed so far, {self.typed.text})" if partial else ""
        self.say(f"Game saved to {path}{typed}.")

    def _load(self, path: str) -> None:
        try:
            loaded = load_file(path, self.config)
        except SaveFileError as exc:
            self.say(f"Cannot load: {exc}. The game goes on.")
            return
        self.load(loaded)
        self.say(f"Game loaded from {path}.")
        raise Reloaded()

    def _match_record(self) -> MatchRecord:
        score = self.state.final_score() if self.state.is_over else self.state.score
        return MatchRecord(names=self.config.names, match_length=self.config.match_length,
                           games=list(self.games), score=score)

    def _export(self, path: str) -> None:
        if not path:
            self.say("Usage: export FILE.mat")
            return
        if not self.games:
            self.say("No finished game to export yet.")
            return
        try:
            Path(path).write_text(format_mat(self._match_record()), encoding="ascii")
        except OSError as exc:
            self.say(f"Cannot write {path}: {exc.strerror or exc}.")
            return
        self.say(f"{len(self.games)} game{'s' if len(self.games) != 1 else ''} exported to {path}.")

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
            self.say(f"Money so far: you {final[HUMAN] - final[ENGINE]:+d} after {len(self.games)} game"
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

