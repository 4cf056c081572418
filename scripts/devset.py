"""``python -m scripts.devset``: fixed decision sets graded by gnubg-nn 2-ply, for paired
comparisons of models while developing them (gnubg-nn is the grader only, never a label).

    python -m scripts.devset make --source arena --seed 31 --positions 2000 --out devA31.npz
    python -m scripts.devset grade devA31.npz models/tabla.npz run/latest.npz

**Sources** of the decisions (non-forced, each kept with chance 0.3, as ``tabla bench
accuracy`` keeps them; :func:`scripts.bench_accuracy.selfplay_positions`): ``gnubg``, gnubg-nn 0-ply self-play (the bench's positions);
``tabla``, Tabla's 1-ply self-play with ``--model``; ``arena``, Tabla's decisions in games
of Tabla 1-ply (``--model``) against gnubg-nn 0-ply: the positions that decide
``tabla arena`` against gnubg-nn, where a model's error can differ much from the others'.
``make --only crashed`` keeps one class's decisions (drawn in rounds until there are enough).
``make`` grades gnubg-nn 0-ply's six best results of each decision at 2 ply; ``grade``
adds the results the models choose (kept in ``SET.cache.npz`` beside the set) and prints
each model's equity lost per decision × 1000 against the best graded result, overall and
per class, and its paired difference from the first model with a 95% interval.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

SOURCES = ("gnubg", "tabla", "arena")
GRADED = 6


class DevSetError(ValueError):
    """A file that is not a decision set, or a request the tool cannot answer."""


ROUND = 2000
"""Decisions drawn per round when a set keeps one class only."""
MAX_ROUNDS = 50
"""Rounds drawn at most before a one-class set gives up (a class its games rarely reach)."""


def make(source: str, seed: int, n: int, model: str | None, out: Path, only: str | None = None) -> int:
    """Build a set of ``n`` decisions (of class ``only`` if given, drawn in rounds of
    :data:`ROUND` until there are enough) and write it to ``out``; returns the graded results."""
    from engine.movegen import legal_results
    from scripts.bench_accuracy import after_play_equity, gnubg0_rank, report_class, selfplay_positions

    rng = np.random.default_rng(seed)
    if only is None:
        drawn = selfplay_positions(rng, n, source, model)
    else:
        drawn = []
        for _ in range(MAX_ROUNDS):
            drawn += [(b, d) for b, d in selfplay_positions(rng, ROUND, source, model) if report_class(b) == only]
            if len(drawn) >= n:
                break
        else:
            raise DevSetError(f"only {len(drawn)} {only} decisions in {MAX_ROUNDS * ROUND:,} drawn; ask for fewer")
        drawn = drawn[:n]
    boards, dice, keys, eqs = [], [], [], []
    for board, d in drawn:
        children = legal_results(board, *d)
        for i in gnubg0_rank(children)[:GRADED]:
            keys.append(children[i])
            eqs.append(after_play_equity(children[i], 2))
        boards.append(board)
        dice.append(d)
    np.savez_compressed(out, boards=np.array(boards, np.int8), dice=np.array(dice, np.int64),
                        keys=np.array(keys, np.int8), eqs=np.array(eqs, np.float64),
                        meta=np.array(json.dumps({"source": source, "seed": seed, "model": model, "only": only})))
    return len(keys)


def _load(path: Path) -> tuple[np.ndarray, np.ndarray, dict[bytes, float], dict]:
    try:
        with np.load(path, allow_pickle=False) as z:
            boards, dice, keys, eqs, meta = z["boards"], z["dice"], z["keys"], z["eqs"], json.loads(str(z["meta"]))
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise DevSetError(f"{path}: not a decision set ({exc.__class__.__name__}: {exc})") from None
    if boards.ndim != 2 or boards.shape[1] != 26 or dice.shape != (len(boards), 2) or keys.shape != (len(eqs), 26):
        raise DevSetError(f"{path}: not a decision set (arrays of the wrong shape)")
    return boards, dice, {k.tobytes(): float(e) for k, e in zip(keys, eqs)}, meta


def grade(path: Path, models: list[str], ply: int) -> dict:
    """Each model's error on the set (see the module docstring), as a dict."""
    from engine.movegen import legal_results
    from engine.search import Search
    from scripts.bench_accuracy import after_play_equity, report_class
    from scripts.evaluators import load_evaluator

    boards, dice, graded, meta = _load(path)
    cache_path = path.with_name(path.stem + ".cache.npz")
    if cache_path.exists():
        _, _, extra, _ = _load(cache_path)
        graded.update(extra)
    added = 0
    picks: dict[str, list[bytes]] = {}
    for m in models:
        search = Search(load_evaluator(m))
        picks[m] = []
        for board, (d1, d2) in zip(boards, dice):
            r = search.rank_plays(board, int(d1), int(d2), ply=ply)
            key = r.boards[r.best].tobytes()
            if key not in graded:
                graded[key] = after_play_equity(r.boards[r.best].copy(), 2)
                added += 1
            picks[m].append(key)
    if added:
        keys = list(graded)
        np.savez_compressed(cache_path, boards=boards, dice=dice, keys=np.frombuffer(b"".join(keys), np.int8).reshape(-1, 26),
                            eqs=np.array([graded[k] for k in keys]), meta=np.array(json.dumps(meta)))
    best = np.array([max(graded[c.tobytes()] for c in legal_results(b, int(d[0]), int(d[1])) if c.tobytes() in graded)
                     for b, d in zip(boards, dice)])
    cls = np.array([report_class(b) for b in boards])
    base = None
    out = {"set": str(path), **meta, "decisions": len(boards), "ply": ply, "models": {}}
    for m in models:
        err = 1000 * (best - np.array([graded[k] for k in picks[m]]))
        fig = {"all": round(float(err.mean()), 3),
               **{c: round(float(err[cls == c].mean()), 3) for c in ("contact", "crashed", "race") if (cls == c).any()}}
        if base is None:
            base = err
        else:
            diff = err - base
            fig["diff"] = round(float(diff.mean()), 3)
            fig["diff_ci95"] = round(float(1.96 * diff.std(ddof=1) / np.sqrt(len(diff))), 3) if len(diff) > 1 else None
        out["models"][m] = fig
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.devset", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make", help="build a decision set graded by gnubg-nn 2-ply")
    mk.add_argument("--source", choices=SOURCES, default="arena")
    mk.add_argument("--seed", type=int, required=True)
    mk.add_argument("--positions", type=int, default=2000)
    mk.add_argument("--model", default=None, help="the model whose play makes tabla and arena decisions (default: shipped)")
    mk.add_argument("--only", choices=("contact", "crashed", "race"), default=None,
                    help="keep the decisions of this class only (as the bench reports them; races include bear-offs)")
    mk.add_argument("--out", type=Path, required=True)
    gr = sub.add_parser("grade", help="each model's error on a set, paired against the first")
    gr.add_argument("set", type=Path)
    gr.add_argument("models", nargs="+")
    gr.add_argument("--ply", type=int, choices=(1, 2), default=1)
    gr.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from scripts.evaluators import ModelError

    try:
        if args.command == "make":
            if args.positions < 1:
                raise DevSetError("--positions must be at least 1")
            n = make(args.source, args.seed, args.positions, args.model, args.out, args.only)
            kind = f"{args.only} decisions" if args.only else "decisions"
            print(f"{args.out}: {args.positions} {kind} ({args.source}, seed {args.seed}), {n} results graded")
            return 0
        res = grade(args.set, args.models, args.ply)
    except (DevSetError, ModelError) as exc:
        print(f"devset: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{res['set']}: {res['decisions']} decisions ({res.get('source')}, seed {res.get('seed')}), ply {res['ply']}")
    for m, fig in res["models"].items():
        line = f"  {m:<36s} all {fig['all']:6.2f}" + "".join(
            f"  {c} {fig[c]:6.2f}" for c in ("contact", "crashed", "race") if c in fig)
        if "diff" in fig:
            line += f"   diff {fig['diff']:+.2f} ± {fig['diff_ci95'] or 0:.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
