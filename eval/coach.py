"""The coach of ``tabla play``: Tabla's hints (plays and cube), its judgement of every
decision of the human, and the summary of the errors."""
from __future__ import annotations

import logging

from engine.dice import Roll
from engine.evaluator import PROB_NAMES
from engine.ids import position_id
from engine.notation import Play, legal_plays
from eval.board_text import HUMAN
from eval.play_common import ERROR_THRESHOLD, Judgement, pct, why_no_double


log = logging.getLogger(__name__)


class Coach:
    """Hints and judgements; mixed into :class:`eval.play.PlaySession`."""

    def _response_hint(self, values: dict[str, float], mwc: bool) -> str:
        sign = (lambda v: 1.0 - v) if mwc else (lambda v: -v)
        fmt = pct if mwc else (lambda v: f"{v:+.3f}")
        best = min(values, key=values.get)
        parts = ", ".join(f"{k} {fmt(sign(v))}" for k, v in values.items())
        unit = "your match-winning chances" if mwc else "your equity per cube"
        return f"tabla's view: you should {best} ({unit}: {parts})"

    def _cube_decision(self):
        gs = self.state
        return self.engine.cube(gs.position, self.config.cube_ply, gs.cube_state()).decision

    @staticmethod
    def _if_doubled(dec) -> float:
        return min(dec.double_drop, dec.double_beaver if dec.beaver else dec.double_take)

    def _cube_hint(self) -> str:
        gs = self.state
        if not gs.can_double():
            return f"No cube decision: {why_no_double(gs)}. Roll."
        dec = self._cube_decision()
        fmt = pct if dec.mwc else (lambda v: f"{v:+.3f}")
        rows = [f"no double {fmt(dec.no_double)}", f"double/take {fmt(dec.double_take)}",
                f"double/drop {fmt(dec.double_drop)}"]
        if dec.double_beaver is not None:
            rows.append(f"double/beaver {fmt(dec.double_beaver)}")
        action = {"no_double": "no double", "double_take": "double, take", "double_drop": "double, drop",
                  "too_good": "too good to double", "no_double_beaver": "no double (beaver)",
                  "double_beaver": "double, beaver"}.get(dec.action.value, dec.action.value)
        unit = "match-winning chances" if dec.mwc else "equity per cube"
        return f"Cube decision: {action} ({unit}: {', '.join(rows)})"

    def _judge_cube(self, doubled: bool):
        """Record the double / no double decision; returns tabla's cube decision."""
        dec = self._cube_decision()
        value = {True: self._if_doubled(dec), False: dec.no_double}
        best = max(value, key=value.get)
        name = {True: "double", False: "no double"}
        self._judge("cube", f"cube at {self.state.cube_value}", name[doubled], name[best], value[best] - value[doubled])
        return dec

    def _ranked(self, roll: Roll):
        key = (self.state.position, roll)
        if self._ranking_key != key:
            n = len(legal_plays(self.state.position, roll))
            self._ranking = self.engine.best(self.state.position, roll, self.config.ply, n, self.state.cube_state())
            self._ranking_key = key
        return self._ranking

    def _value_text(self, info, mwc: bool) -> str:
        v = info.cubeful_equity if info.cubeful_equity is not None else info.equity
        return pct(v) if mwc else f"{v:+.3f}"

    def _play_hint(self, roll: Roll, top: int = 5) -> str:
        res = self._ranked(roll)
        unit = "match-winning chances" if res.mwc else "equity"
        lines = [f"tabla's top plays for {roll.high}-{roll.low} ({unit}, ply {res.ply}):"]
        for i, p in enumerate(res.plays[:top], 1):
            diff = "" if i == 1 else (f" ({100 * p.difference:+.1f}%)" if res.mwc else f" ({p.difference:+.3f})")
            lines.append(f"  {i}. {p.play or '(no move)':<24} {self._value_text(p, res.mwc)}{diff}")
        turn = self.typed
        if turn is not None and turn.steps and turn.roll == roll:
            ids = {position_id(p.next_position) for p in turn.continuations()}
            found = next(((i, p) for i, p in enumerate(res.plays, 1) if p.position_id in ids), None)
            if found is not None:
                rank, best = found
                lines.append(f"  Best play starting with your {turn.text}: {best.play} "
                             f"(number {rank}, {self._value_text(best, res.mwc)})")
        return "\n".join(lines)

    def _judge_play(self, roll: Roll, play: Play) -> None:
        res = self._ranked(roll)
        if len(res.plays) < 2:
            return
        pid = position_id(play.next_position)
        chosen = next((p for p in res.plays if p.position_id == pid), None)
        if chosen is None:  # cannot happen: every legal play is ranked
            log.warning("play %s not found among the ranked plays", play.text)
            return
        best = res.plays[0]
        self._judge("play", f"roll {roll.high}-{roll.low}", play.text, best.play, -chosen.difference)

    def _judge(self, kind: str, situation: str, chosen: str, best: str, loss: float) -> None:
        self.judgements.append(Judgement(self.record.number, self.move + 1, kind, situation, chosen, best,
                                         max(0.0, float(loss))))

    def _eval_text(self) -> str:
        gs = self.state
        ev = self.engine.eval(gs.position, self.config.cube_ply, gs.cube_state())
        p = [ev.probabilities[k] for k in PROB_NAMES]
        eq, cub = ev.equity, ev.cubeful_equity
        if gs.turn != HUMAN:
            p = [1.0 - p[0], p[3], p[4], p[1], p[2]]
            eq = -eq
            cub = 1.0 - cub if ev.mwc else -cub
        w, wg, wb, lg, lb = p
        cub_text = f"match-winning chances {pct(cub)}" if ev.mwc else f"cubeful equity {cub:+.3f}"
        return (f"Your chances (tabla's evaluation, ply {ev.ply}, before the roll): win {pct(w)} "
                f"(gammon {pct(wg)}, backgammon {pct(wb)}), lose {pct(1 - w)} (gammon {pct(lg)}, "
                f"backgammon {pct(lb)}); cubeless equity {eq:+.3f}, {cub_text}.")

    def summary(self) -> str:
        """The player's decisions as Tabla judged them."""
        js = self.judgements
        mwc = not self.money
        unit = "MWC" if mwc else "equity per cube"
        fmt = (lambda v: f"{100 * v:.2f}%") if mwc else (lambda v: f"{v:.3f}")
        errors = [j for j in js if j.loss > ERROR_THRESHOLD]
        kinds = {k: sum(1 for j in js if j.kind == k) for k in ("play", "cube", "response")}
        lines = [
            f"Your decisions as tabla judged them (plays at ply {self.config.ply}, cube at ply {self.config.cube_ply}):",
            f"  {len(js)} decision{'s' if len(js) != 1 else ''} ({kinds['play']} plays, {kinds['cube']} cube, {kinds['response']} take/drop), "
            f"{len(errors)} error{'s' if len(errors) != 1 else ''}, {unit} lost: {fmt(sum(j.loss for j in js))} in total, "
            f"{fmt(sum(j.loss for j in js) / len(js)) if js else fmt(0.0)} per decision.",
        ]
        for j in sorted(errors, key=lambda j: -j.loss)[:5]:
            lines.append(f"  game {j.game}, move {j.move}, {j.situation}: you chose {j.chosen or '(no move)'}, "
                         f"tabla prefers {j.best or '(no move)'} (-{fmt(j.loss)})")
        return "\n".join(lines)
