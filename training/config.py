"""Training settings: one dataclass, every field documented, passed explicitly."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from engine.classes import CLASS_NAMES


@dataclass
class RunConfig:
    """What every training stage has: checkpoints, strength checks and the seed."""

    checkpoint_minutes: float = 5.0
    """Minutes between checkpoints."""
    eval_minutes: float = 10.0
    """Minutes between strength checks against pubeval (0 = never)."""
    eval_games: int = 400
    """Games of each strength check (duplicate dice, so pairs)."""
    seed: int = 1
    """Seed of all randomness."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainConfig(RunConfig):
    """TD(λ) self-play settings."""

    hidden: int = 128
    """Hidden units of the contact and crashed nets."""
    race_hidden: int = 64
    """Hidden units of the race net."""
    lam: float = 0.7
    """λ of the λ-return targets (0 = TD(0), 1 = Monte Carlo game result)."""
    lr: float = 1e-3
    """Initial Adam learning rate."""
    lr_final: float = 2e-4
    """Learning rate reached after ``lr_decay_games`` games (linear in log space)."""
    lr_decay_games: int = 3_000_000
    """Games over which the learning rate decays from ``lr`` to ``lr_final``."""
    batch_size: int = 1024
    """Positions per gradient step."""
    parallel_games: int = 256
    """Games each worker plays at once (move generation and evaluation are batched)."""
    workers: int = 2
    """Worker processes; each plays and learns on the shared weights (Hogwild)."""
    epsilon: float = 0.0
    """Chance of a uniformly random play (exploration); the dice explore well on their own."""
    max_game_plies: int = 600
    """A game longer than this is abandoned without learning from it."""

    def lr_at(self, games: int) -> float:
        """The learning rate after ``games`` games."""
        f = min(1.0, games / max(1, self.lr_decay_games))
        return self.lr * (self.lr_final / self.lr) ** f


GROUPED_LABELS = ("search", "rollouts")
"""Refinement label kinds that label the candidates of a decision searched deeper: their labels come
in decisions (siblings, as the rank term of the loss needs) and they count disputed decisions."""


@dataclass
class RefineConfig(RunConfig):
    """Supervised refinement of trained class nets on labels from Tabla's own search.

    *Generate* (``workers`` processes, reading the shared weights as they change):
    ``parallel_games`` self-play games advance ply by ply with the current nets at 1 ply;
    at each decision the ``candidates`` best results by the nets are valued again one ply
    deeper (the 21 rolls of the player to move next and his best reply: Tabla's 2-ply
    play value). Where the deeper search picks another play than the nets (a *disputed*
    decision), every candidate is labelled; elsewhere only the chosen result, with
    probability ``keep_agreed``. Each ``steps_per_round`` plies a worker sends its labels.
    *Train* (the main process): for every ``batch_size`` new labels, ``reuse`` Adam steps
    on batches drawn from the last ``buffer_positions`` labelled positions, each position
    teaching the net of its class.
    """

    lr: float = 2e-4
    """Adam learning rate (at the start of the run)."""
    lr_end: float | None = None
    """With a value, the learning rate falls linearly with the run's elapsed time (or its
    labels, when it stops at a number of them) from ``lr`` to ``lr_end`` at the end of the
    run (:func:`training.refine.scheduled_lr`); None: ``lr`` throughout."""
    batch_size: int = 512
    """Positions per gradient step."""
    parallel_games: int = 256
    """Self-play games advanced together while generating."""
    steps_per_round: int = 4
    """Plies each game advances between two sends of labels."""
    candidates: int = 4
    """Results per decision valued by the deeper search."""
    keep_agreed: float = 0.15
    """Chance of labelling the chosen result of a decision the deeper search agrees with."""
    epsilon: float = 0.05
    """Chance of playing the second-best result instead (reaches positions the nets avoid)."""
    reuse: float = 16.0
    """Gradient steps per ``batch_size`` new labels (how often a label is used, on average)."""
    workers: int = 2
    """Label-generating worker processes."""
    buffer_positions: int = 400_000
    """Labelled positions kept for training (the most recent)."""
    labels: str = "search"
    """``search``: the deeper search's values of the candidates above; ``returns``: every
    position of greedy 1-ply self-play games labelled with its luck-adjusted return to the
    end of the game (:mod:`training.returns`; ``keep_agreed`` and ``epsilon`` are then
    unused, ``explore`` and ``candidates`` say how the self-play explores); ``rollouts``:
    the ``candidates`` best results of decisions and ``rollout_others`` more, each valued by
    a rollout of ``rollout_trials`` trials (:mod:`training.rollout_labels`)."""
    nets: tuple[str, ...] = ("contact", "crashed", "race")
    """The nets that learn; labelled positions of other classes are dropped."""
    explore: float = 0.0
    """``returns`` and ``rollouts``: chance, at each ply, of playing one of the results
    ranked 2nd to ``candidates``-th by the nets (uniformly) instead of the best. Returns:
    results the nets under-rate are labelled too; the luck of that roll is then measured
    from the result played, which keeps the earlier labels those of the nets' best play.
    Rollouts: the games reach positions the nets' best play avoids (the labels, of the
    results rolled out, are unchanged by it)."""
    policy_ply: int = 1
    """``returns``: the depth the self-play plays at: 1, the nets' best play; 2, the best by
    Tabla's 2-ply search of the ``candidates`` best results by the nets (the luck of the
    roll is then measured from the result played, as with ``explore``)."""
    policy_classes: tuple[str, ...] = ()
    """With ``policy_ply`` 2: the classes (:data:`engine.classes.CLASS_NAMES`) of the
    positions on roll played at 2 ply; the others are played at 1 ply. Empty: all."""
    restart_class: str | None = None
    """With a class name of :data:`engine.classes.CLASS_NAMES` (``crashed``), positions of that
    class reached by games that began at the opening are pooled (the last
    ``restart_pool`` of them), and a finished game starts again from a pooled position
    with chance ``restart``, so that a class rare in self-play is labelled more often."""
    restart: float = 0.0
    """Chance that a finished game restarts from a pooled ``restart_class``
    position instead of the opening."""
    restart_pool: int = 20_000
    """Pooled positions kept for restarts (the most recent)."""
    max_game_plies: int = 600
    """``returns``: a game still going after this many plies is cut and valued by the nets."""
    lam: float = 1.0
    """``returns``: λ of the label ``y_t = V1(s_t) + λ (y'_{t+1} - V(s'_t))``: 1 is the
    luck-adjusted return to the end of the game; 0 the position's 1-ply value (the nets' own
    one-ply lookahead, no dice noise); between, the λ-return of TD(λ) with exact one-ply
    expectations (:mod:`training.returns`)."""

    rollout_trials: int = 16
    """``rollouts``: variance-reduced 1-ply trials per rolled-out result."""
    rollout_truncate: int | None = None
    """``rollouts``: cut each trial after this many half-moves (None: play to the end)."""
    rollout_others: int = 4
    """``rollouts``: results rolled out besides the ``candidates`` best, drawn at random from the rest."""
    rollout_share: float = 1.0
    """``rollouts``: chance that a decision of a refined net's class is rolled out."""
    rollout_close: float | None = None
    """``rollouts``: a decision whose two best results by the nets are further apart than
    this (cubeless equity) is *clear* and rolled out only with chance ``rollout_clear_share``
    (after ``rollout_share``); None: every decision is treated alike. Rollouts rarely overturn
    a clear choice, so their cost goes where the nets' choice is in doubt."""
    rollout_clear_share: float = 0.1
    """``rollouts`` with ``rollout_close``: chance that a clear decision is rolled out all the same
    (its labels keep the nets' values of clear choices anchored)."""
    rollout_follow: bool = False
    """``rollouts``: at a rolled-out decision the game plays the result the rollouts value
    best, not the nets' best (Tabla's rollouts as the policy: the games reach positions the
    improved play reaches, e.g. holding an anchor the nets would give up)."""
    label_store: str | None = None
    """A directory: each checkpoint (and each time half the buffer is new) appends the labels
    gathered since the previous store to it (:mod:`training.label_store`), so that later runs
    can train on them again (``replay``)."""
    replay: tuple[str, ...] = ()
    """Label files, or directories of them, put into the buffer before the run's own labels
    (the most recent ``buffer_positions`` of all are kept; steps are still earned by new labels)."""
    new_inputs_only: bool = False
    """Train only the weights of the inputs each refined net's encoding adds to the encoding
    it extends (:data:`models.encoding.EXTENDS`; e.g. the bear-off exposures of
    ``tabla-contact-v3``): wherever those inputs are 0 the nets compute what they did, so a
    new expert input is taught without disturbing anything else."""
    rank_weight: float = 0.0
    """Weight of the within-decision term of the loss: the squared error of each labelled
    result's cubeless equity less the mean error of its decision's labelled results.
    A play depends only on the differences between the results of one roll; this term fits
    those differences, beside the plain squared error of the probabilities. 0: off. Only
    labels that come in decisions (``search``: a disputed decision's candidates;
    ``rollouts``) have siblings."""

    def __post_init__(self) -> None:
        if self.restart_class is not None and self.restart_class not in CLASS_NAMES:
            raise ValueError(f"restart_class must be one of {', '.join(CLASS_NAMES)}, got {self.restart_class!r}")
        unknown = set(self.policy_classes) - set(CLASS_NAMES)
        if unknown:
            raise ValueError(f"policy_classes must be among {', '.join(CLASS_NAMES)}, got {', '.join(sorted(unknown))}")
        if self.rollout_close is not None and self.rollout_close < 0:
            raise ValueError(f"rollout_close must be at least 0, got {self.rollout_close}")
        if not 0.0 <= self.rollout_clear_share <= 1.0:
            raise ValueError(f"rollout_clear_share must be between 0 and 1, got {self.rollout_clear_share}")
        if self.rank_weight < 0:
            raise ValueError(f"rank_weight must be at least 0, got {self.rank_weight}")


@dataclass
class RayConfig:
    """How a TD(λ) run spreads over Ray (:mod:`training.ray_backend`); the learning itself is
    the :class:`TrainConfig`'s."""

    address: str | None = None
    """Ray cluster to join (``auto`` or ``HOST:PORT``); None: start Ray here with this machine's cores."""
    actors: int | None = None
    """Self-play actors (one CPU each); None: one per CPU of the cluster."""
    publish_every: int = 4
    """Learner updates between two broadcasts of the weights through the object store."""
    call_seconds: float = 1.0
    """Seconds each actor plays per call before it sends its finished games (and picks up
    the newest weights)."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RaceConfig(RunConfig):
    """The race stage (:mod:`training.race_stage`): fit the race net to near-exact labels.

    ``positions`` distinct race positions are collected from self-play at 1 ply (the
    race-class results among the ``candidates`` best of each decision; with chance
    ``epsilon`` the second-best play is made); each is labelled from ``trials`` one-sided
    simulations of each side's bring-in and the bearoff database
    (:mod:`training.race_labels`); the race net trains ``epochs`` passes over them.
    """

    positions: int = 200_000
    """Race positions to label."""
    trials: int = 64
    """Simulated bring-ins per side and position (a side already home needs none)."""
    candidates: int = 6
    """Best results of each self-play decision whose race positions are collected."""
    epsilon: float = 0.1
    """Chance of playing the second-best result (reaches positions the nets avoid)."""
    parallel_games: int = 256
    """Self-play games advanced together while collecting."""
    workers: int = 2
    """Labelling processes."""
    lr: float = 3e-4
    """Adam learning rate of the first epoch."""
    lr_final: float = 3e-5
    """Learning rate of the last epoch (log-linear in between)."""
    batch_size: int = 256
    """Positions per gradient step."""
    epochs: int = 20
    """Passes over the labelled positions."""
    holdout: float = 0.05
    """Share of the labelled positions kept aside to measure the fit."""
    hidden: int = 0
    """0: fine-tune the checkpoint's race net; otherwise a new race net with this many
    hidden units and ``encoding`` inputs replaces it."""
    encoding: str = "tabla-race-v2"
    """Input encoding of a new race net (``hidden`` > 0)."""
    label_files: tuple[str, ...] = ()
    """Labelled sets written by earlier race stages (``race_labels.npz``) to train on
    instead of sampling and labelling ``positions`` new ones."""


@dataclass
class FitConfig(RunConfig):
    """The fit stage (:mod:`training.fit_stage`): nets fitted offline to stored labels.

    Labels that refine runs kept on disk (``--refine-store``, :mod:`training.label_store`)
    are read whole; ``holdout`` of their decisions are kept aside, and the nets of ``nets``
    train ``epochs`` passes over the rest, in batches of whole decisions (so that the
    within-decision term of the loss sees every sibling). After each epoch the held-out
    decisions measure the fit: the squared error, and the *regret*: how much worse, by the
    labels' own values, the result the nets rank first is than the labels' best. The
    checkpoint kept is the epoch of least regret (the start counts as epoch 0).
    """

    labels: tuple[str, ...] = ()
    """Label files, or directories of them (a refine run's ``label_store``)."""
    nets: tuple[str, ...] = ("contact",)
    """The nets that learn; labels of other classes are left out."""
    epochs: int = 8
    """Passes over the training labels."""
    lr: float = 1e-4
    """Adam learning rate of the first epoch."""
    lr_final: float = 1e-5
    """Learning rate of the last epoch (log-linear in between)."""
    batch_size: int = 512
    """Labels per gradient step (whole decisions, so about this many)."""
    rank_weight: float = 1.0
    """Weight of the within-decision term of the loss (:func:`training.netset.rank_loss`)."""
    holdout: float = 0.1
    """Share of the decisions kept aside to measure the fit."""
    replies: bool = False
    """After the fit, label the position after one best reply to each training label by
    the fitted nets' 1-ply value (:mod:`training.reply_labels`), and fit again from the
    start on both: the other side on roll learns what the first fit taught. Of the two
    fits the one of least held-out regret is kept."""
    ema: float = 0.0
    """With ``ema`` > 0, the nets measured after each epoch (and kept) are the exponential
    moving average of the weights over the gradient steps, each step moving the average
    ``1 - ema`` of the way to the trained weights (0.9995: the last ~2,000 steps); training
    goes on from the trained weights. 0 measures and keeps the trained weights."""

    def __post_init__(self) -> None:
        if not self.labels:
            raise ValueError("labels must name at least one label file or directory")
        unknown = set(self.nets) - {"contact", "crashed", "race"}
        if not self.nets or unknown:
            raise ValueError(f"nets must be among contact, crashed, race, got {', '.join(self.nets) or 'none'}")
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be at least 1")
        if not self.lr > 0 or not self.lr_final > 0:
            raise ValueError("lr and lr_final must be positive")
        if self.rank_weight < 0:
            raise ValueError(f"rank_weight must be at least 0, got {self.rank_weight}")
        if not 0.0 < self.holdout < 1.0:
            raise ValueError(f"holdout must be between 0 and 1 (exclusive), got {self.holdout}")
        if not 0.0 <= self.ema < 1.0:
            raise ValueError(f"ema must be at least 0 and below 1, got {self.ema}")
