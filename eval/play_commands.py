"""The commands of ``tabla play`` that every prompt knows: help, board, pip, eval, the
session's settings, save, load, export and quit (which offers to save a game in progress)."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from eval.board_text import HUMAN
from eval.mat import format_mat
from eval.match import MatchRecord
from eval.play_common import HELP, Reloaded, SessionEnd, split_command
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
        elif cmd == "set":
            self._set(arg)
        elif cmd in ("quit", "exit", "q"):
            self._quit(saving)
        else:
            return False
        return True

    def _quit(self, saving: bool) -> None:
        """``quit``: at once between games; in mid-game only when asked again, with the
        offer to save the game first (raises :class:`SessionEnd`, or returns to play on)."""
        if self.state is None or self.state.is_over:
            raise SessionEnd("quit")
        save = "save FILE to save it and quit, " if saving else ""
        self.say(f"The game is not over: type {save}quit again to quit without saving, or press Enter to play on.")
        while True:
            cmd, arg = split_command(self.ask("quit> "))
            if cmd in ("quit", "exit", "q", "yes", "y"):
                raise SessionEnd("quit")
            if cmd in ("", "no", "n"):
                self.say("The game goes on.")
                return
            if cmd == "save" and saving and arg:
                if self._save(arg):
                    raise SessionEnd("quit")
            elif cmd == "save" and saving:
                self.say("Usage: save FILE")
            else:
                self.say(f"Type {save}quit, or press Enter to play on."
                         + ("" if saving else " (Answer the double before saving.)"))

    def _set(self, arg: str) -> None:
        """``set autoconfirm on|off``."""
        name, _, value = arg.lower().partition(" ")
        value = value.strip()
        if name in ("autoconfirm", "auto-confirm") and value in ("on", "off"):
            self.config = replace(self.config, auto_confirm=value == "on")
        elif name or value:
            self.say("Usage: set autoconfirm on|off")
            return
        on = self.config.auto_confirm
        self.say(f"Auto-confirm is {'on: a complete play counts at once' if on else 'off: Enter confirms each play'}.")

    def _pip_text(self) -> str:
        typed = self.typed is not None and bool(self.typed.steps)
        pos = self.typed.current if typed else self.view().position
        me, them = pos.pips()
        lead = them - me
        rel = f"you lead by {lead}" if lead > 0 else f"you trail by {-lead}" if lead < 0 else "even"
        after = f" after {self.typed.text}" if typed else ""
        return f"Pip count{after}: you {me}, tabla {them} ({rel})."

    def _save(self, path: str) -> bool:
        """Save the game to ``path``; False (said why) when it cannot be written."""
        partial = self.typed.parts if self.typed is not None and self.state.turn == HUMAN and self.dice else ()
        data = snapshot(self.state, self.config, dice=self.dice, rng=self.rng, games=self.games,
                        current=self.record, judgements=self.judgements, move=self.move, partial=partial)
        try:
            Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            self.say(f"Cannot save to {path}: {exc.strerror or exc}.")
            return False
        typed = f" (with your moves typed so far, {self.typed.text})" if partial else ""
        self.say(f"Game saved to {path}{typed}.")
        return True

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
