"""Drive Debian's GNU Backgammon (``gnubg -t``) from tests: the IDs it ends up with."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

GNUBG = shutil.which("gnubg") or ("/usr/games/gnubg" if os.path.exists("/usr/games/gnubg") else None)


def gnubg_ids(*commands: str) -> tuple[str, str] | None:
    """Run commands in a fresh gnubg; the last Position ID and Match ID it printed, or
    None when gnubg refused the input."""
    script = "\n".join(commands) + "\n"
    run = subprocess.run([GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=60)
    out = run.stdout + run.stderr
    if re.search(r"Not a valid|Illegal|invalid", out, re.IGNORECASE):
        return None
    pids = re.findall(r"Position ID:\s*(\S+)", out)
    mids = re.findall(r"Match ID\s*:\s*(\S+)", out)
    if not pids or not mids:
        return None
    return pids[-1], mids[-1]
