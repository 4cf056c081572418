"""Rollouts on Ray: the slices of trial numbers of a rollout run as Ray tasks.

:class:`RaySlices` is an :data:`engine.rollout.SliceMap`: the rollout's
:class:`~engine.rollout.TrialJob` (evaluator, position, spec) goes into the object store
once, each task plays one slice with :meth:`TrialJob.run`, and the rows come back as the
tasks finish. A trial's game depends only on the seed and its number, so the result is
the local backend's, whatever the cluster.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from engine.rollout import TrialJob
from engine.rollout_trials import TrialRows
from training.ray_cluster import cluster_cpus, import_ray

SLICES_PER_CPU = 4
"""Tasks per CPU of the cluster for one set of trials (the last ones finish close together)."""


def _play_slice(job: TrialJob, trials: np.ndarray) -> TrialRows:
    return job.run(trials)


class RaySlices:
    """Plays rollout slices as Ray tasks of one CPU each (Ray must be connected)."""

    def __init__(self, tasks: int | None = None) -> None:
        self.ray = import_ray()
        self.tasks = tasks or SLICES_PER_CPU * cluster_cpus()
        self.remote = self.ray.remote(num_cpus=1)(_play_slice)
        self._job: TrialJob | None = None
        self._ref: Any = None

    def __call__(self, job: TrialJob, trials: np.ndarray) -> Iterator[TrialRows]:
        ray = self.ray
        if job is not self._job:  # one put per rollout, also when it stops by standard error
            self._job, self._ref = job, ray.put(job)
        pending = [self.remote.remote(self._ref, piece) for piece in np.array_split(trials, self.tasks) if len(piece)]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                yield ray.get(ref)
