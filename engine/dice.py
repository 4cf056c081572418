"""Dice: the 21 distinct rolls with their weights, and every seeded source of rolls (the
opening roll, one at a time or for many games at once, and the duplicate-dice streams)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, order=True)
class Roll:
    """Two dice, stored high die first; a double has ``high == low``."""

    high: int
    low: int

    def __post_init__(self) -> None:
        if not (1 <= self.low <= self.high <= 6):
            raise ValueError(f"dice must be 1-6 with high >= low, got {self.high}-{self.low}")

    @classmethod
    def of(cls, a: int, b: int) -> "Roll":
        """A roll from two dice in any order."""
        if not (1 <= a <= 6 and 1 <= b <= 6):
            raise ValueError(f"dice must be 1-6, got {a} and {b}")
        return cls(max(a, b), min(a, b))

    @classmethod
    def parse(cls, text: str) -> "Roll":
        """``"31"``, ``"3-1"``, ``"3 1"`` or ``"3,1"``."""
        digits = [c for c in text if not c in " -,/"]
        if len(digits) != 2 or not all(c in "123456" for c in digits):
            raise ValueError(f"dice must be two digits 1-6, like 31 or 3-1: {text!r}")
        return cls.of(int(digits[0]), int(digits[1]))

    @property
    def is_double(self) -> bool:
        return self.high == self.low

    @property
    def weight(self) -> int:
        """Ways out of 36 to roll it: 1 for a double, 2 otherwise."""
        return 1 if self.is_double else 2

    def dice(self) -> tuple[int, ...]:
        """The dice to play: four for a double."""
        return (self.high,) * 4 if self.is_double else (self.high, self.low)

    def __str__(self) -> str:
        return f"{self.high}{self.low}"


ALL_ROLLS: tuple[Roll, ...] = tuple(Roll(h, l) for h in range(1, 7) for l in range(1, h + 1))
"""The 21 distinct rolls."""

ROLL_WEIGHTS = np.array([r.weight / 36.0 for r in ALL_ROLLS])
"""Probability of each of :data:`ALL_ROLLS`; sums to 1."""

ROLL_ARRAY = np.array([(r.high, r.low) for r in ALL_ROLLS], dtype=np.int8)


def roll_dice(rng: np.random.Generator) -> Roll:
    """Two random dice."""
    a, b = rng.integers(1, 7, size=2)
    return Roll.of(int(a), int(b))


def opening_roll(rng: np.random.Generator) -> tuple[Roll, int, int]:
    """Each side rolls one die until they differ.

    Returns the roll to play, the number of ties thrown first (for automatic doubles),
    and which side plays first: 0 if the first side's die was higher, else 1.
    """
    ties = 0
    while True:
        a, b = (int(x) for x in rng.integers(1, 7, size=2))
        if a != b:
            return Roll.of(a, b), ties, 0 if a > b else 1
        ties += 1


def opening_rolls(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` opening rolls at once, (n, 2) int64: two different dice each (the first die
    is the first side's; ties are thrown again)."""
    d = rng.integers(1, 7, size=(n, 2))
    same = d[:, 0] == d[:, 1]
    while same.any():
        d[same] = rng.integers(1, 7, size=(int(same.sum()), 2))
        same = d[:, 0] == d[:, 1]
    return d


STREAM_CHUNK = 256
"""Rolls per chunk of :func:`roll_stream`."""


def roll_stream(seed: int, stream: int, chunk: int) -> np.ndarray:
    """Rolls ``chunk * 256`` to ``chunk * 256 + 255`` of the seeded stream ``stream``, as
    (256, 2) int64 (not sorted); chunk 0 starts with an opening roll (two different dice).
    The same ``(seed, stream)`` always gives the same rolls: duplicate dice."""
    rng = np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32, stream, chunk])
    rolls = rng.integers(1, 7, size=(STREAM_CHUNK, 2))
    if chunk == 0:
        while rolls[0, 0] == rolls[0, 1]:
            rolls[0] = rng.integers(1, 7, size=2)
    return rolls
