"""Exact bearoff databases: no-contact positions with every checker on its home points.

Two databases, both built by :mod:`engine.bearoff_build` from the project's move generator
(``tabla bearoff build``), indexed by GNU Backgammon's bearoff numbering of a side's six
home-point counts (see :mod:`engine.bearoff_build`):

One-sided, ``bearoff_os.npz`` (shipped in ``engine/data``, 0.8 MB)
    For each of the 54,264 positions of 0-15 checkers on a side's home points:

    * ``dist`` (54264, 32) uint16: P(exactly n rolls to bear off every checker), n = 0..31,
      with the play that minimises the expected number of rolls (as gnubg's one-sided
      database); 15 checkers need at most 30 rolls, so nothing is folded in practice;
    * ``gammon`` (54264, 16) uint16: P(exactly n rolls to bear off the first checker),
      with the play that minimises that expectation; ``n = 0`` for positions with fewer than
      15 checkers (one is already off); entry 15 holds the tail (n >= 15, below 1e-12).

    Fixed point: stored count / 65535; each row sums to exactly 65535 (the largest
    remainders take the rounding units).
Two-sided, ``bearoff_ts.npz`` (built on first use into the user cache dir, about 3 s)
    For both sides with at most 6 checkers on their home points (924 x 924 positions,
    0 checkers = game over), indexed ``[mover, opponent]``:

    * ``win`` (float64): the exact cubeless probability that the side on roll wins with best play
      (backward induction over the 21 rolls; no gammons are possible: 9 or more are off);
    * ``cubeful_centred``, ``cubeful_owned``, ``cubeful_opponent_owns`` (float32): money cubeful
      equity per cube value for the side on roll, before his cube decision, with the cube
      centred, owned by him, owned by the opponent. Method: before each roll a side with
      access to the cube doubles when ``min(DT, 1) > ND`` and the opponent takes when
      ``DT <= 1``, where ``ND`` = the average over the rolls of the best play's value with
      the cube unchanged and ``DT = 2 * E(opponent owns)``; no limit on the cube, no
      Jacoby rule, no beavers (irrelevant: no gammons). ``E = max(ND, min(DT, 1))``.

    Exactness wants 32 bits or more per value (about 5 MB compressed for ``win`` alone),
    while the build takes a few seconds: so it is built, not shipped.

One-sided, wide, ``bearoff_os8.npz`` (built on first use into the user cache dir, about 25 s)
    The same two distributions for the 490,314 positions of 0-15 checkers on a side's points
    1-8, in the same numbering with eight counts: races where the last checkers are one or
    two rolls from home. Home-board positions take their values from the six-point file.

From two one-sided distributions, :func:`one_sided_probs` gives the five probabilities of
a no-contact bear-off for the side on roll (who rolls first): he wins when
``n_me <= n_opp``; he wins a gammon when the opponent, with 15 checkers left, needs at
least as many rolls for his first checker as he needs for all of his. The two sides'
plays are each optimal for their own goal, so this is the usual one-sided approximation
(exact in the two-sided range only through :func:`two_sided_probs`). Backgammons cannot
happen without contact with every checker home.
"""
from __future__ import annotations

import logging
import zlib
from pathlib import Path
from typing import Callable

import numpy as np
from numba import njit

from engine import bearoff_build as bb
from engine import user_cache_dir

log = logging.getLogger("tabla.bearoff")

ONE_SIDED_FILE = "bearoff_os.npz"
TWO_SIDED_FILE = "bearoff_ts.npz"
WIDE_FILE = "bearoff_os8.npz"
WIDE_POINTS = bb.WIDE_POINTS
WIDE_KIND = "one-sided-8"
SHIPPED_DIR = Path(__file__).resolve().parent / "data"
CUBEFUL_NAMES = ("cubeful_centred", "cubeful_owned", "cubeful_opponent_owns")


class BearoffError(ValueError):
    """A position outside a database's range, or a database file that cannot be used."""


def cache_dir() -> Path:
    """Where databases not shipped in the package are built: ``$XDG_CACHE_HOME/tabla/bearoff``."""
    return user_cache_dir() / "bearoff"


# ---------------------------------------------------------------------- files
def one_sided_arrays(raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The stored form of :func:`engine.bearoff_build.build_one_sided`'s output."""
    return {"dist": bb.quantize_rows(raw["dist"]), "gammon": bb.quantize_rows(raw["gammon"])}


def build_arrays(kind: str, progress: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
    """The stored arrays of a database kind ("one-sided", "one-sided-8", "two-sided"), built
    (``progress`` is called with the positions done)."""
    if kind == "two-sided":
        return two_sided_arrays(bb.build_two_sided(progress=progress))
    points = WIDE_POINTS if kind == WIDE_KIND else bb.N_POINTS
    return one_sided_arrays(bb.build_one_sided(progress=progress, points=points))


def two_sided_arrays(raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The stored form of :func:`engine.bearoff_build.build_two_sided`'s output."""
    out = {"win": np.ascontiguousarray(raw["win"], dtype=np.float64)}
    out.update({k: np.ascontiguousarray(raw[k], dtype=np.float32) for k in CUBEFUL_NAMES})
    return out


def write_db(path: Path, arrays: dict[str, np.ndarray], kind: str) -> str:
    """Write one database file with its format version and content digest; returns its sha256."""
    meta = {"kind": np.array(kind), "format_version": np.array(bb.FORMAT_VERSION),
            "digest": np.array(bb.content_digest(arrays)), "zlib_version": np.array(zlib.ZLIB_RUNTIME_VERSION)}
    return bb.write_npz(path, {**arrays, **meta})


def read_db(path: Path, kind: str) -> dict[str, np.ndarray]:
    """Read and check a file written by :func:`write_db` (kind, version, digest)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError) as exc:
        raise BearoffError(f"cannot read bearoff database {path}: {exc}") from exc
    if str(data.pop("kind", np.array(""))[()]) != kind or int(data.pop("format_version", np.array(-1))[()]) != bb.FORMAT_VERSION:
        raise BearoffError(f"{path} is not a {kind} bearoff database of format {bb.FORMAT_VERSION}")
    digest = str(data.pop("digest", np.array(""))[()])
    data.pop("zlib_version", None)
    if bb.content_digest(data) != digest:
        raise BearoffError(f"{path} is corrupt (content digest mismatch)")
    return data


def file_meta(path: Path) -> dict[str, str]:
    """``{"digest", "zlib_version"}`` recorded in a database file: the content digest does
    not depend on zlib; the file's bytes do, through the zlib that wrote it."""
    with np.load(path, allow_pickle=False) as z:
        return {k: str(z[k][()]) for k in ("digest", "zlib_version")}


# ---------------------------------------------------------------------- board analysis
@njit(cache=True)
def _analyse(boards, binom, npts, idx, count):
    """Per board: 1 if every checker of both sides is on its points 1..npts or off (its
    home points for npts = 6; no contact for npts <= 12), else 0; ``idx[i]`` = (mover,
    opponent) indices in the ``npts``-point numbering, or -1; ``count[i]`` = checkers on
    the board of each side."""
    n = boards.shape[0]
    ok_all = np.zeros(n, np.bool_)
    c = np.empty(npts, np.int64)
    for i in range(n):
        b = boards[i]
        ok = True
        for p in range(npts + 1, 26):
            if b[p] > 0:
                ok = False
        for p in range(0, 25 - npts):
            if b[p] < 0:
                ok = False
        if not ok:
            idx[i, 0] = -1
            idx[i, 1] = -1
            continue
        ok_all[i] = True
        for side in range(2):
            t = 0
            for p in range(npts):
                c[p] = max(b[p + 1], 0) if side == 0 else max(-b[24 - p], 0)
                t += c[p]
            idx[i, side] = bb.rank_counts(c, binom)
            count[i, side] = t
    return ok_all


def analyse_wide(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`analyse` for the wide one-sided database (every checker of both sides on its
    points 1-8 or off): ``(in range, indices, checkers)``, indices -1 outside."""
    return _analyse_points(boards, WIDE_POINTS)


def in_one_sided_wide(boards: np.ndarray) -> np.ndarray:
    """(N,) bool: every checker of both sides on its points 1-8 or off (no contact)."""
    return analyse_wide(boards)[0]


def analyse(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(in_one_sided (N,) bool, indices (N, 2) int64, checkers (N, 2) int64)`` of boards
    (N, 26): the database indices of (mover, opponent), -1 outside the one-sided range."""
    return _analyse_points(boards, bb.N_POINTS)


def _analyse_points(boards: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = np.ascontiguousarray(np.atleast_2d(boards), dtype=np.int8)
    idx = np.zeros((b.shape[0], 2), np.int64)
    count = np.zeros((b.shape[0], 2), np.int64)
    ok = _analyse(b, bb._BINOM, points, idx, count)
    return ok, idx, count


def in_one_sided(boards: np.ndarray) -> np.ndarray:
    """(N,) bool: both sides have every checker on their home points or off (no contact)."""
    return analyse(boards)[0]


def in_two_sided(boards: np.ndarray) -> np.ndarray:
    """(N,) bool: :func:`in_one_sided` and at most 6 checkers on the board for each side."""
    home, _, count = analyse(boards)
    return home & (count.max(axis=1) <= bb.TWO_SIDED_CHECKERS)


def counts_index(counts: tuple[int, ...] | np.ndarray) -> int:
    """Database index of six home-point counts (points 1..6)."""
    c = np.asarray(counts, dtype=np.int64)
    if c.shape != (6,) or c.min() < 0 or c.sum() > bb.MAX_CHECKERS:
        raise BearoffError(f"not a one-sided bearoff position: {counts!r}")
    return int(bb.rank_counts(c, bb._BINOM))


# ---------------------------------------------------------------------- the databases
class BearoffDB:
    """The two databases, each loaded (or built, when ``build_missing``) on first use."""

    def __init__(self, one_sided_path: Path, two_sided_path: Path, build_missing: bool = False,
                 wide_path: Path | None = None) -> None:
        self.one_sided_path = Path(one_sided_path)
        self.two_sided_path = Path(two_sided_path)
        self.wide_path = Path(wide_path) if wide_path is not None else self.one_sided_path.with_name(WIDE_FILE)
        self.build_missing = build_missing
        self._os: dict[str, np.ndarray] | None = None
        self._ts: dict[str, np.ndarray] | None = None
        self._wide: dict[str, np.ndarray] | None = None

    @classmethod
    def from_dir(cls, directory: Path) -> "BearoffDB":
        """The files from one directory (as ``tabla bearoff build --out DIR`` writes them)."""
        d = Path(directory)
        return cls(d / ONE_SIDED_FILE, d / TWO_SIDED_FILE, wide_path=d / WIDE_FILE)

    @classmethod
    def default(cls) -> "BearoffDB":
        """The shipped one-sided file (else the cache), the two-sided and wide ones from the cache."""
        shipped = SHIPPED_DIR / ONE_SIDED_FILE
        os_path = shipped if shipped.exists() else cache_dir() / ONE_SIDED_FILE
        return cls(os_path, cache_dir() / TWO_SIDED_FILE, build_missing=True, wide_path=cache_dir() / WIDE_FILE)

    def _load(self, path: Path, kind: str) -> dict[str, np.ndarray]:
        if path.exists() or not self.build_missing:
            if not path.exists():
                raise BearoffError(f"no bearoff database at {path} (run: tabla bearoff build --out {path.parent})")
            try:
                return read_db(path, kind)
            except BearoffError:
                if not self.build_missing:
                    raise
                log.warning("rebuilding the unusable bearoff database %s", path)
        log.info("building the %s bearoff database into %s", kind, path)
        arrays = build_arrays(kind)
        try:
            write_db(path, arrays, kind)
        except OSError as exc:
            log.warning("cannot cache the bearoff database at %s: %s", path, exc)
        return arrays

    @property
    def one_sided(self) -> dict[str, np.ndarray]:
        """``{"dist": (54264, 32) uint16, "gammon": (54264, 16) uint16}``."""
        if self._os is None:
            self._os = self._load(self.one_sided_path, "one-sided")
        return self._os

    @property
    def wide(self) -> dict[str, np.ndarray]:
        """``{"dist": (490314, 32) uint16, "gammon": (490314, 16) uint16}``: points 1-8."""
        if self._wide is None:
            self._wide = self._load(self.wide_path, WIDE_KIND)
        return self._wide

    @property
    def two_sided(self) -> dict[str, np.ndarray]:
        """``{"win" float64, "cubeful_centred", "cubeful_owned", "cubeful_opponent_owns" float32}``, (924, 924)."""
        if self._ts is None:
            self._ts = self._load(self.two_sided_path, "two-sided")
        return self._ts

    # ------------------------------------------------------------------ lookups
    def distributions(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(all-off (.., 32), first-off (.., 16))`` float64 distributions of indices."""
        return _scaled(self.one_sided, index)

    def expected_rolls(self, index: np.ndarray) -> np.ndarray:
        """Mean number of rolls to bear off every checker (from the stored distribution)."""
        return self.distributions(index)[0] @ np.arange(bb.N_ROLLS, dtype=np.float64)

    def wide_distributions(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`distributions` of indices of the wide (points 1-8) database."""
        return _scaled(self.wide, index)

    def _side_rows(self, home: np.ndarray, index: np.ndarray, wide_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One side's distributions: six-point rows where ``home``, wide rows elsewhere."""
        p = np.empty((len(index), bb.N_ROLLS))
        g = np.empty((len(index), bb.N_GAMMON))
        p[home], g[home] = self.distributions(index[home])
        p[~home], g[~home] = self.wide_distributions(wide_index[~home])
        return p, g

    def one_sided_probs(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float64 probabilities for the side on roll from the two sides' one-sided
        distributions; every board must be :func:`in_one_sided_wide` (the six-point
        database serves the boards :func:`in_one_sided`, the wide one the others)."""
        home, idx, _ = analyse(boards)
        if home.all():
            pa, ga = self.distributions(idx[:, 0])
            pb, gb = self.distributions(idx[:, 1])
        else:
            wide, widx, _ = analyse_wide(boards)
            if not wide.all():
                raise BearoffError("one_sided_probs needs every checker of both sides on its points 1-8 or off")
            pa, ga = self._side_rows(home, idx[:, 0], widx[:, 0])
            pb, gb = self._side_rows(home, idx[:, 1], widx[:, 1])
        n = len(idx)
        surv_b = np.cumsum(pb[:, ::-1], axis=1)[:, ::-1]  # P(n_opp >= n)
        first_a = np.zeros((n, bb.N_ROLLS + 1))  # P(first_off >= n), n = 0 .. 32
        first_b = np.zeros((n, bb.N_ROLLS + 1))
        first_a[:, : bb.N_GAMMON] = np.cumsum(ga[:, ::-1], axis=1)[:, ::-1]
        first_b[:, : bb.N_GAMMON] = np.cumsum(gb[:, ::-1], axis=1)[:, ::-1]
        out = np.zeros((n, 5))
        out[:, 0] = np.einsum("ij,ij->i", pa, surv_b)
        # the opponent is gammoned when his first checker needs n_opp1 >= max(n_me, 1) rolls
        gam_b = first_b[:, : bb.N_ROLLS].copy()
        gam_b[:, 0] = first_b[:, 1]
        out[:, 1] = np.einsum("ij,ij->i", pa, gam_b)
        # the side on roll is gammoned when n_me1 > n_opp: he has had n_opp turns by then
        out[:, 3] = np.einsum("ij,ij->i", pb, first_a[:, 1 : bb.N_ROLLS + 1])
        return out

    def _two_sided_index(self, boards: np.ndarray) -> np.ndarray:
        home, idx, count = analyse(boards)
        if not (home & (count.max(axis=1) <= bb.TWO_SIDED_CHECKERS)).all():
            raise BearoffError("two-sided bearoff lookups need both sides home with at most 6 checkers each")
        return idx

    def two_sided_probs(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) float64 exact probabilities for the side on roll (only ``win`` can be > 0)."""
        idx = self._two_sided_index(boards)
        out = np.zeros((len(idx), 5))
        out[:, 0] = self.two_sided["win"][idx[:, 0], idx[:, 1]]
        return out

    def two_sided_cubeful(self, boards: np.ndarray) -> np.ndarray:
        """(N, 3) float64 money cubeful equities per cube value for the side on roll, before
        his cube decision: columns = cube centred, owned by him, owned by the opponent."""
        idx = self._two_sided_index(boards)
        ts = self.two_sided
        return np.stack([ts[k][idx[:, 0], idx[:, 1]] for k in CUBEFUL_NAMES], axis=1)


def _scaled(d: dict[str, np.ndarray], index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The all-off and first-off rows ``index`` of a one-sided file, as probabilities."""
    return d["dist"][index] / bb.SCALE, d["gammon"][index] / bb.SCALE


_db: BearoffDB | None = None


def load(path: Path | str | None = None) -> BearoffDB:
    """Make the databases in directory ``path`` (default: shipped + cache) the module's own."""
    global _db
    _db = BearoffDB.default() if path is None else BearoffDB.from_dir(Path(path))
    return _db


def get_db() -> BearoffDB:
    """The module's databases, :func:`load`-ed with the defaults on first use."""
    return _db if _db is not None else load()


def one_sided_probs(boards: np.ndarray) -> np.ndarray:
    """(N, 5) float64: :meth:`BearoffDB.one_sided_probs` of the module's databases."""
    return get_db().one_sided_probs(boards)


def two_sided_probs(boards: np.ndarray) -> np.ndarray:
    """(N, 5) float64: :meth:`BearoffDB.two_sided_probs` of the module's databases."""
    return get_db().two_sided_probs(boards)


def two_sided_cubeful(boards: np.ndarray) -> np.ndarray:
    """(N, 3) float64: :meth:`BearoffDB.two_sided_cubeful` of the module's databases."""
    return get_db().two_sided_cubeful(boards)
