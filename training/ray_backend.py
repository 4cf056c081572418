"""TD(λ) self-play training across machines on Ray: self-play actors and one learner.

Each *actor* (one CPU, anywhere in the cluster) holds a copy of the class nets and plays
``parallel_games`` games at once with :class:`training.selfplay.SelfPlay`, valuing every
position with :meth:`training.netset.TorchNets.evaluate`, exactly as a local worker does.
A call to :meth:`SelfPlayActor.play` plays for ``call_seconds`` and returns the positions
of the games finished meanwhile with their λ-return targets (the
:class:`training.selfplay.TargetBuffer` of the local workers). Games in progress carry
over from one call to the next: the actor never stops playing to take new weights.

The *learner* is the driver: it keeps two calls queued on every actor, puts the positions
it gets into a :class:`~training.selfplay.TargetBuffer`, takes Adam steps on them with
:meth:`~training.netset.TorchNets.train_step` (each position teaches once, as locally)
and every ``publish_every`` updates puts the weights into the object store
(``ray.put``); the next call queued on each actor carries the new reference and the actor
loads the weights before it plays on. An actor's *staleness* is how many updates the
learner had made past the weights a call played with.

The clock of ``minutes`` starts once the actors have started (imports, compiled kernels).
Checkpoints are the local trainer's (:func:`training.trainer.save_run`: format 2, same
``stages`` and ``history``; the optimizer list holds the learner's state), so a run
resumes with either backend. An actor that dies is replaced (a new seed) and the run goes
on; an error in the learner, Ctrl-C or SIGTERM ends the run with a final checkpoint.
"""
from __future__ import annotations

import logging
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.checkpoint import default_bearoff
from models.network import NetConfig
from training.config import RayConfig, TrainConfig
from training.netset import TorchNets
from training.ray_cluster import cluster_cpus, connect, import_ray
from training.selfplay import SelfPlay, TargetBuffer
from training.trainer import TrainState, _raise_interrupt, note_strength, open_run, record_progress, save_run, strength_check

log = logging.getLogger(__name__)

QUEUED_CALLS = 2
"""Calls kept queued on each actor, so that it starts the next one as soon as it sends."""
STARTUP_SECONDS = 300
"""How long the run waits for its actors to start before the clock starts (then it goes on without the late ones)."""
STRENGTH_WAIT_SECONDS = 300
"""How long the end of a run waits for the strength check in flight."""
MAX_EARLY_DEATHS = 3
"""An actor slot whose actors die this many times in a row before sending anything ends the run."""


def numpy_weights(nets: TorchNets) -> dict[str, dict[str, np.ndarray]]:
    """The weights of every net as numpy arrays (what the learner broadcasts)."""
    return {n: {k: v.detach().numpy().copy() for k, v in m.state_dict().items()} for n, m in nets.modules.items()}


class SelfPlayActor:
    """One self-play process of a Ray run (wrapped with ``ray.remote`` by :func:`train_ray`)."""

    def __init__(self, configs: dict[str, dict], cfg: dict, seed: list[int], call_seconds: float) -> None:
        import torch

        torch.set_num_threads(1)
        self.cfg = TrainConfig(**cfg)
        self.nets = TorchNets({n: NetConfig(**c) for n, c in configs.items()}, default_bearoff())
        self.selfplay = SelfPlay(self.cfg.parallel_games, np.random.default_rng(seed), self.cfg.max_game_plies,
                                 self.cfg.epsilon)
        self.call_seconds = call_seconds
        self.version = -1
        self.games = 0
        SelfPlay(1, np.random.default_rng(0)).step(self.nets.evaluate)  # compiled kernels loaded before the clock starts

    def played(self) -> int:
        """Games this actor has finished."""
        return self.games

    def play(self, version: int, weights: list | None) -> dict[str, Any]:
        """Load ``weights`` (``[ObjectRef]`` of :func:`numpy_weights`, or None: keep the
        current ones) as update ``version``, play for ``call_seconds`` and return the
        finished games' positions and targets."""
        import ray
        import torch

        if weights is not None and version != self.version:
            for n, sd in ray.get(weights[0]).items():
                self.nets.modules[n].load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in sd.items()})
            self.version = version
        buf = TargetBuffer()
        games = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < self.call_seconds:
            for boards, vals in self.selfplay.step(self.nets.evaluate):
                buf.add_game(boards, vals, self.cfg.lam)
                games += 1
        self.games += games
        boards, targets = buf.take_all()
        return {"boards": boards, "targets": targets, "games": games, "seconds": time.perf_counter() - t0,
                "version": self.version, "node": ray.get_runtime_context().get_node_id()}


@dataclass
class RayTrainState(TrainState):
    """A :class:`~training.trainer.TrainState` with what the Ray run did where."""

    updates: int = 0
    """Learner updates (Adam steps) of this run."""
    games_by_actor: dict[str, int] = field(default_factory=dict)
    """Games per actor (``<slot>.<generation>``: a replaced actor gets the next generation)."""
    games_by_node: dict[str, int] = field(default_factory=dict)
    """Games per Ray node id."""
    actors_replaced: int = 0
    weight_bytes: int = 0
    """Size of one weight broadcast."""
    learn_seconds: float = 0.0
    """Time the learner spent in training steps."""
    calls: int = 0
    """Actor calls received."""
    stale_sum: int = 0
    """Staleness (updates behind) summed over the calls received."""

    @property
    def staleness_mean(self) -> float:
        """Mean updates the learner had made past the weights a call played with."""
        return self.stale_sum / self.calls if self.calls else float("nan")


class _Actors:
    """The actor slots of a run: start, queue calls, replace the dead.

    Actors are named ``tabla-selfplay-<run>-<slot>.<generation>`` in the job's namespace.
    """

    def __init__(self, ray, cfg: TrainConfig, rcfg: RayConfig, configs: dict[str, dict], n: int) -> None:
        self.ray, self.cfg, self.rcfg, self.configs = ray, cfg, rcfg, configs
        self.remote = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(SelfPlayActor)
        self.run = uuid.uuid4().hex[:8]  # actor names are the run's own (a killed actor's name is freed late)
        self.handles: list[Any] = [None] * n
        self.generation = [-1] * n
        self.sent = [-1] * n  # the weights version the last queued call carries
        self.early_deaths = [0] * n
        self.pending: dict[Any, int] = {}  # call ref -> slot
        for slot in range(n):
            self.start(slot)

    def wait_ready(self, timeout: float) -> int:
        """Wait until the actors have started (at most ``timeout`` s); how many have."""
        ready, _ = self.ray.wait([h.played.remote() for h in self.handles], num_returns=len(self.handles), timeout=timeout)
        return len(ready)

    def name(self, slot: int) -> str:
        return f"{slot}.{self.generation[slot]}"

    def start(self, slot: int) -> None:
        self.generation[slot] += 1
        seed = [self.cfg.seed, 1000 + slot, self.generation[slot]]
        self.handles[slot] = self.remote.options(name=f"tabla-selfplay-{self.run}-{self.name(slot)}").remote(
            self.configs, self.cfg.to_dict(), seed, self.rcfg.call_seconds)
        self.sent[slot] = -1

    def submit(self, slot: int, version: int, weights: list) -> None:
        carry = weights if self.sent[slot] != version else None
        ref = self.handles[slot].play.remote(version, carry)
        self.sent[slot] = version
        self.pending[ref] = slot

    def replace(self, slot: int, version: int, weights: list) -> None:
        """Start a new actor in ``slot`` (its calls in flight are dropped)."""
        for ref in [r for r, s in self.pending.items() if s == slot]:
            del self.pending[ref]
        self.early_deaths[slot] += 1
        if self.early_deaths[slot] >= MAX_EARLY_DEATHS:
            raise RuntimeError(f"self-play actor {slot} died {MAX_EARLY_DEATHS} times before sending games; see the Ray logs")
        try:
            self.ray.kill(self.handles[slot])
        except Exception:  # already gone
            pass
        self.start(slot)
        for _ in range(QUEUED_CALLS):
            self.submit(slot, version, weights)

    def ready(self, timeout: float) -> list[Any]:
        """The finished calls: waits up to ``timeout`` s for one, then takes every other one done."""
        pending = list(self.pending)
        ready, rest = self.ray.wait(pending, num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return ready

    def stop(self) -> None:
        for h in self.handles:
            try:
                self.ray.kill(h)
            except Exception:  # already gone
                pass


def train_ray(
    cfg: TrainConfig,
    rcfg: RayConfig,
    out_dir: Path,
    games: int | None = None,
    minutes: float | None = None,
    resume: Path | None = None,
    progress: bool = True,
) -> RayTrainState:
    """Run self-play training on Ray until ``games`` more games or ``minutes`` have passed."""
    import torch
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    ray = import_ray()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    nets, base, opt_states = open_run(cfg, resume, stage={"backend": "ray", "ray": rcfg.to_dict()})
    state = RayTrainState(**vars(base))
    opts = {n: torch.optim.Adam(m.parameters(), lr=cfg.lr) for n, m in nets.modules.items()}
    for n, st in ((opt_states[0] if opt_states else None) or {}).items():
        try:
            opts[n].load_state_dict(st)
        except (ValueError, KeyError):
            log.warning("optimizer state of net %s did not fit; starting fresh", n)
    rng = np.random.default_rng([cfg.seed, 999])
    started = connect(rcfg.address)
    writer = SummaryWriter(log_dir=str(out_dir / "tb"))
    buf = TargetBuffer()
    start_games = state.games
    target_games = None if games is None else start_games + games
    wall0 = state.wall_seconds
    window = {"games": 0, "loss": 0.0, "rows": 0, "updates": 0, "learn_s": 0.0, "positions": 0, "stale": []}
    actor_window: dict[int, list[float]] = {}
    strength: tuple[Any, int, float] | None = None  # the check in flight: its ref, games and wall seconds
    remote_check = ray.remote(num_cpus=0)(strength_check)  # beside the actors, as the local check runs beside the workers
    bar = tqdm(total=games, initial=0, unit="game", disable=not progress, dynamic_ncols=True)
    actors: _Actors | None = None
    t0 = time.time()

    def checkpoint() -> None:
        save_run(out_dir, "latest", nets, cfg, state, [{n: o.state_dict() for n, o in opts.items()}])

    def log_window(now: float) -> None:
        span = now - last_log
        rows = window["rows"]
        loss = window["loss"] / rows if rows else float("nan")
        record_progress(writer, cfg, state, window["games"] / span, loss, bar)
        g = state.games
        writer.add_scalar("ray/learner_updates_per_s", window["updates"] / span, g)
        writer.add_scalar("ray/learner_positions_per_s", window["positions"] / span, g)
        writer.add_scalar("ray/learner_busy", window["learn_s"] / span, g)
        writer.add_scalar("ray/actors_replaced", state.actors_replaced, g)
        if window["stale"]:
            writer.add_scalar("ray/staleness_updates", float(np.mean(window["stale"])), g)
            writer.add_scalar("ray/staleness_updates_max", float(np.max(window["stale"])), g)
        for slot, (gm, sec) in actor_window.items():
            writer.add_scalar(f"ray/actor_games_per_s/{slot}", gm / sec if sec else 0.0, g)
        state.metrics["ray/learner_updates_per_s"] = window["updates"] / span
        window.update(games=0, loss=0.0, rows=0, updates=0, learn_s=0.0, positions=0, stale=[])
        actor_window.clear()

    # SIGTERM stops as Ctrl-C does, with a final checkpoint (see training.trainer)
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        n_actors = rcfg.actors or cluster_cpus()
        if n_actors > cluster_cpus():
            log.warning("%d actors on a cluster of %d CPUs: the extra ones wait for a free CPU", n_actors, cluster_cpus())
        version = 0
        host = numpy_weights(nets)
        weights = [ray.put(host)]
        state.weight_bytes = sum(v.nbytes for sd in host.values() for v in sd.values())
        actors = _Actors(ray, cfg, rcfg, {n: c.to_dict() for n, c in nets.configs.items()}, n_actors)
        up = actors.wait_ready(STARTUP_SECONDS)
        if up < n_actors:
            log.warning("%d of %d self-play actors started within %d s; the others join when they can",
                        up, n_actors, STARTUP_SECONDS)
        for slot in range(n_actors):
            for _ in range(QUEUED_CALLS):
                actors.submit(slot, version, weights)
        t0 = time.time()
        last_ckpt = last_eval = last_log = t0
        while True:
            for ref in actors.ready(timeout=0.5):
                slot = actors.pending.pop(ref, None)
                if slot is None:  # a call of an actor replaced meanwhile
                    continue
                try:
                    got = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError):
                    log.warning("self-play actor %s died: starting a new one", actors.name(slot))
                    state.actors_replaced += 1
                    actors.replace(slot, version, weights)
                    continue
                actors.early_deaths[slot] = 0
                actors.submit(slot, version, weights)
                buf.add(got["boards"], got["targets"])
                state.games += got["games"]
                state.positions += len(got["boards"])
                window["games"] += got["games"]
                window["stale"].append(state.updates - got["version"])
                state.calls += 1
                state.stale_sum += state.updates - got["version"]
                name = actors.name(slot)
                state.games_by_actor[name] = state.games_by_actor.get(name, 0) + got["games"]
                state.games_by_node[got["node"]] = state.games_by_node.get(got["node"], 0) + got["games"]
                aw = actor_window.setdefault(slot, [0.0, 0.0])
                aw[0] += got["games"]
                aw[1] += got["seconds"]
            t_learn = time.perf_counter()
            for b, t in buf.batches(cfg.batch_size, rng):
                for loss, rows in nets.train_step(b, t, opts, cfg.lr_at(state.games)).values():
                    window["loss"] += loss * rows
                    window["rows"] += rows
                state.updates += 1
                window["updates"] += 1
                window["positions"] += len(b)
                if state.updates % rcfg.publish_every == 0:
                    version = state.updates
                    weights = [ray.put(numpy_weights(nets))]
            window["learn_s"] += time.perf_counter() - t_learn
            state.learn_seconds += time.perf_counter() - t_learn
            now = time.time()
            state.wall_seconds = wall0 + (now - t0)
            bar.update(state.games - start_games - bar.n)
            if now - last_log >= 10:
                log_window(now)
                last_log = now
            if strength is not None and ray.wait([strength[0]], timeout=0)[0]:
                note_strength(ray.get(strength[0]), state, writer, strength[1], strength[2])
                strength = None
            if cfg.eval_minutes > 0 and now - last_eval >= cfg.eval_minutes * 60 and strength is None:
                strength = (remote_check.remote(nets.numpy_nets(), cfg.eval_games, state.games), state.games, state.wall_seconds)
                last_eval = now
            if now - last_ckpt >= cfg.checkpoint_minutes * 60:
                checkpoint()
                last_ckpt = time.time()
            if target_games is not None and state.games >= target_games:
                break
            if minutes is not None and now - t0 >= minutes * 60:
                break
        if strength is not None:  # the last check in flight is worth its wait
            done, _ = ray.wait([strength[0]], timeout=STRENGTH_WAIT_SECONDS)
            if done:
                note_strength(ray.get(strength[0]), state, writer, strength[1], strength[2])
    except KeyboardInterrupt:
        log.warning("interrupted: writing a final checkpoint")
    finally:
        signal.signal(signal.SIGTERM, previous_term)
        state.wall_seconds = wall0 + (time.time() - t0)
        try:
            checkpoint()
        finally:
            if actors is not None:
                actors.stop()
            if started:
                ray.shutdown()
            bar.close()
            writer.close()
    return state
