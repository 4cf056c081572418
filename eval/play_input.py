"""The human's checker play in ``tabla play``: typing a play in parts, undo, confirm."""
from __future__ import annotations

import logging
from dataclasses import replace

from engine.dice import Roll
from engine.notation import AmbiguousPlayError, IllegalPlayError, NotationError, format_play, point_name
from engine.position import Position
from eval.board_text import ENGINE, HUMAN, render_board
from eval.play_common import split_command
from eval.typed_turn import TypedTurn, dice_words


log = logging.getLogger(__name__)


class TypedInput:
    """The human's turn at the ``move`` and ``confirm`` prompts; mixed into
    :class:`eval.play.PlaySession`."""

    def _human_play(self) -> None:
        gs = self.state
        dice = self.dice
        roll = Roll.of(*dice)
        restored, self._restored_parts = self._restored_parts, ()
        turn = TypedTurn.start(gs.position, roll)
        plays = list(turn.legal)
        if not plays[0].moves:
            self.show_board()
            self.say(f"You roll {dice[0]}-{dice[1]} and cannot move.")
            self._apply_play(HUMAN, plays[0], dice)
            return
        if len(plays) == 1:
            self.typed = TypedTurn.of_play(gs.position, roll, plays[0])
            self._show_typed(f"Forced play: {plays[0].text}")
            forced = f"You roll {dice[0]}-{dice[1]}: your only legal play is {plays[0].text} (forced)"
            if self.config.auto_confirm:
                self.say(f"{forced}: played.")
            else:
                self.say(f"{forced}. Press Enter to play it.")
                self._confirm(forced=True)
            self._apply_play(HUMAN, plays[0], dice)
            return
        if restored:
            try:
                turn = TypedTurn.replay(gs.position, roll, restored)
            except IllegalPlayError as exc:  # read_snapshot validated them: cannot happen
                log.warning("saved partial play dropped: %s", exc)
        self.typed = turn
        self._show_typed()
        if turn.steps:
            self.say(self._typed_status())
        else:
            self.say(f"You roll {dice[0]}-{dice[1]}. Type your play, e.g. {plays[0].text}, "
                     f"or part of it, e.g. {plays[0].moves[0]}.")
        while True:
            turn = self.typed
            play = turn.complete
            if play is not None and self.config.auto_confirm and not turn.can_continue:
                self.say(f"You play {play.text}.")
                self._judge_play(roll, play)
                self._apply_play(HUMAN, play, dice)
                return
            if play is not None:
                self.say(f"You play {play.text}. Press Enter to confirm, or type undo"
                         + (f"; or go on moving, e.g. {self._next_example()}." if turn.can_continue else "."))
                answer = self._confirm()
                if answer == "yes":
                    self._judge_play(roll, play)
                    self._apply_play(HUMAN, play, dice)
                    return
                if answer == "undo":
                    self._take_back()
                continue
            line = self.ask(f"move {dice[0]}-{dice[1]}> ")
            cmd, arg = split_command(line)
            if cmd == "hint":
                self.say(self._play_hint(roll))
                continue
            if cmd in ("legal", "moves"):
                self.say(self._legal_text())
                continue
            if cmd == "resign":
                self._human_resigns(arg)
                if self.state.is_over:
                    return
                continue
            if cmd in ("undo", "u"):
                if not turn.parts:
                    self.say("Nothing to undo: type your play.")
                else:
                    self._take_back()
                continue
            if cmd in ("double", "roll", "r", "d"):
                self.say("You have rolled already: type your play.")
                continue
            if self._common(cmd, arg):
                continue
            if not line:
                continue
            self._type_part(line)

    def _type_part(self, line: str) -> None:
        """Add a typed part (a whole play, or the beginning of one) to the turn."""
        try:
            self.typed = self.typed.add(line)
        except AmbiguousPlayError as exc:
            self.say(f"Ambiguous: {exc}")
            return
        except (NotationError, IllegalPlayError) as exc:
            self.say(f"Illegal play: {exc}. Type legal to list the legal plays.")
            return
        self._show_typed()
        if self.typed.complete is None:
            self.say(self._typed_status())

    def _take_back(self) -> None:
        """Undo the last typed part and show where the turn stands."""
        turn = self.typed
        part = turn.part_text()
        self.typed = turn.undo()
        self._show_typed()
        if not self.typed.parts:
            whole = turn.complete is not None  # the whole play typed on one line
            self.say("Play taken back." if whole else f"Took back {part}: back to the start of your turn.")
        else:
            self.say(f"Took back {part}. {self._typed_status()}")

    def _typed_status(self) -> str:
        turn = self.typed
        return f"You have played {turn.text}; still to play: {dice_words(turn.remaining)}."

    def _show_typed(self, note: str = "") -> None:
        """The board with the moves typed so far (the turn's start when none)."""
        turn = self.typed
        if turn is None or not turn.steps:
            self.show_board()
            return
        note = note or f"Typed: {turn.text}" + ("" if turn.complete else f"; to play: {dice_words(turn.remaining)}")
        self.say(render_board(replace(self.view(turn.current), note=note)))

    def _legal_text(self) -> str:
        turn = self.typed
        if not turn.steps:
            return f"Legal plays ({len(turn.legal)}): " + ", ".join(p.text for p in turn.legal)
        plays = turn.continuations()
        return f"Legal plays starting with {turn.text} ({len(plays)}): " + ", ".join(p.text for p in plays)

    def _next_example(self) -> str:
        f, t, _ = next(iter(self.typed.tree.edges[self.typed.state]))
        return f"{point_name(f)}/{point_name(t)}"

    def _confirm(self, forced: bool = False) -> str:
        """``yes``: Enter keeps the play; ``undo``: take back its last part; ``more``: a
        move typed that goes on with a play that can still go on (see :meth:`_type_part`)."""
        while True:
            line = self.ask("confirm> ")
            cmd, arg = split_command(line)
            if cmd in ("", "ok", "y", "yes", "confirm"):
                return "yes"
            if cmd in ("undo", "u", "n", "no"):
                if forced:
                    self.say("The play is forced: press Enter to play it.")
                    continue
                return "undo"
            if cmd == "hint":
                self.say(self._play_hint(self.typed.roll))
            elif cmd in ("legal", "moves"):
                self.say(self._legal_text() if not forced else f"The only legal play is {self.typed.text}.")
            elif self._common(cmd, arg):
                pass
            elif not forced and self.typed.can_continue:
                before = self.typed
                self._type_part(line)
                if self.typed is not before:
                    return "more"
            else:
                self.say("Press Enter to confirm the play, or type undo to take it back."
                         if not forced else "Press Enter to play the forced play.")

    def _why_no_undo(self) -> str:
        """``undo`` before the roll: the human's last play has counted since tabla rolled."""
        actions = self.record.actions
        mine = [i for i, a in enumerate(actions) if a.player == HUMAN and a.kind == "move"]
        if not mine:
            return "Nothing to undo: you have not played yet in this game."
        last = actions[mine[-1]]
        text = format_play(Position(last.before), last.steps) or "your pass"
        roll = next((a.dice for a in actions[mine[-1]:] if a.player == ENGINE and a.kind == "move"), None)
        since = f"tabla has rolled {roll[0]}-{roll[1]} since, and " if roll else ""
        how = "(set autoconfirm off to be asked)" if self.config.auto_confirm else "before it counts"
        return (f"Too late to undo {text}: {since}a play counts once it is confirmed; type undo at "
                f"the confirm prompt to take a play back {how}.")
