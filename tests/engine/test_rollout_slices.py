"""A rollout's slices played by a given map (as Ray does) give the rows of the local loop."""
import numpy as np
from fake_evaluators import PipEvaluator
from rollout_helpers import assert_same_rows

from engine.position import Position
from engine.rollout import RolloutSettings, rollout, rollout_plays

START = Position.start().array()


def uneven_reversed(job, trials):
    """Slices of 1, 2, 3, ... trials, played last first."""
    cuts = np.cumsum(np.arange(1, len(trials)))
    pieces = [p for p in np.split(trials, cuts[cuts < len(trials)]) if len(p)]
    for piece in reversed(pieces):
        yield job.run(piece)


def test_a_slice_map_gives_the_rows_of_the_local_rollout_whatever_the_split():
    s = RolloutSettings(trials=40, truncate=5, cubeful=True, seed=4)
    local = rollout(PipEvaluator(), START, s)
    mapped = rollout(PipEvaluator(), START, s, slice_map=uneven_reversed)
    assert_same_rows(mapped.rows, local.rows)
    assert {**mapped.to_dict(), "seconds": 0} == {**local.to_dict(), "seconds": 0}


def test_a_slice_map_serves_every_candidate_of_a_play_rollout_and_the_standard_error_stop():
    s = RolloutSettings(trials=648, truncate=2, until_se=0.5, seed=2)
    calls = []

    def counting(job, trials):
        calls.append(len(trials))
        yield from uneven_reversed(job, trials)

    local = rollout_plays(PipEvaluator(), START, (3, 1), s, top=2, choose_ply=1)
    mapped = rollout_plays(PipEvaluator(), START, (3, 1), s, top=2, choose_ply=1, slice_map=counting)
    assert [p.result.equity for p in mapped] == [p.result.equity for p in local]
    assert calls and all(n <= 324 for n in calls)  # chunk by chunk, checking the error between chunks


def test_trials_from_several_starts_in_one_loop_give_each_start_its_own_rows():
    # One loop playing the trials of two positions (as rollout labels do) gives the rows of
    # two loops, each over its own position: a trial depends on its number and start only.
    from engine.rollout_trials import TrialLoop, TrialSpec
    from engine.position import flip_array
    from engine.movegen import legal_results

    other = flip_array(legal_results(START, 3, 1)[0])
    spec = TrialSpec(ply=1, truncate=6, seed=5)
    trials = np.arange(6)
    both = TrialLoop(PipEvaluator(), START, spec).run(np.tile(trials, 2), slots=5, starts=np.repeat(np.stack([START, other]), 6, axis=0))
    for k, board in enumerate((START, other)):
        alone = TrialLoop(PipEvaluator(), board, spec).run(trials, slots=4)
        np.testing.assert_allclose(both.probs[6 * k:6 * k + 6], alone.probs)
        np.testing.assert_allclose(both.luck[6 * k:6 * k + 6], alone.luck)
        np.testing.assert_array_equal(both.half_moves[6 * k:6 * k + 6], alone.half_moves)
