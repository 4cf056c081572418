"""``tabla train``: TD(λ) self-play training from the command line."""
from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from scripts.cmd_train_ray import add_ray_arguments, run_ray
from scripts.tabla import CliError
from training.config import GROUPED_LABELS, FitConfig, RaceConfig, RefineConfig, TrainConfig


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, except flags and options that are unset
    by default (their help says what leaving them out means)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = _DefaultsFormatter
    d = TrainConfig()
    parser.add_argument("--games", type=int, default=None, help="stop after this many more games (no limit when absent)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after this many minutes (no limit when absent; give --games, --minutes or both)")
    parser.add_argument("--out", type=Path, default=Path("checkpoints"), metavar="DIR",
                        help="run folder: DIR/latest.pt (checkpoint), DIR/latest.npz (its model), DIR/tb (tensorboard)")
    parser.add_argument("--resume", type=Path, default=None, metavar="CHECKPOINT.pt",
                        help="checkpoint to continue from, e.g. DIR/latest.pt (a new run when absent)")
    parser.add_argument("--overwrite", action="store_true",
                        help="start a new run in --out even though it holds a checkpoint (which is then replaced)")
    parser.add_argument("--from-v1", type=Path, default=None, metavar="V1.pt",
                        help="start class-net training from a one-net tabla-v1 checkpoint (training.convert): "
                             "contact and crashed nets take its weights, the race net starts fresh; "
                             "writes DIR/converted.pt and resumes from it (not with --resume)")
    parser.add_argument("--seed", type=int, default=d.seed, help="seed of all randomness")
    parser.add_argument("--workers", type=int, default=d.workers,
                        help="worker processes, each playing and learning on the shared weights")
    parser.add_argument("--hidden", type=int, default=d.hidden, help="hidden units of the contact and crashed nets (new runs)")
    parser.add_argument("--lam", type=float, default=d.lam, help="TD lambda of the lambda-return targets")
    parser.add_argument("--lr", type=float, default=d.lr, help="initial Adam learning rate")
    parser.add_argument("--lr-final", type=float, default=d.lr_final, help="learning rate reached after --lr-decay-games")
    parser.add_argument("--lr-decay-games", type=int, default=d.lr_decay_games,
                        help="games over which the learning rate decays from --lr to --lr-final (log-linear)")
    parser.add_argument("--batch-size", type=int, default=d.batch_size, help="positions per gradient step")
    parser.add_argument("--parallel-games", type=int, default=d.parallel_games, help="games each worker plays at once")
    parser.add_argument("--epsilon", type=float, default=d.epsilon, help="chance of a uniformly random play (exploration)")
    parser.add_argument("--checkpoint-minutes", type=float, default=d.checkpoint_minutes, help="minutes between checkpoints")
    parser.add_argument("--eval-minutes", type=float, default=d.eval_minutes,
                        help="minutes between strength checks against pubeval (0 = never)")
    parser.add_argument("--eval-games", type=int, default=d.eval_games, help="games of each strength check")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (there is none anyway when standard error is not a terminal)")
    parser.add_argument("--stage", choices=("td", "refine", "race", "fit"), default="td",
                        help="td: TD(lambda) self-play; refine: supervised learning on labels from "
                             "Tabla's own 2-ply search, starting from --resume (see RefineConfig); race: the race "
                             "net fitted to one-sided simulation and bearoff-database labels, from --resume (see RaceConfig); "
                             "fit: nets fitted offline to labels stored by refine runs, from --resume (see FitConfig)")
    r = RefineConfig()
    parser.add_argument("--refine-lr", type=float, default=r.lr, help="refine: Adam learning rate")
    parser.add_argument("--refine-lr-end", type=float, default=None,
                        help="refine: the learning rate at the end of the run, reached linearly (default: --refine-lr throughout)")
    parser.add_argument("--refine-max-labels", type=int, default=None, metavar="N",
                        help="refine: stop once the run has N labels of its own (with --minutes, whichever comes first)")
    parser.add_argument("--candidates", type=int, default=r.candidates, help="refine: results per decision searched deeper")
    parser.add_argument("--keep-agreed", type=float, default=r.keep_agreed,
                        help="refine: chance of labelling a decision the deeper search agrees with")
    parser.add_argument("--buffer", type=int, default=r.buffer_positions, help="refine: labelled positions kept for training")
    parser.add_argument("--refine-labels", choices=("search", "returns", "rollouts"), default=r.labels,
                        help="refine: search = Tabla's 2-ply values of disputed decisions; returns = every position of "
                             "1-ply self-play labelled with its luck-adjusted return (training/returns.py); rollouts = "
                             "results of decisions valued by Tabla's own rollouts (training/rollout_labels.py)")
    parser.add_argument("--refine-rollout-trials", type=int, default=r.rollout_trials,
                        help="refine, rollouts labels: variance-reduced 1-ply trials per rolled-out result")
    parser.add_argument("--refine-rollout-truncate", type=int, default=None,
                        help="refine, rollouts labels: cut each trial after this many half-moves (default: to the end)")
    parser.add_argument("--refine-rollout-others", type=int, default=r.rollout_others,
                        help="refine, rollouts labels: results rolled out besides the --candidates best, drawn at random")
    parser.add_argument("--refine-rollout-share", type=float, default=r.rollout_share,
                        help="refine, rollouts labels: chance that a decision of a refined net's class is rolled out")
    parser.add_argument("--refine-rollout-close", type=float, default=None,
                        help="refine, rollouts labels: roll out only decisions whose two best results by the nets are "
                             "within this cubeless equity, and clear ones with chance --refine-rollout-clear-share "
                             "(default: every decision alike)")
    parser.add_argument("--refine-rollout-clear-share", type=float, default=r.rollout_clear_share,
                        help="refine, rollouts labels with --refine-rollout-close: chance that a clear decision is "
                             "rolled out all the same")
    parser.add_argument("--refine-rollout-follow", action="store_true",
                        help="refine, rollouts labels: at a rolled-out decision the game plays the result the rollouts "
                             "value best, not the nets' best")
    parser.add_argument("--refine-store", type=Path, default=None, metavar="DIR",
                        help="refine: every label is appended to DIR (at each checkpoint and whenever half the "
                             "buffer is new; training/label_store.py), for later runs to train on again with --refine-replay")
    parser.add_argument("--refine-replay", type=Path, nargs="+", default=None, metavar="PATH",
                        help="refine: label files (or directories of them, e.g. an earlier run's --refine-store) put "
                             "into the buffer before the run's own labels")
    parser.add_argument("--refine-rank-weight", type=float, default=r.rank_weight,
                        help="refine, search or rollouts labels: weight of the loss on the differences between the "
                             "results of one decision (what decides a play), beside the squared error (default 0: off)")
    parser.add_argument("--refine-new-inputs-only", action="store_true",
                        help="refine: train only the weights of the inputs each refined net's encoding adds to the one "
                             "it extends (e.g. after python -m scripts.widen --encoding tabla-contact-v3 --net crashed); "
                             "the nets stay as they were wherever those inputs are 0")
    parser.add_argument("--refine-nets", nargs="+", choices=("contact", "crashed", "race"), default=list(r.nets),
                        help="refine: the nets that learn (positions of other classes are not labelled)")
    parser.add_argument("--refine-explore", type=float, default=r.explore,
                        help="refine, returns and rollouts labels: chance per ply of playing the 2nd to --candidates-th best "
                             "result instead of the best (default 0)")
    parser.add_argument("--refine-lambda", type=float, default=r.lam,
                        help="refine, returns labels: λ of the λ-return (1: the luck-adjusted return to the end; "
                             "0: the 1-ply value; see training/returns.py)")
    parser.add_argument("--refine-policy-ply", type=int, choices=(1, 2), default=r.policy_ply,
                        help="refine, returns labels: the self-play's depth (2: the best of the --candidates best "
                             "results by Tabla's 2-ply search)")
    parser.add_argument("--refine-policy-classes", nargs="+", choices=("contact", "crashed", "race"), default=None,
                        help="refine, returns labels, with --refine-policy-ply 2: play at 2 ply only when the "
                             "position on roll is of these classes (default: every class)")
    parser.add_argument("--refine-restart-class", choices=("contact", "crashed", "race"), default=None,
                        help="refine: pool the positions of this class that games from the opening reach, "
                             "and restart finished games from them (with chance --refine-restart)")
    parser.add_argument("--refine-restart", type=float, default=r.restart,
                        help="refine: chance that a finished game restarts from a pooled "
                             "--refine-restart-class position instead of the opening")
    parser.add_argument("--reuse", type=float, default=r.reuse, help="refine: gradient steps per batch of new labels")
    rc = RaceConfig()
    parser.add_argument("--race-positions", type=int, default=rc.positions, help="race: race positions to label")
    parser.add_argument("--race-trials", type=int, default=rc.trials,
                        help="race: simulated bring-ins per side and position")
    parser.add_argument("--race-epochs", type=int, default=rc.epochs, help="race: passes over the labelled positions")
    parser.add_argument("--race-lr", type=float, default=rc.lr, help="race: Adam learning rate of the first epoch")
    parser.add_argument("--race-hidden", type=int, default=rc.hidden,
                        help="race: 0 fine-tunes the checkpoint's race net; N > 0 trains a new one with N hidden units")
    parser.add_argument("--race-encoding", default=rc.encoding, help="race: input encoding of a new race net")
    parser.add_argument("--race-labels", type=Path, nargs="+", default=None, metavar="FILE",
                        help="race: train on these race_labels.npz files of earlier race stages instead of labelling new positions")
    fc = FitConfig(labels=("-",))
    parser.add_argument("--fit-labels", type=Path, nargs="+", default=None, metavar="PATH",
                        help="fit: label files, or directories of them (a refine run's --refine-store), to fit the nets to")
    parser.add_argument("--fit-nets", nargs="+", choices=("contact", "crashed", "race"), default=list(fc.nets),
                        help="fit: the nets that learn (labels of other classes are left out)")
    parser.add_argument("--fit-epochs", type=int, default=fc.epochs, help="fit: passes over the training labels")
    parser.add_argument("--fit-lr", type=float, default=fc.lr, help="fit: Adam learning rate of the first epoch")
    parser.add_argument("--fit-lr-final", type=float, default=fc.lr_final,
                        help="fit: learning rate of the last epoch (log-linear in between)")
    parser.add_argument("--fit-rank-weight", type=float, default=fc.rank_weight,
                        help="fit: weight of the within-decision term of the loss")
    parser.add_argument("--fit-replies", action="store_true",
                        help="fit: then label the position after one best reply to each training label by the fitted "
                             "nets' 1-ply value and fit again from the start on both (the reply labels are written "
                             "to OUT/replies); the fit of least held-out regret is kept")
    parser.add_argument("--fit-holdout", type=float, default=fc.holdout,
                        help="fit: share of the decisions kept aside to measure the fit (the epoch of least held-out "
                             "regret is kept)")
    parser.add_argument("--fit-ema", type=float, default=fc.ema,
                        help="fit: measure and keep the moving average of the weights over the gradient steps, each "
                             "step moving it 1 - EMA of the way (e.g. 0.9995); 0 (default) keeps the trained weights")
    add_ray_arguments(parser)


def refuse_to_overwrite(out: Path, resume: Path | None, overwrite: bool) -> None:
    """CliError when ``out`` holds a checkpoint that this run would replace: a run folder is
    only written into by its own continuation (``--resume`` from a checkpoint in it) or
    with an explicit ``--overwrite``."""
    if overwrite or not out.is_dir():
        return
    held = sorted(out.glob("*.pt"))
    if not held:
        return
    if resume is not None and resume.resolve().parent == out.resolve():
        return
    latest = out / "latest.pt" if (out / "latest.pt") in held else held[0]
    raise CliError(f"{out} already holds a training run ({latest.name}): continue it with --resume {latest}, "
                   f"or replace it with --overwrite")


def run(args: argparse.Namespace) -> int:
    from training.trainer import train

    if args.stage == "race":
        if args.backend == "ray":
            raise CliError("--backend ray trains the td stage; race runs on this machine")
        return _race(args)
    if args.stage == "fit":
        if args.backend == "ray":
            raise CliError("--backend ray trains the td stage; fit runs on this machine")
        return _fit(args)
    if args.workers < 1 or args.parallel_games < 1 or args.batch_size < 1 or args.hidden < 1:
        raise CliError("--workers, --parallel-games, --batch-size and --hidden must be at least 1")
    if args.stage == "refine":
        if args.backend == "ray":
            raise CliError("--backend ray trains the td stage; refine runs on this machine")
        return _refine(args)
    if args.games is None and args.minutes is None:
        raise CliError("give --games or --minutes (or both)")
    if (args.games is not None and args.games <= 0) or (args.minutes is not None and args.minutes <= 0):
        raise CliError("--games and --minutes must be positive")
    if not 0.0 <= args.lam <= 1.0:
        raise CliError("--lam must be between 0 and 1")
    cfg = TrainConfig(
        hidden=args.hidden, lam=args.lam, lr=args.lr, lr_final=args.lr_final, lr_decay_games=args.lr_decay_games,
        batch_size=args.batch_size, parallel_games=args.parallel_games, workers=args.workers,
        epsilon=args.epsilon, checkpoint_minutes=args.checkpoint_minutes, eval_minutes=args.eval_minutes,
        eval_games=args.eval_games, seed=args.seed,
    )
    refuse_to_overwrite(args.out, args.resume, args.overwrite)
    logging.getLogger().setLevel(logging.INFO)
    resume = args.resume
    if args.from_v1 is not None:
        resume = _convert(args.from_v1, args.out, cfg, resume)
    if args.backend == "ray":
        return run_ray(args, cfg, resume)
    st = train(cfg, args.out, games=args.games, minutes=args.minutes, resume=resume, progress=not args.no_progress)
    print(f"trained to {st.games} games in {st.wall_seconds / 60:.1f} min; checkpoint {args.out / 'latest.pt'}")
    return 0


def _convert(v1: Path, out: Path, cfg, resume: Path | None) -> Path:
    """Write ``out/converted.pt`` from the v1 checkpoint ``v1``; the run resumes from it."""
    from models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
    from training.convert import convert_v1_state

    if resume is not None:
        raise CliError("give --from-v1 or --resume, not both")
    try:
        state = convert_v1_state(load_checkpoint(v1), cfg.race_hidden, cfg.seed)
    except (CheckpointError, KeyError, ValueError) as exc:
        raise CliError(f"cannot convert {v1}: {exc}") from None
    target = out / "converted.pt"
    save_checkpoint(target, state)
    return target


def _refine(args: argparse.Namespace) -> int:
    from training.refine import refine

    if args.resume is None or (args.minutes is None and args.refine_max_labels is None):
        raise CliError("--stage refine needs --resume CHECKPOINT.pt and --minutes or --refine-max-labels")
    if (args.minutes is not None and not args.minutes > 0) or (args.refine_max_labels is not None
                                                               and args.refine_max_labels < 1):
        raise CliError("--minutes must be positive and --refine-max-labels at least 1")
    if args.candidates < 2 or not 0.0 <= args.keep_agreed <= 1.0 or args.buffer < args.batch_size:
        raise CliError("--candidates must be at least 2, --keep-agreed between 0 and 1, --buffer at least --batch-size")
    if not args.reuse > 0:
        raise CliError(f"--reuse must be positive, got {args.reuse}")
    if not 0.0 <= args.refine_explore <= 1.0:
        raise CliError(f"--refine-explore must be between 0 and 1, got {args.refine_explore}")
    if not 0.0 <= args.refine_lambda <= 1.0:
        raise CliError(f"--refine-lambda must be between 0 and 1, got {args.refine_lambda}")
    if not 0.0 <= args.refine_restart <= 1.0:
        raise CliError(f"--refine-restart must be between 0 and 1, got {args.refine_restart}")
    if args.refine_policy_classes and args.refine_policy_ply != 2:
        raise CliError("--refine-policy-classes needs --refine-policy-ply 2")
    if args.refine_rollout_trials < 1 or args.refine_rollout_others < 0 or (
            args.refine_rollout_truncate is not None and args.refine_rollout_truncate < 1):
        raise CliError("--refine-rollout-trials and --refine-rollout-truncate must be at least 1, "
                       "--refine-rollout-others at least 0")
    if not 0.0 < args.refine_rollout_share <= 1.0:
        raise CliError(f"--refine-rollout-share must be above 0 and at most 1, got {args.refine_rollout_share}")
    if not args.refine_rank_weight >= 0:
        raise CliError(f"--refine-rank-weight must be at least 0, got {args.refine_rank_weight}")
    if args.refine_rank_weight > 0 and args.refine_labels not in GROUPED_LABELS:
        raise CliError("--refine-rank-weight needs --refine-labels search or rollouts (returns labels have no siblings)")
    if args.refine_rollout_close is not None and not args.refine_rollout_close >= 0:
        raise CliError(f"--refine-rollout-close must be at least 0, got {args.refine_rollout_close}")
    if not 0.0 <= args.refine_rollout_clear_share <= 1.0:
        raise CliError(f"--refine-rollout-clear-share must be between 0 and 1, got {args.refine_rollout_clear_share}")
    if args.refine_rollout_close is not None and args.refine_labels != "rollouts":
        raise CliError("--refine-rollout-close needs --refine-labels rollouts")
    if args.refine_rollout_follow and args.refine_labels != "rollouts":
        raise CliError("--refine-rollout-follow needs --refine-labels rollouts")
    if args.refine_restart > 0 and args.refine_restart_class is None:
        raise CliError("--refine-restart needs --refine-restart-class")
    if not args.refine_lr > 0 or (args.refine_lr_end is not None and not args.refine_lr_end >= 0):
        raise CliError("--refine-lr must be positive and --refine-lr-end at least 0")
    refuse_to_overwrite(args.out, args.resume, args.overwrite)
    cfg = RefineConfig(lr=args.refine_lr, batch_size=args.batch_size, candidates=args.candidates, workers=args.workers,
                       keep_agreed=args.keep_agreed, buffer_positions=args.buffer, parallel_games=args.parallel_games,
                       checkpoint_minutes=args.checkpoint_minutes, eval_minutes=args.eval_minutes,
                       eval_games=args.eval_games, seed=args.seed, labels=args.refine_labels,
                       nets=tuple(dict.fromkeys(args.refine_nets)), reuse=args.reuse,
                       lr_end=args.refine_lr_end, explore=args.refine_explore, lam=args.refine_lambda,
                       restart_class=args.refine_restart_class, restart=args.refine_restart,
                       policy_ply=args.refine_policy_ply,
                       policy_classes=tuple(dict.fromkeys(args.refine_policy_classes or ())),
                       rollout_trials=args.refine_rollout_trials, rollout_truncate=args.refine_rollout_truncate,
                       rollout_others=args.refine_rollout_others, rollout_share=args.refine_rollout_share,
                       rollout_close=args.refine_rollout_close,
                       rollout_clear_share=args.refine_rollout_clear_share,
                       rollout_follow=args.refine_rollout_follow, rank_weight=args.refine_rank_weight,
                       new_inputs_only=args.refine_new_inputs_only,
                       label_store=None if args.refine_store is None else str(args.refine_store),
                       replay=tuple(str(p) for p in args.refine_replay or ()))
    logging.getLogger().setLevel(logging.INFO)
    t0 = time.monotonic()
    st = refine(cfg, args.resume, args.out, args.minutes, progress=not args.no_progress, max_labels=args.refine_max_labels)
    limit = " or ".join(([f"{args.minutes:g} min"] if args.minutes is not None else [])
                        + ([f"{args.refine_max_labels:,} labels"] if args.refine_max_labels is not None else []))
    print(f"refined for {(time.monotonic() - t0) / 60:.1f} min, {st.stages[-1]['labelled_here']:,} labels "
          f"(limit {limit}); checkpoint {args.out / 'latest.pt'}")
    return 0


def _race(args: argparse.Namespace) -> int:
    from models.checkpoint import CheckpointError
    from training.race_stage import race_stage

    if args.resume is None:
        raise CliError("--stage race needs --resume CHECKPOINT.pt")
    if min(args.race_positions, args.race_trials, args.race_epochs) < 1 or args.race_lr <= 0 or args.race_hidden < 0:
        raise CliError("--race-positions, --race-trials and --race-epochs must be at least 1, --race-lr positive, "
                       "--race-hidden at least 0")
    from models.encoding import ENCODINGS

    if args.race_hidden and not args.race_encoding.startswith("tabla-race") or args.race_encoding not in ENCODINGS:
        raise CliError(f"--race-encoding must be a race encoding: {', '.join(e for e in ENCODINGS if 'race' in e)}")
    refuse_to_overwrite(args.out, args.resume, args.overwrite)
    cfg = RaceConfig(positions=args.race_positions, trials=args.race_trials, epochs=args.race_epochs, lr=args.race_lr,
                     workers=args.workers, eval_games=args.eval_games, seed=args.seed, hidden=args.race_hidden,
                     encoding=args.race_encoding, label_files=tuple(str(f) for f in args.race_labels or ()))
    logging.getLogger().setLevel(logging.INFO)
    try:
        st = race_stage(cfg, args.resume, args.out)
    except CheckpointError as exc:
        raise CliError(str(exc)) from None
    print(f"race net fitted to {st['race_positions']} positions: held-out loss {st['heldout_loss_before']:.5f} -> "
          f"{st['heldout_loss_after']:.5f}; checkpoint {args.out / 'latest.pt'}")
    return 0


def _fit(args: argparse.Namespace) -> int:
    from models.checkpoint import CheckpointError
    from training.fit_stage import fit_stage
    from training.label_store import LabelFileError

    if args.resume is None or not args.fit_labels:
        raise CliError("--stage fit needs --resume CHECKPOINT.pt and --fit-labels PATH")
    try:
        cfg = FitConfig(labels=tuple(str(p) for p in args.fit_labels), nets=tuple(dict.fromkeys(args.fit_nets)),
                        epochs=args.fit_epochs, lr=args.fit_lr, lr_final=args.fit_lr_final,
                        batch_size=args.batch_size, rank_weight=args.fit_rank_weight, holdout=args.fit_holdout,
                        replies=args.fit_replies, ema=args.fit_ema,
                        eval_games=args.eval_games, seed=args.seed)
    except ValueError as exc:
        raise CliError(f"--stage fit: {exc}") from None
    refuse_to_overwrite(args.out, args.resume, args.overwrite)
    logging.getLogger().setLevel(logging.INFO)
    try:
        st = fit_stage(cfg, args.resume, args.out)
    except (CheckpointError, LabelFileError) as exc:
        raise CliError(str(exc)) from None
    print(_fit_summary(st, cfg.epochs, args.out / "latest.pt"))
    return 0


def _fit_summary(st: dict, epochs: int, path: Path) -> str:
    """The fit stage's closing line: labels, held-out regret before and after, and with
    reply labels which pass's nets were kept."""
    from training.fit_stage import kept_train_labels

    e0, best = st["epochs"][0], st["epochs"][st["best_epoch"]]
    if st.get("kept_pass") == "first":
        passes = (f"; the first pass kept, the second with {st['reply_labels']} reply labels reached "
                  f"{st['second_pass']['regret']:.2f}")
    elif "reply_labels" in st:
        passes = f"; after {st['reply_labels']} reply labels"
    else:
        passes = ""
    return (f"fitted to {kept_train_labels(st)} labels, {st['heldout_labels']} held out: held-out regret "
            f"{e0['regret']:.2f} -> {best['regret']:.2f} (epoch {st['best_epoch']} of {epochs}{passes}); "
            f"checkpoint {path}")
