"""Compare ``tabla analyse`` with GNU Backgammon's analysis of the same session, end to end.

    python -m scripts.compare_gnubg_analysis [--games 20] [--seed 17] [--gnubg-ply 2]
        [--ply 2] [--cube-ply 1] [--workdir DIR] [--json]

1. ``tabla arena pubeval gnubg:ply=0 --cube --games N --export session.mat``;
2. ``gnubg -t``: ``set jacoby off``, analysis at ``--gnubg-ply`` for plays and cubes,
   ``import mat``, ``analyse match``, ``show statistics match``, ``save match`` (.sgf
   with its marks);
3. ``tabla analyse session.mat --ply P --cube-ply C --json``;
4. figures: each side's overall error rate (mEMG per decision) by both, whether both rank
   the players the same, and the share of the checker plays gnubg marks very bad that
   Tabla marks bad or very bad. Exit status 1 when a requirement of issue 17 fails (every
   decision graded; pubeval's rate within +-40% of gnubg's; same ranking; >= 80%).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.sgf import read_sgf_marks

ROOT = Path(__file__).resolve().parents[1]


def _gnubg() -> str:
    path = shutil.which("gnubg") or "/usr/games/gnubg"
    if not Path(path).exists():
        raise SystemExit("compare_gnubg_analysis: GNU Backgammon (gnubg) is not installed")
    return path


def gnubg_statistics(text: str) -> dict[str, dict[str, float]]:
    """Per-section rows of ``show statistics match`` (two numbers per row: the players)."""
    sections: dict[str, dict[str, float]] = {}
    current = "header"
    for ln in text.splitlines():
        head = re.match(r"^(Chequerplay|Luck|Cube|Overall) statistics", ln)
        if head:
            current = head.group(1).lower()
            continue
        m = re.match(r"^(Error rate mEMG|Moves marked very bad|Unforced moves|Error total EMG)\D*?"
                     r"(-?\d+(?:\.\d+)?)\D+?(?:\([^)]*\)\s+)?(-?\d+(?:\.\d+)?)", ln)
        if m:
            sections.setdefault(current, {})[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return sections


def run(args: argparse.Namespace) -> dict:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="tabla-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    mat, sgf = work / "session.mat", work / "analysed.sgf"
    t0 = time.time()
    subprocess.run([sys.executable, "-m", "scripts.tabla", "arena", "pubeval", "gnubg:ply=0", "--cube",
                    "--games", str(args.games), "--seed", str(args.seed), "--export", str(mat), "--no-progress"],
                   cwd=ROOT, check=True, capture_output=True)
    t1 = time.time()
    script = (f"set jacoby off\nset analysis chequerplay evaluation plies {args.gnubg_ply}\n"
              f"set analysis cubedecision evaluation plies {args.gnubg_ply}\nimport mat {mat}\nanalyse match\n"
              f"show statistics match\nsave match {sgf}\n")
    g = subprocess.run([_gnubg(), "-t", "-q"], input=script, capture_output=True, text=True, timeout=7200)
    t2 = time.time()
    stats = gnubg_statistics(g.stdout)
    a = subprocess.run([sys.executable, "-m", "scripts.tabla", "analyse", str(mat), "--ply", str(args.ply),
                        "--cube-ply", str(args.cube_ply), "--json"], cwd=ROOT, check=True, capture_output=True,
                       text=True)
    t3 = time.time()
    ours = json.loads(a.stdout)
    marks = read_sgf_marks(sgf)
    plays: dict[int, list[dict]] = {}
    for d in ours["decisions"]:
        if d["kind"] == "play":
            plays.setdefault(d["game"], []).append(d)
    very_bad = agreed = 0
    aligned = all(len(plays.get(i, [])) == len(m) for i, m in enumerate(marks, 1))
    for i, game_marks in enumerate(marks, 1):
        for d, theirs in zip(plays.get(i, []), game_marks):
            if theirs == "very bad":
                very_bad += 1
                agreed += d["mark"] in ("bad", "very bad")
    names = ours["names"]
    g_rate = stats.get("overall", {}).get("Error rate mEMG", (float("nan"),) * 2)
    t_rate = tuple(p["error_rate_memg"] for p in ours["players"])
    pub = names.index("pubeval")
    ratio = t_rate[pub] / abs(g_rate[pub]) if g_rate[pub] else float("nan")
    graded = all(d["graded"] or d["forced"] for d in ours["decisions"] if d["kind"] in ("play", "cube", "take"))
    result = {
        "games": args.games, "names": names,
        "gnubg_error_rate_memg": [abs(x) for x in g_rate], "tabla_error_rate_memg": list(t_rate),
        "gnubg_checker_rate_memg": [abs(x) for x in stats.get("chequerplay", {}).get("Error rate mEMG", (0, 0))],
        "tabla_checker_rate_memg": [p["checker_rate_memg"] for p in ours["players"]],
        "pubeval_rate_ratio": ratio,
        "same_ranking": (t_rate[0] > t_rate[1]) == (abs(g_rate[0]) > abs(g_rate[1])),
        "gnubg_very_bad_plays": very_bad, "tabla_bad_or_very_bad_of_those": agreed,
        "very_bad_agreement": agreed / very_bad if very_bad else float("nan"),
        "moves_aligned": aligned, "every_decision_graded": graded,
        "seconds": {"arena": round(t1 - t0, 1), "gnubg_analysis": round(t2 - t1, 1), "tabla_analysis": round(t3 - t2, 1)},
        "workdir": str(work),
    }
    result["pass"] = bool(graded and aligned and 0.6 <= ratio <= 1.4 and result["same_ranking"]
                          and very_bad and agreed / very_bad >= 0.8)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="compare_gnubg_analysis", description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--gnubg-ply", type=int, default=2, help="gnubg's analysis depth (its plies)")
    p.add_argument("--ply", type=int, default=2, help="tabla analyse --ply")
    p.add_argument("--cube-ply", type=int, default=1, help="tabla analyse --cube-ply")
    p.add_argument("--workdir", help="keep the files here (default: a temporary directory)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    r = run(args)
    if args.json:
        print(json.dumps(r))
    else:
        n = r["names"]
        print(f"{r['games']} games {n[0]} vs {n[1]}; times (s): {r['seconds']}")
        for i in (0, 1):
            print(f"  {n[i]:<14s} error rate mEMG: gnubg {r['gnubg_error_rate_memg'][i]:6.1f}  "
                  f"tabla {r['tabla_error_rate_memg'][i]:6.1f}   (checker plays: gnubg "
                  f"{r['gnubg_checker_rate_memg'][i]:.1f}, tabla {r['tabla_checker_rate_memg'][i]:.1f})")
        print(f"  pubeval rate tabla/gnubg {r['pubeval_rate_ratio']:.2f}; same ranking: {r['same_ranking']}")
        print(f"  gnubg very bad plays {r['gnubg_very_bad_plays']}, marked bad or very bad by tabla "
              f"{r['tabla_bad_or_very_bad_of_those']} ({r['very_bad_agreement']:.0%})")
        print(f"  every decision graded: {r['every_decision_graded']}; moves aligned: {r['moves_aligned']}; "
              f"pass: {r['pass']}")
    return 0 if r["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
