"""The cube and resignations in ``tabla play``: Tabla's doubles and the human's answer
(take, drop, beaver), the human's doubles and Tabla's answer (beaver included), and the
human's offers to resign, judged by Tabla's equity."""
from __future__ import annotations

from engine.met import default_met
from eval.board_text import ENGINE, HUMAN
from eval.match import Action
from eval.play_common import RESIGN_LEVELS, RESULT_NAMES, split_command


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


class CubeTalk:
    """Doubles, takes, drops, beavers and resignations; mixed into :class:`eval.play.PlaySession`."""

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
            elif cmd in ("beaver", "b"):
                self.say(f"You cannot beaver: {self._why_no_beaver()}. Answer take or drop.")
                continue
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
            self._answer(HUMAN, "drop")
            self.say(f"You drop: tabla wins {_points(self.state.points)}.")
        elif choice == "take":
            self._answer(HUMAN, "take", new)
            self.say(f"You take: the cube is at {new}, on your side.")
        else:
            self._answer(HUMAN, "beaver", new * 2)
            self.say(f"You beaver: the cube goes to {new * 2} and stays on your side.")
            # tabla keeps playing for the beavered cube when that beats giving up 2 cubes
            if dec.double_beaver is not None and dec.double_beaver >= -2.0:
                self._answer(ENGINE, "take", new * 2)
                self.say("tabla takes the beaver.")
            else:
                self._answer(ENGINE, "drop")
                self.say(f"tabla drops the beaver: you win {_points(self.state.points)}.")

    def _why_no_beaver(self) -> str:
        """Why the doubled human may not beaver (:meth:`GameState.can_beaver` is False)."""
        gs = self.state
        if not gs.is_money:
            return "beavers are for money games only"
        if not gs.options.beavers:
            return "beavers are off (start tabla play with --beavers to allow them)"
        return f"the cube would pass its maximum ({gs.options.max_cube})"

    def _answer(self, player: int, kind: str, cube: int = 0) -> None:
        """Record and make ``player``'s answer to the double on the table."""
        self.record.actions.append(Action(player, kind, cube=cube))
        self.state = {"take": self.state.take, "drop": self.state.drop, "beaver": self.state.beaver}[kind]()

    def _human_doubles(self) -> None:
        dec = self._judge_cube(doubled=True)  # from the human's side: dec.take is tabla's answer
        new = self.state.cube_value * 2
        self.state = self.state.double()
        self.record.actions.append(Action(HUMAN, "double", cube=new))
        self.say(f"You double to {new}.")
        if dec.beaver and self.state.can_beaver():
            self._answer(ENGINE, "beaver", new * 2)
            self.say(f"tabla beavers: the cube goes to {new * 2} and stays on tabla's side.")
            self._beaver_answer(dec, new * 2)
        elif dec.take:
            self._answer(ENGINE, "take", new)
            self.say(f"tabla takes: the cube is at {new}, on tabla's side.")
        else:
            self._answer(ENGINE, "drop")
            self.say(f"tabla drops: you win {_points(self.state.points)}.")

    def _beaver_answer(self, dec, cube: int) -> None:
        """The human doubled and tabla beavered: take (play on for ``cube``) or drop."""
        values = {"take": dec.double_beaver, "drop": -2.0}
        best = max(values, key=values.get)
        while True:
            cmd, arg = split_command(self.ask("take or drop the beaver> "))
            if cmd in ("take", "t", "drop", "pass", "p"):
                break
            if cmd == "hint":
                self.say(f"tabla's view: you should {best} (take {values['take']:+.3f}, drop -2.000 per cube)")
            elif not self._common(cmd, arg, saving=False):
                self.say("Answer take or drop.")
        choice = "take" if cmd in ("take", "t") else "drop"
        self._judge("response", f"tabla beavered to {cube}", choice, best, values[best] - values[choice])
        if choice == "take":
            self._answer(HUMAN, "take", cube)
            self.say(f"You take the beaver: the cube is at {cube}.")
        else:
            self._answer(HUMAN, "drop")
            self.say(f"You drop the beaver: tabla wins {_points(self.state.points)}.")

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
