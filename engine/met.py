"""Match equity tables: the chance of winning a match from a score.

The shipped table is Kazaross-XG2 (``engine/data/Kazaross-XG2.xml``, copied with its
copyright notice from GNU Backgammon's distribution), covering matches up to 25 points.
Scores are given *away*: the points each side still needs. A side with ``away <= 0`` has
won the match.

* ``pre[i, j]``: match-winning chance (MWC) of a side needing ``i + 1`` points against a
  side needing ``j + 1``, before the Crawford game has been played. An entry with one side
  at 1-away is the MWC at the start of the Crawford game.
* ``post[j]``: MWC of the trailer needing ``j + 1`` against a leader at 1-away, after the
  Crawford game (post-Crawford).
"""
from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_MET_PATH = Path(__file__).parent / "data" / "Kazaross-XG2.xml"
MAX_MATCH_LENGTH = 25


class METError(ValueError):
    """A match equity table file that cannot be read, or a score outside the table."""


@dataclass(frozen=True, eq=False)
class MatchEquityTable:
    """A pre-Crawford square table and a post-Crawford row, as described in the module doc."""

    name: str
    pre: np.ndarray
    post: np.ndarray

    @property
    def length(self) -> int:
        return int(self.pre.shape[0])

    def mwc(self, away_me: int, away_opp: int, post_crawford: bool = False) -> float:
        """MWC of the side needing ``away_me`` against one needing ``away_opp``.

        ``post_crawford`` applies when one side is at 1-away and the Crawford game has been
        played; otherwise a 1-away entry is the MWC at the start of the Crawford game.
        """
        if away_me <= 0:
            return 1.0 if away_opp > 0 else 0.5
        if away_opp <= 0:
            return 0.0
        if away_me > self.length or away_opp > self.length:
            raise METError(f"score {away_me}-away / {away_opp}-away is outside the {self.length}-point table")
        if post_crawford and (away_me == 1 or away_opp == 1):
            if away_me == 1 and away_opp == 1:
                return 0.5
            if away_opp == 1:
                return float(self.post[away_me - 1])
            return 1.0 - float(self.post[away_opp - 1])
        return float(self.pre[away_me - 1, away_opp - 1])

    def mwc_after_game(self, away_me: int, away_opp: int, crawford_done: bool) -> float:
        """MWC at the start of the next game from a score reached by the game that ended.

        ``crawford_done``: the game that ended was the Crawford game or post-Crawford, so a
        1-away score is post-Crawford; otherwise reaching 1-away starts the Crawford game.
        """
        return self.mwc(away_me, away_opp, post_crawford=crawford_done)


def _rows(elem: ET.Element) -> list[list[float]]:
    return [[float(me.text) for me in row.findall("me")] for row in elem.findall("row")]


def load_met(path: str | Path | None = None) -> MatchEquityTable:
    """Read a GNU Backgammon XML match equity table with explicit tables."""
    p = Path(path) if path is not None else DEFAULT_MET_PATH
    try:
        root = ET.parse(p).getroot()
    except (OSError, ET.ParseError) as exc:
        raise METError(f"cannot read match equity table {p}: {exc}") from exc
    pre_el = root.find("pre-crawford-table")
    post_el = root.find("post-crawford-table")
    if pre_el is None or post_el is None or pre_el.get("type") != "explicit":
        raise METError(f"{p} has no explicit pre- and post-Crawford tables")
    try:
        pre = np.array(_rows(pre_el), dtype=np.float64)
        post_rows = _rows(post_el)
        post = np.array(post_rows[0], dtype=np.float64)
    except (TypeError, ValueError, IndexError) as exc:
        raise METError(f"{p}: malformed table entries ({exc})") from exc
    n = pre.shape[0]
    if pre.ndim != 2 or pre.shape != (n, n) or post.shape[0] < n:
        raise METError(f"{p}: tables have inconsistent sizes {pre.shape} / {post.shape}")
    if np.any(pre < 0) or np.any(pre > 1) or np.any(post < 0) or np.any(post > 1):
        raise METError(f"{p}: entries outside [0, 1]")
    name_el = root.find("info/name")
    name = name_el.text.strip() if name_el is not None and name_el.text else p.stem
    return MatchEquityTable(name=name, pre=pre, post=post[:n])


@functools.lru_cache(maxsize=1)
def default_met() -> MatchEquityTable:
    """The shipped Kazaross-XG2 table (loaded once)."""
    return load_met(None)
