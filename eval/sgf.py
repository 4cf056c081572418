"""GNU Backgammon's ``.sgf`` match files (``save match`` / ``export match sgf``), read.

An SGF collection holds one game tree per game: ``(;FF[4]GM[6]...MI[length:7][game:0]
[ws:0][bs:0]PW[white]PB[black]RE[W+2]...;W[31hefe];B[double];W[take];B[64...])``. The
root node's ``MI`` gives the match length (0 = money), the game number and the score
(``ws``: white = player 0, the left column of a ``.mat``; ``bs``: black); ``RU``
carries the rules (``Jacoby``, ``Crawford``); ``RE`` the result (``W+2``, ``B+1R`` when
the loser resigned). A move node ``W[...]`` / ``B[...]`` is ``double``, ``take``,
``drop`` or the two dice followed by one letter pair per checker moved: ``a``-``x`` are
the points 1-24 counted from White's 1-point for White (``a`` = 1) and from Black's for
Black (``a`` = 24), ``y`` the bar and ``z`` off. A ``double`` while a double is pending
is a beaver. Analysis properties (``A``, ``DA``, marks ``BM``/``DO``, luck ``LU``,
comments ...) are read past; :func:`read_sgf_marks` returns GNU Backgammon's marks of the
checker plays, for comparisons.

:func:`parse_sgf` returns the same :class:`~eval.mat.MatMatch` as :func:`eval.mat.parse_mat`;
malformed text raises :class:`SgfFormatError` naming the line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from eval.mat import MatAction, MatGame, MatMatch

ROOT_PROPERTIES = {"FF", "GM", "CA", "AP", "MI", "PW", "PB", "WR", "BR", "DT", "EV", "RO", "PC", "AN", "GC", "US",
                   "SO", "RU", "RE", "GS", "CO", "CV", "CP", "PL", "AE", "AB", "AW", "DI", "C", "VA", "TM", "OT",
                   "ON", "GN", "CR", "SZ"}
NODE_PROPERTIES = {"W", "B", "A", "DA", "BM", "DO", "BC", "DC", "LU", "GB", "GW", "C", "MR", "CR", "IT", "TE", "N",
                   "AE", "AB", "AW", "PL", "DI", "CV", "CP", "TM", "WL", "BL"}


class SgfFormatError(ValueError):
    """Text that is not a readable GNU Backgammon .sgf match file."""


@dataclass
class _Node:
    props: dict[str, list[str]]
    line: int


def _tokenize(text: str) -> list[list[_Node]]:
    """The game trees of a collection, each as its main line of nodes."""
    if "\x00" in text or "\ufffd" in text:
        line = 1 + text[: max(text.find("\x00"), text.find("\ufffd"))].count("\n")
        raise SgfFormatError(f"line {line}: binary data, not an .sgf file")
    games: list[list[_Node]] = []
    i, n, line = 0, len(text), 1
    depth = 0
    current: list[_Node] | None = None
    node: _Node | None = None

    def err(msg: str) -> SgfFormatError:
        return SgfFormatError(f"line {line}: {msg}")

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif c == "(":
            depth += 1
            if depth == 1:
                current = []
                games.append(current)
            i += 1
        elif c == ")":
            if depth == 0:
                raise err("')' without '('")
            depth -= 1
            node = None
            i += 1
        elif c == ";":
            if depth == 0:
                raise err("a node outside a game tree")
            node = _Node({}, line)
            if depth == 1:
                current.append(node)
            i += 1
        elif c.isupper():
            m = re.compile(r"[A-Z]+").match(text, i)
            name = m.group(0)
            i = m.end()
            if node is None:
                raise err(f"property {name} outside a node")
            values = []
            while True:
                while i < n and text[i] in " \t\r\n":
                    line += text[i] == "\n"
                    i += 1
                if i >= n or text[i] != "[":
                    break
                j = i + 1
                buf = []
                while j < n and text[j] != "]":
                    if text[j] == "\\" and j + 1 < n:
                        j += 1
                    line += text[j] == "\n"
                    buf.append(text[j])
                    j += 1
                if j >= n:
                    raise err(f"unterminated value of {name} (truncated file?)")
                values.append("".join(buf))
                i = j + 1
            if not values:
                raise err(f"property {name} without a value")
            node.props.setdefault(name, []).extend(values)
        else:
            raise err(f"unexpected {c!r}")
    if depth:
        raise err("the file ends inside a game tree (truncated file?)")
    return games


def _point(ch: str, player: int, where: str) -> int:
    if ch == "y":
        return 25
    if ch == "z":
        return 0
    if not "a" <= ch <= "x":
        raise SgfFormatError(f"{where}: bad point letter {ch!r}")
    k = ord(ch) - ord("a")
    return k + 1 if player == 0 else 24 - k


def _move(value: str, player: int, line: int) -> MatAction:
    where = f"line {line}"
    v = value.strip().lower()
    if v in ("double", "take", "drop"):
        return MatAction(player, v, line=line)
    m = re.fullmatch(r"([1-6])([1-6])((?:[a-z]{2}){0,4})", v)
    if not m:
        raise SgfFormatError(f"{where}: bad move {value!r}")
    letters = m.group(3)
    steps = tuple((_point(letters[k], player, where), _point(letters[k + 1], player, where))
                  for k in range(0, len(letters), 2))
    return MatAction(player, "move", (int(m.group(1)), int(m.group(2))), steps, line=line)


def _root_info(node: _Node) -> tuple[int, int, tuple[int, int]]:
    mi = {}
    for item in node.props.get("MI", []):
        k, _, v = item.partition(":")
        mi[k.strip()] = v.strip()
    try:
        length = int(mi.get("length", "0"))
        number = int(mi.get("game", "0")) + 1
        score = (int(mi.get("ws", "0")), int(mi.get("bs", "0")))
    except ValueError:
        raise SgfFormatError(f"line {node.line}: bad MI property {node.props.get('MI')}") from None
    return length, number, score


def _parse(text: str) -> tuple[MatMatch, list[list[str]]]:
    trees = _tokenize(text)
    if not trees:
        raise SgfFormatError("line 1: no game tree")
    match: MatMatch | None = None
    marks: list[list[str]] = []
    for tree in trees:
        if not tree:
            raise SgfFormatError("a game tree without nodes")
        root = tree[0]
        if root.props.get("GM", ["6"])[0] != "6":
            raise SgfFormatError(f"line {root.line}: GM[{root.props['GM'][0]}] is not backgammon (GM[6])")
        unknown = set(root.props) - ROOT_PROPERTIES - NODE_PROPERTIES
        if unknown:
            raise SgfFormatError(f"line {root.line}: unknown property {sorted(unknown)[0]}")
        length, number, score = _root_info(root)
        if match is None:
            rules = " ".join(root.props.get("RU", [])).lower()
            match = MatMatch(length, jacoby=length == 0 and "jacoby" in rules)
        elif length != match.match_length:
            raise SgfFormatError(f"line {root.line}: game {number} has match length {length}, not {match.match_length}")
        names = (root.props.get("PW", ["White"])[0], root.props.get("PB", ["Black"])[0])
        game = MatGame(number, names, score, line=root.line)
        game_marks: list[str] = []
        for nd in tree[1:]:
            unknown = set(nd.props) - NODE_PROPERTIES - ROOT_PROPERTIES
            if unknown:
                raise SgfFormatError(f"line {nd.line}: unknown property {sorted(unknown)[0]}")
            who = [k for k in ("W", "B") if k in nd.props]
            if not who:
                continue
            if len(who) == 2:
                raise SgfFormatError(f"line {nd.line}: a node with moves of both players")
            a = _move(nd.props[who[0]][0], 0 if who[0] == "W" else 1, nd.line)
            game.actions.append(a)
            if a.kind == "move":
                bm = nd.props.get("BM", [""])[0]
                game_marks.append("very bad" if bm == "2" else "bad" if "BM" in nd.props
                                  else "doubtful" if "DO" in nd.props else "")
        re_ = root.props.get("RE", [""])[0].strip()
        if re_:
            m = re.fullmatch(r"([WB])\+(\d+)(R?)", re_)
            if not m:
                raise SgfFormatError(f"line {root.line}: bad result RE[{re_}]")
            winner = 0 if m.group(1) == "W" else 1
            game.actions.append(MatAction(winner, "wins", value=int(m.group(2)), line=root.line))
        match.games.append(game)
        marks.append(game_marks)
    return match, marks


def parse_sgf(text: str) -> MatMatch:
    """Read ``.sgf`` text written by GNU Backgammon (see the module docstring)."""
    return _parse(text)[0]


def _read(path: str | Path) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SgfFormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    return data.decode("utf-8", errors="replace")


def read_sgf(path: str | Path) -> MatMatch:
    """:func:`parse_sgf` of a file."""
    return parse_sgf(_read(path))


def read_sgf_marks(path: str | Path) -> list[list[str]]:
    """GNU Backgammon's mark of each checker play, per game, in order (``""``, doubtful,
    bad, very bad), from an analysed ``.sgf``."""
    return _parse(_read(path))[1]
