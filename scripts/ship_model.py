"""Ship a trained checkpoint as the default model, with a model card.

    python -m scripts.ship_model --checkpoint RUN/latest.pt [--pubeval-games 2000] [--gnubg-games 1000]

Copies the checkpoint to ``models/tabla.pt`` (to resume training from), exports the
numpy inference file ``models/tabla.npz`` that every command loads, measures strength at
1-ply with duplicate dice (cubeless money, gammons count, no Jacoby) against pubeval and
gnubg-nn 0-ply, and writes ``models/MODEL_CARD.md``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
from pathlib import Path

from models import DEFAULT_MODEL
from models.checkpoint import CheckpointError, export_nets_npz, load_checkpoint, load_evaluator, load_nets

MODELS = Path(__file__).resolve().parent.parent / "models"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _nets_text(nets: dict) -> str:
    """``contact 242→128, ...`` from a stage's net configs."""
    return ", ".join(f"{n} {c.get('inputs')}→{c.get('hidden')} ({c.get('encoding')})" for n, c in nets.items())


def _explore_text(rc: dict, st: dict) -> str:
    """How often the self-play (returns or rollouts labels) played another of the best few results."""
    e = rc.get("explore") or 0
    if not e:
        return ""
    done = f", {int(st['explored']):,} plies in all" if "explored" in st else ""
    return f" (at {e:.0%} of plies one of the 2nd to {rc.get('candidates')}th best results{done})"


def _policy_text(rc: dict, st: dict) -> str:
    """How deep returns self-play searched its plays."""
    if rc.get("policy_ply", 1) == 1:
        return ""
    done = f"; {int(st['deeper']):,} plies played otherwise than the nets' best" if "deeper" in st else ""
    where = f" in {' and '.join(rc['policy_classes'])} positions" if rc.get("policy_classes") else ""
    return f" (each play{where} the best at 2 ply of the nets' {rc.get('candidates')} best results{done})"


def _restart_text(rc: dict, st: dict) -> str:
    """How often returns self-play restarted from pooled positions of one class."""
    if not rc.get("restart") or not rc.get("restart_class"):
        return ""
    done = f", {int(st['restarts']):,} restarts" if "restarts" in st else ""
    return (f"; a finished game restarted with chance {rc['restart']:g} from one of the last {rc.get('restart_pool'):,} "
            f"{rc['restart_class']} positions reached from the opening{done}")


def _returns_texts(rc: dict) -> tuple[str, str]:
    """What a returns stage's labels are (luck-adjusted returns, or λ-returns when λ < 1)
    and how it labels a position."""
    lam = rc.get("lam", 1.0)
    if lam == 1.0:
        return "luck-adjusted returns", "each position's result minus the luck of every roll to the end"
    return (f"luck-adjusted λ-returns, λ = {lam:g},",
            "each position's 1-ply value plus λ times the difference between the next position's label and the nets' "
            "value of it (λ = 1: the result minus the luck of every roll to the end)")


def _refine_lr(rc: dict, st: dict) -> str:
    """A refine stage's learning rate: constant, or its linear fall over the run (in time,
    or in labels when the run stopped at a number of them: ``--refine-max-labels``)."""
    if rc.get("lr_end") is None:
        return f"{rc.get('lr')}"
    limits = st.get("limits") or {}
    if limits.get("labels") is None:
        over = "time"
    elif limits.get("minutes") is None:
        over = f"labels, to {int(limits['labels']):,}"
    else:
        over = f"time or labels, to {limits['minutes']:g} min or {int(limits['labels']):,} labels, whichever is further along"
    return f"{rc.get('lr')} → {rc.get('lr_end')} (linear in {over})"


def _replay_text(rc: dict, st: dict) -> str:
    """The card's words for a refinement's replayed labels ("" when none)."""
    if not st.get("replayed"):
        return ""
    return (f", with {int(st['replayed']):,} stored labels of earlier runs put into the buffer first "
            f"(`--refine-replay`: {', '.join(rc.get('replay', []))})")


def _supervised_text(rc: dict, st: dict) -> str:
    """How a returns or rollouts stage fitted its labels, and when and where it started."""
    only = (", only the weights of the inputs each net's encoding adds to the one it extends learning (the nets are "
            "unchanged wherever those inputs are 0)" if rc.get("new_inputs_only") else "")
    return (f"Adam lr {_refine_lr(rc, st)}{only}, {rc.get('reuse')} steps of {rc.get('batch_size')} per {rc.get('batch_size')} "
            f"new labels{_replay_text(rc, st)}, bear-off databases {'on' if st.get('bearoff') else 'off'}, started {st.get('started_utc')} at "
            f"commit {str(st.get('commit'))[:10]}")


def _stage_rows(stages: list[dict]) -> list[str]:
    """The card's stage table, a line per stage record. A ``graft`` stage says how many of the
    earlier lines are also the grafted net's history, and is followed by the grafted net's
    own later stages."""
    rows = []
    for i, st in enumerate(stages):
        if st.get("stage") != "graft":
            rows.append(_stage_row(st, _stage_what(st)))
            for br in st.get("branches", []):  # only an average of sibling fits has them
                rows.extend(_stage_row(d, f"(averaged in from `{br['name']}`) {_stage_what(d)}") for d in br["stages"])
            continue
        own = st.get("donor_stages", [])
        shared = 0
        while shared < min(i, len(own)) and own[shared] == stages[shared]:
            shared += 1
        rows.append(_stage_row(st, _graft_text(st, shared, len(own) - shared)))
        rows.extend(_stage_row(d, f"(the grafted {st.get('net')} net) {_stage_what(d)}") for d in own[shared:])
    return rows


def _graft_text(st: dict, shared: int, own: int) -> str:
    """What a ``graft`` stage did, and where the grafted net's history is on the card."""
    cfg = st.get("net_config", {})
    history = f"its training is the first {shared} stages above" if shared else "its training is listed below"
    if shared and own:
        history += f" and the {own} below"
    return (f"the {st.get('net')} net replaced by that of `{st.get('from')}` (`python -m scripts.graft`): "
            f"{cfg.get('inputs')}→{cfg.get('hidden')} ({cfg.get('encoding')}), {int(st.get('donor_labelled', 0)):,} "
            f"labelled positions in its lineage; {history}; at commit {str(st.get('commit'))[:10]}")


def _close_text(rc: dict) -> str:
    """The card's words for a rollout stage's closeness bound ("" when off)."""
    if rc.get("rollout_close") is None:
        return ""
    return (f" (only decisions whose two best results by the nets are within {rc['rollout_close']} of each other, "
            f"clear ones with chance {rc.get('rollout_clear_share')})")


def _rank_text(rc: dict) -> str:
    """The card's words for the within-decision term of a refinement's loss ("" when off)."""
    if not rc.get("rank_weight"):
        return ""
    return f", plus {rc['rank_weight']} × the squared error of each result's equity less its decision's mean error"


def _ema_text(fc: dict) -> str:
    """How a fit stage averaged its weights (``--fit-ema``), if it did."""
    ema = float(fc.get("ema", 0.0) or 0.0)
    return (f", the nets measured and kept being the moving average of the weights over the steps (each step "
            f"{1.0 - ema:.4g} of the way, `--fit-ema {ema:g}`)" if ema > 0 else "")


def _second_pass_text(st: dict) -> str:
    """How the fit stage chose between its two passes (stages before the choice kept the second)."""
    if st.get("kept_pass") != "first":
        return ""
    return (f"; that second fit's best held-out regret, {st.get('second_pass', {}).get('regret', 0):.2f}, was higher, "
            f"so the first fit's nets are kept, and the held-out regret and epoch that follow are its")


def _stage_row(st: dict, what: str | None = None) -> str:
    """One line of the card's stage table from a trainer's stage record (``what``: the text
    of its second column, by default :func:`_stage_what`)."""
    return f"| {int(st.get('games', 0)):,} | {_stage_what(st) if what is None else what} |"


def _stage_what(st: dict) -> str:
    """What one (non-graft) stage record did, in words."""
    if "widened_from" in st and "encoding" in st["widened_from"]:
        wf = st["widened_from"]
        what = (f"the {wf.get('net')} net moved from {wf.get('encoding')} ({wf.get('inputs')} inputs) to {wf.get('to')} "
                f"(`python -m scripts.widen --encoding`), the added inputs at zero weight: outputs unchanged")
    elif "widened_from" in st:
        what = f"hidden layer widened from {st['widened_from']['hidden']} units (`python -m scripts.widen`), outputs unchanged"
    elif "converted_from" in st:
        cf = st["converted_from"]
        what = (f"converted from the one-net {cf.get('encoding')} model ({cf.get('hidden')} hidden units, commit "
                f"{str(cf.get('git_commit'))[:10]}) by `tabla train --from-v1`: the contact and crashed nets take its "
                f"weights (the expert inputs start at zero), the race net starts {cf.get('race')}")
    elif st.get("stage") == "average":
        at = ", ".join(f"{n:,}" for n in st.get("labelled_at", []))
        branches = [f"`{br['name']}`" for br in st.get("branches", [])]
        whose = (f"the run above and {', '.join(branches)}, from the same start, whose own stages follow"
                 if branches else "the run above")
        what = (f"weights averaged (`python -m scripts.average`) over {len(st.get('of', []))} checkpoints of {whose}, "
                f"taken at {at} labelled positions, at commit {str(st.get('commit'))[:10]}")
    elif st.get("stage") == "refine" and st.get("refine_config", {}).get("labels") == "returns":
        rc = st["refine_config"]
        kind, how = _returns_texts(rc)
        what = (f"refinement (`tabla train --stage refine --refine-labels returns`) of the {' and '.join(rc.get('nets', []))} "
                f"nets: supervised on the {kind} of {int(st.get('labelled_here', 0)):,} positions of greedy "
                f"{rc.get('policy_ply', 1)}-ply self-play{_policy_text(rc, st)}{_explore_text(rc, st)}{_restart_text(rc, st)} "
                f"({int(st.get('decisions', 0)):,} plies played; {how}, "
                f"`training/returns.py`), {_supervised_text(rc, st)}")
    elif st.get("stage") == "refine" and st.get("refine_config", {}).get("labels") == "rollouts":
        rc = st["refine_config"]
        cut = f"cut after {rc['rollout_truncate']} half-moves" if rc.get("rollout_truncate") else "played to the end"
        policy = ("1-ply self-play that plays the rolled-out best result at rolled-out decisions"
                  if rc.get("rollout_follow") else "greedy 1-ply self-play")
        what = (f"refinement (`tabla train --stage refine --refine-labels rollouts`) of the {' and '.join(rc.get('nets', []))} "
                f"nets: supervised on Tabla's own rollouts of {int(st.get('labelled_here', 0)):,} results of "
                f"{int(st.get('decisions', 0)):,} decisions of {policy}{_explore_text(rc, st)} ({int(st.get('disputed', 0)):,} disputed: "
                f"the best rolled-out result not the nets' best), the nets' {rc.get('candidates')} best results and "
                f"{rc.get('rollout_others')} more at random per decision{_close_text(rc)}, each rolled out with {rc.get('rollout_trials')} "
                f"variance-reduced 1-ply trials {cut} (`training/rollout_labels.py`){_restart_text(rc, st)}{_rank_text(rc)}, "
                f"{_supervised_text(rc, st)}")
    elif st.get("stage") == "refine":
        rc = st.get("refine_config", {})
        nets = rc.get("nets")
        of = f" of the {' and '.join(nets)} nets" if nets else ""
        what = (f"refinement (`tabla train --stage refine`){of}: supervised on Tabla's own 2-ply play values of "
                f"{int(st.get('labelled_here', 0)):,} positions from {int(st.get('decisions', 0)):,} self-play decisions "
                f"({int(st.get('disputed', 0)):,} disputed){_restart_text(rc, st)}, {rc.get('candidates')} candidates per decision{_rank_text(rc)}, Adam lr {_refine_lr(rc, st)}"
                f"{_replay_text(rc, st)}, "
                f"bear-off databases {'on' if st.get('bearoff') else 'off'}, started {st.get('started_utc')} at commit {str(st.get('commit'))[:10]}")
    elif st.get("stage") == "fit":
        fc = st.get("fit_config", {})
        e0, best = st["epochs"][0], st["epochs"][st.get("best_epoch", 0)]
        replies = int(st.get("reply_labels", 0))
        reply_text = (f" and {replies:,} reply labels (`--fit-replies`: the position after the best reply to each, "
                      f"valued at 1 ply by the nets of a first fit, whose held-out regret was "
                      f"{st.get('first_pass', {}).get('regret', 0):.2f}; then fitted again from the start"
                      f"{_second_pass_text(st)})" if "reply_labels" in st else "")
        what = (f"fit (`tabla train --stage fit`) of the {' and '.join(fc.get('nets', []))} nets to "
                f"{int(st.get('train_labels', 0)) - replies:,} stored labels of refine runs ({len(st.get('label_files', []))} label "
                f"files of `--refine-store`){reply_text}, {int(st.get('heldout_labels', 0)):,} more of other decisions held out; "
                f"{fc.get('epochs')} epochs in batches of whole decisions of about {fc.get('batch_size')}, Adam lr "
                f"{fc.get('lr')} → {fc.get('lr_final')}{_rank_text(fc)}{_ema_text(fc)}; held-out regret of the nets' choice "
                f"{e0.get('regret', 0):.2f} → {best.get('regret', 0):.2f} (epoch {st.get('best_epoch', 0)} kept), "
                f"started {st.get('started_utc')} at commit {str(st.get('commit'))[:10]}")
    elif st.get("stage") == "race":
        rc = st.get("race_config", {})
        net = st.get("race_net", {})
        start = (f"a new race net {net.get('inputs')}→{net.get('hidden')} ({net.get('encoding')}) from random weights"
                 if st.get("new_race_net") else "the race net")
        what = (f"race stage (`tabla train --stage race`): {start} fitted to {int(st.get('race_positions', 0)):,} race "
                f"positions from self-play, labelled by {rc.get('trials')} one-sided bring-in simulations per side and the "
                f"one-sided bearoff database, {rc.get('epochs')} epochs, Adam lr {rc.get('lr')} → {rc.get('lr_final')}; held-out "
                f"squared error {st.get('heldout_loss_before', 0):.5f} → {st.get('heldout_loss_after', 0):.5f}, started "
                f"{st.get('started_utc')} at commit {str(st.get('commit'))[:10]}")
    elif "nets" in st:
        tc = st.get("train_config", {})
        what = (f"TD(λ) self-play of the class nets {_nets_text(st['nets'])}, λ = {tc.get('lam')}, Adam lr {tc.get('lr')} → "
                f"{tc.get('lr_final')} (log-linear over games 0-{tc.get('lr_decay_games', 0):,}), seed {tc.get('seed')}, bear-off "
                f"databases {'on' if st.get('bearoff') else 'off'}, started {st.get('started_utc')} at commit {str(st.get('commit'))[:10]}")
    else:
        tc = st.get("train_config", {})
        what = (f"{st.get('hidden')} hidden units, λ = {tc.get('lam')}, Adam lr {tc.get('lr')} → {tc.get('lr_final')} "
                f"(log-linear over games 0-{tc.get('lr_decay_games', 0):,}), seed {tc.get('seed')}, "
                f"started {st.get('started_utc')} at commit {str(st.get('commit'))[:10]}")
    return what


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--pubeval-games", type=int, default=2000)
    ap.add_argument("--gnubg-games", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--lineage", default="", help="text for the card on training the checkpoint does not record")
    args = ap.parse_args(argv)

    from eval.duel import EvaluatorPlayer, GnubgPlayer, PubevalPlayer, duel

    try:
        ck = load_checkpoint(args.checkpoint)
    except CheckpointError as exc:
        print(f"ship_model: error: {exc}", file=sys.stderr)
        return 2
    if "nets" not in ck:
        print(f"ship_model: error: {args.checkpoint} holds one tabla-v1 net; ship a class-net set", file=sys.stderr)
        return 2
    nets, _ = load_nets(args.checkpoint)
    net = load_evaluator(args.checkpoint)
    results = {}
    r = duel(EvaluatorPlayer(net), PubevalPlayer(), games=args.pubeval_games, seed=args.seed, workers=args.workers)
    results["pubeval"] = r
    print("vs pubeval:", r.summary(), flush=True)
    r = duel(EvaluatorPlayer(net), GnubgPlayer(0), games=args.gnubg_games, seed=args.seed + 1, workers=args.workers)
    results["gnubg0"] = r
    print("vs gnubg-nn 0-ply:", r.summary(), flush=True)

    if args.checkpoint.resolve() != (MODELS / "tabla.pt").resolve():
        shutil.copyfile(args.checkpoint, MODELS / "tabla.pt.tmp")
        os.replace(MODELS / "tabla.pt.tmp", MODELS / "tabla.pt")
    strength = {k: {"ppg": round(v.ppg, 4), "ci95": round(v.ci95, 4), "games": v.n} for k, v in results.items()}
    export_nets_npz(DEFAULT_MODEL, nets, {"games": ck.get("games"), "labelled": ck.get("labelled", 0),
                                          "wall_seconds": ck.get("wall_seconds"), "strength": strength,
                                          "git_commit": ck.get("git_commit")})
    tc = ck.get("train_config", {})
    hist = ck.get("history", [])
    hist_rows = "\n".join(
        f"| {h['games']:,} | {int(h.get('labelled', 0)):,} | {h['wall_seconds'] / 3600:.2f} | {h.get('eval/ppg_vs_pubeval', float('nan')):+.3f} ± "
        f"{h.get('eval/ppg_vs_pubeval_ci95', float('nan')):.3f} |" for h in hist)
    stage_rows = "\n".join(_stage_rows(ck.get("stages", [])))
    stages = ""
    if args.lineage or stage_rows:
        stages = "\n## Training stages\n\n" + (args.lineage.strip() + "\n\n" if args.lineage else "")
        if stage_rows:
            stages += "| from game | what |\n|---|---|\n" + stage_rows + "\n"
    card = f"""# Model card: `models/tabla.npz` (default model)

| | |
|---|---|
| networks | one per position class (`engine/classes.py`, `models/multinet.py`): {_nets_text({n: c.to_dict() for n, (c, _) in nets.items()})}; each inputs → sigmoid hidden → 5 conditional sigmoid outputs (encodings in `models/encoding.py`) |
| bear-offs | {'exact databases (`engine/bearoff.py`); races with every checker on points 1-8 from the one-sided database over those points' if getattr(net, 'bearoff', None) is not None else 'the race net (no database in this build)'} |
| training | TD(λ) self-play, λ-return targets (λ = {tc.get('lam')}), Adam lr {tc.get('lr')} → {tc.get('lr_final')} over {tc.get('lr_decay_games', 0):,} games, batch {tc.get('batch_size')}, {tc.get('workers')} Hogwild workers × {tc.get('parallel_games')} parallel games; then the refinement stages listed below |
| games trained | {int(ck.get('games', 0)):,} |
| positions trained by TD | {int(ck.get('positions', 0)):,} |
| positions labelled by Tabla's own search and self-play returns (refinement) | {int(ck.get('labelled', 0)):,} |
| wall time | {ck.get('wall_seconds', 0) / 3600:.2f} h |
| machine | {os.cpu_count()} cores ({_cpu()}), no GPU, {platform.system()} {platform.machine()}, Python {platform.python_version()} |
| trained at commit | {ck.get('git_commit', 'unknown')} |
| card written | {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} |

## Strength (1-ply, cubeless money, gammons and backgammons count, no Jacoby, duplicate dice)

| opponent | games | ppg for Tabla | 95% CI | W / L | gammons won / lost |
|---|---|---|---|---|---|
| pubeval | {results['pubeval'].n} | {results['pubeval'].ppg:+.3f} | ± {results['pubeval'].ci95:.3f} | {results['pubeval'].wins} / {results['pubeval'].losses} | {results['pubeval'].gammons} / {results['pubeval'].gammons_lost} |
| gnubg-nn 0-ply | {results['gnubg0'].n} | {results['gnubg0'].ppg:+.3f} | ± {results['gnubg0'].ci95:.3f} | {results['gnubg0'].wins} / {results['gnubg0'].losses} | {results['gnubg0'].gammons} / {results['gnubg0'].gammons_lost} |

Measured with `python -m scripts.ship_model --checkpoint {args.checkpoint} --pubeval-games {args.pubeval_games} --gnubg-games {args.gnubg_games} --seed {args.seed}`.

{stages}
## Training history (periodic checks against pubeval, {tc.get('eval_games')} games each)

| games | labelled positions | hours | ppg vs pubeval |
|---|---|---|---|
{hist_rows}

`models/tabla.pt` is the full training checkpoint (optimizer state included): resume with
`tabla train --resume models/tabla.pt --minutes M --out DIR`.
"""
    (MODELS / "MODEL_CARD.md").write_text(card)
    print(json.dumps(strength))
    return 0


if __name__ == "__main__":
    sys.exit(main())
