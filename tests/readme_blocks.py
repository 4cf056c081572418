"""The fenced blocks of README.md: the set-up commands, the shell examples, the Python
examples.

* The set-up block is the first ``bash`` block: one command a line, run by ``.ci/run``
  exactly as written, in order, in a fresh virtual environment
  (``python tests/readme_blocks.py setup`` prints them).
* A shell example is a ``console`` block: ``$ command`` lines, each followed by the
  output it prints (``tests/test_readme.py`` runs them and compares).
* A Python example is a ``python`` block written as a doctest (``>>>`` lines).
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.M | re.S)


@dataclass(frozen=True)
class ShellExample:
    command: str
    output: str
    line: int
    """Line of the README where the command stands."""


def blocks(text: str | None = None) -> list[tuple[str, str, int]]:
    """Every fenced block as ``(language, body, line of its first body line)``."""
    text = README.read_text(encoding="utf-8") if text is None else text
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start(2)) + 1) for m in _FENCE.finditer(text)]


def setup_commands(text: str | None = None) -> list[str]:
    """The commands of the set-up block (the first ``bash`` block)."""
    body = next(b for lang, b, _ in blocks(text) if lang == "bash")
    return [line for line in body.splitlines() if line.strip()]


def shell_examples(text: str | None = None) -> list[ShellExample]:
    """Every ``$ command`` of the ``console`` blocks with the output shown under it."""
    out: list[ShellExample] = []
    for lang, body, first in blocks(text):
        if lang != "console":
            continue
        cmd, start, lines = None, 0, []
        for i, line in enumerate(body.splitlines()):
            if line.startswith("$ "):
                if cmd is not None:
                    out.append(ShellExample(cmd, "\n".join(lines), first + start))
                cmd, start, lines = line[2:], i, []
            elif cmd is not None:
                lines.append(line)
        if cmd is not None:
            out.append(ShellExample(cmd, "\n".join(lines), first + start))
    return out


def python_examples(text: str | None = None) -> list[tuple[str, int]]:
    """The bodies of the ``python`` blocks with their first line."""
    return [(body, line) for lang, body, line in blocks(text) if lang == "python"]


if __name__ == "__main__" and sys.argv[1:] == ["setup"]:
    print("\n".join(setup_commands()))
