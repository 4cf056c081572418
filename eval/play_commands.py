"""The commands of ``tabla play`` that every prompt knows: help, board, pip, eval, the
session's settings, save, load, export and quit (which offers to save a game in progress)."""
from __future__ import annotations

import json
from pathlib import Path

from eval.board_text import HUMAN
from eval.mat import format_mat
from eval.match import MatchRecord
from eval.play_common import HELP, Reloaded, SessionEnd
from eval.save_file import SaveFileError, load_file, snapshot


class SessionCommands:
    """Commands available at every prompt; mixed into :class:`eval.play.PlaySession`."""

    def _common(self, cmd: str, arg: str, saving: bool = True) -> bool:
        """Run ``cmd`` if it is one of the common commands; False when it is not.

        ``saving`` is False while a double waits for its answer (no save or load then).
        """
        if cmd in ("help", "?", "h"):
            self.say(HELP)
        elif cmd == "board":
            self._show_typed()
        elif cmd == "pip":
            self.say(self._pip_text())
        elif cmd == "eval":
            self.say(self._eval_text())
        elif cmd in ("save", "load"):
            if not saving:
                self.say(f"Answer the cube first, then {cmd}.")
            elif not arg:
                self.say(f"Usage: {cmd} FILE")
            else:
                (self._save if cmd == "save" else self._load)(arg)
        elif cmd == "export":
            self._export(arg)
        elif cmd in ("quit", "exit", "q"):
            raise SessionEnd("quit")
        else:
            return False
        return True

    def _pip_text(self) -> str:
        typed = self.typed is not None and bool(self.typed.steps)
        pos = self.typed.current if typed else self.view().position
        me, them = pos.pips()
        lead = them - me
        rel = f"you lead by {lead}" if lead > 0 else f"you trail by {-lead}" if lead < 0 else "even"
        after = f" after {self.typed.text}" if typed else ""
        return f"Pip count{after}: you {me}, tabla {them} ({rel})."

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
