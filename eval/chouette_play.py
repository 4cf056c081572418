"""``tabla play --chouette N``: a person in one seat of a chouette, bots in the others.

The person is ``you`` (seat 0); the bots are ``P2`` ... ``PN``. The initial roll seats
everyone (:func:`engine.chouette.seat_players`); the games are played by the chouette
driver (:func:`eval.chouette.play_chouette_game`), this module being the person's seat
and the onlooker that prints what happens. The board is drawn from the person's side
(box or team). Before each decision the person sees who is in the box, who is captain,
and the opinions the other members gave. The prompts:

* ``box> `` (you are in the box, the cube is yours to turn): Enter rolls, ``double``.
* ``captain> `` (you are captain, the team may double): the members' votes are shown;
  Enter rolls, ``double`` proposes the team double (played only if every member agrees).
* ``team double? yes/no> `` (you are a team member): your vote; Enter is no.
* ``move 5-4> `` (box or captain): your play in standard notation (``8/5 6/5``).
* ``opinion 5-4> `` (team member): the play you propose; Enter gives none.
* ``take, pass or beaver> `` / ``take or pass> ``: a double (or beaver) to answer; as a
  team member you answer the box on your own: pass and you pay the current stake and
  sit out the rest of the game.
* ``next game> `` between games: Enter plays on, ``quit`` stops.

Everywhere: ``board``, ``pip``, ``legal`` (at a move prompt), ``ledger``, ``help``,
``quit``. End of input ends the session politely; the final ledger is printed.
"""
from __future__ import annotations

import sys
from typing import Mapping, Sequence, TextIO

import numpy as np

from engine.chouette import BOX, TEAM, Answer, Chouette, ChouetteGame, CubeEvent, dice_thrower, seat_players
from engine.cube import CubeState
from engine.dice import Roll
from engine.game import EndReason, GameOptions
from engine.notation import AmbiguousPlayError, IllegalPlayError, NotationError, legal_plays, parse_play
from engine.position import Position
from eval.board_text import ENGINE, HUMAN, BoardView, render_board
from eval.bots import Bot
from eval.chouette import BotSeat, ChouetteGameRecord, ChouetteRun, Listener, Role, Seat, play_chouette_game
from eval.chouette_report import table
from eval.match import DiceSource
from eval.play_common import LineConsole, SessionEnd, split_command

YOU = 0

HELP = """Commands:
  Enter / roll      roll (at box> or captain>)
  double            offer the cube (box), or propose the team double (captain)
  yes / no          your vote on a team double (team member)
  8/5 6/5           a play in standard notation: bar/22, 6/off, 13/7*, 8/4(2)
  Enter             at opinion>: no opinion
  take / pass / beaver   answer a double
  legal             the legal plays of the roll
  board, pip        the board, the pip counts
  ledger            everyone's points so far
  quit              end the session"""

_KIND = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class TerminalChouette(LineConsole, Seat, Listener):
    """The person's seat and the table's commentary, on a text terminal."""

    label = "you"

    def __init__(self, bots: Sequence[Bot], rng: np.random.Generator, options: GameOptions = GameOptions(),
                 stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, home: str = "right", bot_text: str = "") -> None:
        self.rng = rng
        self.options = options
        self.inp = stdin
        self.out = stdout
        self.home = home
        self.bot_text = bot_text
        self.labels = ("you",) + tuple(f"P{i + 2}" for i in range(len(bots)))
        self.seats: list[Seat] = [self] + [BotSeat(b, label) for b, label in zip(bots, self.labels[1:])]
        self.game: ChouetteGame | None = None
        self.session: Chouette | None = None
        self.dice: tuple[int, int] | None = None

    # ----------------------------------------------------------------- I/O
    def name(self, seat: int) -> str:
        return self.labels[seat]

    @property
    def my_side(self) -> int:
        return BOX if self.game.box == YOU else TEAM

    def lineup_text(self, game: ChouetteGame | None = None) -> str:
        g = game or self.game
        team = ", ".join(self.name(m) + ("" if m in g.active else " (out)") for m in g.lineup.team)
        captain = self.name(g.captain) if g.active else "nobody"
        return f"Box: {self.name(g.box)}. Captain: {captain}. Team line: {team}."

    def show_board(self) -> None:
        g = self.game
        s = g.state
        side = self.my_side
        pos = s.position if s.turn == side else s.position.flip()

        def mine(owner: int | None) -> int | None:  # BOX / TEAM -> the board's HUMAN / ENGINE
            return None if owner is None else (HUMAN if owner == side else ENGINE)

        others = "box " + self.name(g.box) if side == TEAM else "team " + "+".join(self.name(m) for m in g.active)
        mine_name = "you (box)" if side == BOX else "team " + "+".join(self.name(m) for m in g.active)
        total = self.session.ledger[YOU] if self.session else 0
        view = BoardView(position=pos, names=(mine_name, others), cube_value=s.cube_value, cube_owner=mine(s.cube_owner),
                         score=(total, -total if side == BOX else self.session.ledger[g.box]),
                         on_roll=None if s.is_over else mine(s.turn), dice=self.dice, home=self.home,
                         note=self.lineup_text())
        self.say(render_board(view))

    def common(self, cmd: str, arg: str, roll: Roll | None = None, position: Position | None = None) -> bool:
        """Commands available at every prompt; False when ``cmd`` is not one of them."""
        if cmd in ("help", "?", "h"):
            self.say(HELP)
        elif cmd == "board":
            self.show_board()
        elif cmd == "pip":
            s = self.game.state
            mine, theirs = s.position.pips() if s.turn == self.my_side else s.position.flip().pips()
            self.say(f"Pip count: your side {mine}, the other side {theirs}.")
        elif cmd in ("legal", "moves") and roll is not None:
            self.say("Legal plays: " + ", ".join(p.text for p in legal_plays(position, roll)))
        elif cmd == "ledger":
            self.say(self.ledger_text())
        elif cmd in ("quit", "exit", "q"):
            raise SessionEnd("quit")
        else:
            return False
        return True

    def ledger_text(self) -> str:
        totals = self.session.ledger if self.session else (0,) * len(self.labels)
        return "Ledger: " + ", ".join(f"{self.name(p)} {t:+d}" for p, t in enumerate(totals))

    # ----------------------------------------------------------------- the person's seat
    def choose_play(self, board: np.ndarray, dice: tuple[int, int], state: CubeState, role: Role,
                    opinions: Mapping[int, str]) -> np.ndarray | None:
        roll = Roll.of(*dice)
        position = Position.from_array(board)
        plays = legal_plays(position, roll)
        self.dice = (roll.high, roll.low)
        self.show_board()
        if opinions:
            self.say("Opinions: " + "; ".join(f"{self.name(m)}: {t}" for m, t in opinions.items()) + ".")
        member = role is Role.MEMBER
        who = f"The captain {self.name(self.game.captain)} rolls" if member else "You roll"
        if len(plays) == 1:
            only = "no legal move" if not plays[0].moves else f"one legal play, {plays[0].text}"
            self.say(f"{who} {roll.high}-{roll.low}: there is {only}.")
            return np.array(plays[0].result.board, np.int8)
        self.say(f"{who} {roll.high}-{roll.low}. " + ("Type the play you propose, or Enter for none."
                                                       if member else f"Type your play, e.g. {plays[0].text}."))
        prompt = f"{'opinion' if member else 'move'} {roll.high}-{roll.low}> "
        while True:
            line = self.ask(prompt)
            cmd, arg = split_command(line)
            if not line:
                if member:
                    return None
                continue
            if self.common(cmd, arg, roll, position):
                continue
            try:
                play = parse_play(position, roll, line)
            except AmbiguousPlayError as exc:
                self.say(f"Ambiguous: {exc}")
                continue
            except (NotationError, IllegalPlayError) as exc:
                self.say(f"Illegal play: {exc}. Type legal to list the legal plays.")
                continue
            return np.array(play.result.board, np.int8)

    def wants_double(self, board: np.ndarray, state: CubeState, role: Role, votes: Mapping[int, bool]) -> bool:
        self.dice = None
        self.show_board()
        if votes:
            self.say("Votes: " + "; ".join(f"{self.name(m)} {'would double' if v else 'would not double'}"
                                           for m, v in votes.items()) + ".")
        if role is Role.MEMBER:
            self.say(f"The team may double to {state.value * 2}: your vote (a team double must be unanimous).")
            while True:
                cmd, arg = split_command(self.ask("team double? yes/no> "))
                if cmd in ("yes", "y", "double", "d"):
                    return True
                if cmd in ("", "no", "n"):
                    return False
                if not self.common(cmd, arg):
                    self.say("Answer yes or no.")
        prompt = "box> " if role is Role.BOX else "captain> "
        self.say("Your turn: press Enter to roll, or type double" +
                 (" (every member must agree)." if role is Role.CAPTAIN else "."))
        while True:
            cmd, arg = split_command(self.ask(prompt))
            if cmd in ("", "roll", "r"):
                return False
            if cmd in ("double", "d"):
                against = [self.name(m) for m, v in votes.items() if not v]
                if against:
                    self.say(f"No team double: {', '.join(against)} would not double (it must be unanimous).")
                return True
            if not self.common(cmd, arg):
                self.say(f"Unknown command {cmd!r}: press Enter to roll, or type help.")

    def answer_double(self, board: np.ndarray, state: CubeState, beaver_allowed: bool) -> Answer:
        options = ["take", "pass"] + (["beaver"] if beaver_allowed else [])
        self.dice = None
        self.show_board()
        on_own = " on your own" if self.game.box != YOU else ""
        self.say(f"Answer{on_own}: take and play for {state.value * 2}, or pass and pay {state.value}.")
        return self._answer(options, "take, pass or beaver> " if beaver_allowed else "take or pass> ")

    def accept_beaver(self, board: np.ndarray, state: CubeState) -> bool:
        self.say(f"Beavered: play on for {state.value * 4}, or pass and pay {state.value * 2}.")
        return self._answer(["take", "pass"], "take or pass> ") is Answer.TAKE

    def _answer(self, options: list[str], prompt: str) -> Answer:
        words = {"take": Answer.TAKE, "t": Answer.TAKE, "pass": Answer.PASS, "p": Answer.PASS, "drop": Answer.PASS,
                 "beaver": Answer.BEAVER, "b": Answer.BEAVER}
        while True:
            cmd, arg = split_command(self.ask(prompt))
            if cmd in words and words[cmd].value in options:
                return words[cmd]
            if not self.common(cmd, arg):
                self.say(f"Answer {', '.join(options[:-1])} or {options[-1]}.")

    # ----------------------------------------------------------------- commentary
    def game_started(self, record: ChouetteGameRecord, game: ChouetteGame) -> None:
        self.game = game
        self.dice = None
        first = "the box" if record.first == BOX else "the team"
        box_die, captain_die = record.opening if record.first == BOX else record.opening[::-1]
        self.say(f"\nGame {record.number}. {self.lineup_text(game)}")
        self.say(f"Opening roll: box {box_die}, captain {captain_die}: {first} plays first with "
                 f"{record.opening[0]}-{record.opening[1]}.")
        if game.state.cube_value > 1:
            self.say(f"Automatic double: every member plays for {game.state.cube_value}.")

    def cube_actions(self, game: ChouetteGame, events: Sequence[CubeEvent]) -> None:
        self.game = game
        doublers = [e for e in events if e.action == "double"]
        if doublers:
            if doublers[0].player != game.box:
                who = "The team doubles"
            else:
                who = "You (box) double" if game.box == YOU else f"{self.name(game.box)} (box) doubles"
            self.say(f"{who} to {doublers[0].cube}.")
        for e in events:
            if e.action == "double":
                continue
            name = ("You" if e.player == YOU else self.name(e.player)) + (" (box)" if e.player == game.box else "")
            s = "" if e.player == YOU else "s"
            if e.action == "pass":
                each = " each member" if e.player == game.box else ""
                self.say(f"{name} pass{'es' if s else ''} and pay{s}{each} {e.cube}.")
            else:
                self.say(f"{name} {'take' if e.action == 'take' else 'beaver'}{s}: stake {e.cube}.")
        if game.active and not game.is_over and YOU not in game.active and YOU != game.box \
                and any(e.player == YOU for e in events):
            self.say("You are out of this game; the others play on.")

    def played(self, game: ChouetteGame, side: int, dice: tuple[int, int], text: str,
               opinions: Mapping[int, str]) -> None:
        before = self.game
        self.game = game
        who = f"{self.name(before.box)} (box)" if side == BOX else f"The team (captain {self.name(before.captain)})"
        mover_is_me = (side == BOX and before.box == YOU) or (side == TEAM and before.active and before.captain == YOU)
        self.say(f"You play {text}." if mover_is_me else f"{who} rolls {dice[0]}-{dice[1]} and plays {text}.")
        others = {m: t for m, t in opinions.items() if t != text}
        if others:
            self.say("Other opinions: " + "; ".join(f"{self.name(m)}: {t}" for m, t in others.items()) + ".")
        self.dice = None

    def game_over(self, record: ChouetteGameRecord) -> None:
        g = record.game
        s = g.state
        self.game = g
        if s.end_reason is EndReason.DROPPED:
            how = "the cube was passed"
        else:
            winner = f"the box {self.name(g.box)}" if s.winner == BOX else "the team"
            how = f"{winner} wins {_KIND[int(s.result)]}"
        pts = g.points()
        self.say(f"Game {record.number} over: {how}. Points: " +
                 ", ".join(f"{self.name(p)} {pts[p]:+d}" for p in sorted(pts)) + ".")
        nxt = g.next_lineup()
        cap, new = self.name(g.lineup.captain), self.name(nxt.captain)
        is_new = "are" if nxt.captain == YOU else "is"
        if g.captain_won:
            takes = "take" if g.lineup.captain == YOU else "takes"
            self.say(f"The captain ({cap}) won: {cap} {takes} the box; {new} {is_new} the new captain.")
        else:
            stays = "stay" if g.box == YOU else "stays"
            self.say(f"The captain ({cap}) lost: {self.name(g.box)} {stays} in the box; {new} {is_new} the new captain.")

    # ----------------------------------------------------------------- session
    def run(self) -> int:
        """Seat everyone and play until the person stops; returns the exit status."""
        games: list[ChouetteGameRecord] = []
        opts = [n for n, on in (("Jacoby rule", self.options.jacoby), ("beavers", self.options.beavers)) if on]
        self.say(f"Tabla chouette: {len(self.labels)} players, you and {', '.join(self.labels[1:])}"
                 f"{' (' + self.bot_text + ')' if self.bot_text else ''}; money games"
                 f"{' (' + ', '.join(opts) + ')' if opts else ''}. Type help for the commands.")
        seating = seat_players(len(self.labels), dice_thrower(self.rng))
        for i, rnd in enumerate(seating.rounds):
            head = "Initial roll" if i == 0 else "Tie, rolling again"
            self.say(f"{head}: " + ", ".join(f"{self.name(p)} {d}" for p, d in rnd) + ".")
        self.session = Chouette.seated(seating, self.options)
        dice = DiceSource(self.rng)
        try:
            while True:
                rec = play_chouette_game(self.session, self.seats, dice, len(games) + 1, self)
                self.session = self.session.record(rec.game)
                games.append(rec)
                self.say(self.ledger_text())
                while True:
                    cmd, arg = split_command(self.ask("next game> "))
                    if cmd in ("", "next", "n", "y", "yes"):
                        break
                    if cmd in ("quit", "exit", "q", "no"):
                        raise SessionEnd("quit")
                    if cmd == "ledger":
                        self.say(self.ledger_text())
                    elif cmd in ("help", "?", "h"):
                        self.say("Press Enter for the next game, or type quit.")
                    else:
                        self.say("Press Enter for the next game, or type quit.")
        except SessionEnd as end:
            self.say(f"\n({end}) Goodbye.")
        if games:
            run = ChouetteRun(self.labels, seating, self.options, games, self.session)
            self.say(table(run))
        return 0
