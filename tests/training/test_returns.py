"""Luck-adjusted self-play returns (:mod:`training.returns`), the ``returns`` labels of
refinement: exact where the evaluator is exact, the 1-ply value after one ply, unbiased."""
from __future__ import annotations

import numpy as np
import pytest

from engine.bearoff import get_db
from engine.classes import BEAROFF1, BEAROFF2, CONTACT, classify
from engine.position import Position
from training.config import RefineConfig
from training.labels import ply1_probs
from training.refine import make_generator, valued_by
from training.returns import OPENING_WEIGHTS, RestartPool, ReturnGenerator


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """Mover's checkers by point, opponent's by his own point numbers."""
    return Position.from_points(mine, theirs).array()


def _play_out(gen: ReturnGenerator, evaluate, games: int, max_steps: int = 200) -> tuple[np.ndarray, np.ndarray]:
    bs, ts = [], []
    for _ in range(max_steps):
        b, t = gen.step(evaluate)
        bs.append(b)
        ts.append(t)
        if gen.games >= games:
            break
    return np.concatenate(bs), np.concatenate(ts)


def test_with_an_exact_evaluator_every_label_is_the_exact_value():
    # Both sides in the two-sided database: the evaluator is exact, the best play by it is
    # the best play, so every roll's luck cancels the result's deviation exactly.
    db = get_db()
    start = _board({1: 2, 3: 1, 5: 2}, {2: 2, 4: 2, 6: 1})
    assert classify(start[None])[0] == BEAROFF2
    gen = ReturnGenerator(RefineConfig(parallel_games=8), np.random.default_rng(3), start=start)
    boards, labels = _play_out(gen, db.two_sided_probs, games=16)
    assert len(boards) > 30 and gen.games >= 16
    assert np.allclose(labels, db.two_sided_probs(boards), atol=2e-3)
    assert {0.0, 1.0} != set(np.round(labels[:, 0], 3))  # not just the 0/1 results
    assert gen.explored == 0


def test_a_game_cut_after_one_ply_is_labelled_with_its_one_ply_value():
    from models.checkpoint import load_evaluator

    ev = load_evaluator("models/tabla.npz")
    start = _board({6: 4, 8: 3, 13: 5, 24: 2, 3: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert classify(start[None])[0] == CONTACT
    gen = ReturnGenerator(RefineConfig(parallel_games=4, max_game_plies=1), np.random.default_rng(5), start=start)
    boards, labels = gen.step(ev.evaluate)
    assert len(boards) == 4 and (boards == start).all()
    want = ply1_probs(ev.evaluate, start[None])[0]
    assert np.allclose(labels, want, atol=1e-5)


def test_the_labels_of_a_biased_evaluator_are_unbiased():
    # An evaluator that adds 0.1 to every live position's winning chance plays the same
    # plays as the exact one, but its values are wrong. Its labels still average to the
    # exact values: the results correct the bias that a deeper search would repeat.
    db = get_db()

    def biased(boards):
        out = db.two_sided_probs(boards).astype(np.float64)
        out[:, 0] += 0.1
        return out

    start = _board({1: 2, 3: 1, 5: 2, 6: 1}, {2: 2, 4: 2, 6: 1, 5: 1})
    gen = ReturnGenerator(RefineConfig(parallel_games=64), np.random.default_rng(11), start=start)
    boards, labels = _play_out(gen, biased, games=1500, max_steps=400)
    exact = db.two_sided_probs(boards)[:, 0]
    assert len(boards) > 5000
    assert abs(float(np.mean(labels[:, 0] - exact))) < 0.01
    assert float(np.mean(biased(boards)[:, 0] - exact)) == pytest.approx(0.1)


def test_the_opening_roll_is_never_a_double_and_its_weights_sum_to_one():
    assert OPENING_WEIGHTS.sum() == pytest.approx(1.0)
    assert OPENING_WEIGHTS.min() == 0.0 and np.count_nonzero(OPENING_WEIGHTS) == 15


def test_refinement_drops_the_positions_of_nets_that_do_not_learn():
    contact = Position.start().array()
    race = _board({1: 2, 3: 2, 8: 11}, {2: 2, 4: 1, 9: 12})
    boards = np.stack([contact, race])
    b = boards[valued_by(boards, ("contact", "crashed"))]
    assert (b == contact[None]).all(axis=1).all() and len(b) == 1
    b = boards[valued_by(boards, ("race",))]
    assert len(b) == 1 and (b[0] == race).all()


def test_an_unknown_label_kind_is_refused():
    with pytest.raises(ValueError, match="labels must be one of"):
        make_generator(RefineConfig(labels="gnubg"), np.random.default_rng(0))



def _results_by_rank(start: np.ndarray) -> tuple[set, set, set]:
    """The results (seen by the opponent) of ``start`` ranked best and second best by
    their exact values over the rolls with a choice, and the results of forced rolls."""
    from engine.movegen import legal_results
    from engine.position import flip_array
    from engine.values import cubeless_equity

    db = get_db()
    best, second, forced = set(), set(), set()
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            opp = np.stack([flip_array(k) for k in legal_results(start, d1, d2)])
            if len(opp) < 2:
                forced.add(opp[0].tobytes())
                continue
            eq = -cubeless_equity(db.two_sided_probs(opp))
            order = np.argsort(-eq, kind="stable")
            assert eq[order[0]] > eq[order[1]] + 1e-9
            best.add(opp[order[0]].tobytes())
            second.add(opp[order[1]].tobytes())
    return best, second, forced


def test_exploration_plays_the_second_best_result_when_told_to():
    db = get_db()
    start = _board({3: 1, 4: 2, 5: 1}, {2: 1, 3: 1, 5: 1, 6: 1})
    best, second, forced = _results_by_rank(start)
    assert len(second) > 5 and not best & second and not forced & second  # a roll's best is no roll's second best
    gen = ReturnGenerator(RefineConfig(parallel_games=64, explore=1.0, candidates=2), np.random.default_rng(7), start=start)
    gen.step(db.two_sided_probs)
    live = [b.tobytes() for b in gen.boards if not (b == start).all()]  # games that did not end on the first ply
    assert sum(b in second for b in live) > 20
    assert sum(b in second for b in live) <= gen.explored <= 64  # forced rolls are not counted
    assert all(b in second or b in forced for b in live)


def test_with_exploration_the_labels_of_an_exact_evaluator_are_still_exact():
    # The luck of an explored roll is measured from the result played, so the positions
    # before it keep the value of the best play and the result played gets its own value.
    db = get_db()
    start = _board({1: 1, 2: 2, 4: 1, 5: 2}, {1: 2, 3: 2, 4: 1, 6: 1})
    gen = ReturnGenerator(RefineConfig(parallel_games=8, explore=0.5, candidates=3), np.random.default_rng(9), start=start)
    boards, labels = _play_out(gen, db.two_sided_probs, games=24)
    assert len(boards) > 40
    assert np.allclose(labels, db.two_sided_probs(boards), atol=2e-3)


@pytest.mark.parametrize("lam", [0.0, 0.6])
def test_lambda_returns_of_an_exact_evaluator_are_still_exact(lam):
    db = get_db()
    start = _board({1: 2, 3: 1, 5: 2}, {2: 2, 4: 2, 6: 1})
    gen = ReturnGenerator(RefineConfig(parallel_games=8, lam=lam), np.random.default_rng(3), start=start)
    boards, labels = _play_out(gen, db.two_sided_probs, games=16)
    assert len(boards) > 30
    assert np.allclose(labels, db.two_sided_probs(boards), atol=2e-3)


def test_lambda_zero_labels_every_position_with_its_one_ply_value():
    # λ = 0 keeps none of the rest of the game: each label is the nets' own 1-ply value,
    # whatever the dice rolled later (the opening position's is over the 15 opening rolls).
    from models.checkpoint import load_evaluator

    ev = load_evaluator("models/tabla.npz")
    start = _board({6: 4, 8: 3, 13: 5, 24: 2, 3: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    gen = ReturnGenerator(RefineConfig(parallel_games=4, max_game_plies=3, lam=0.0), np.random.default_rng(5), start=start)
    boards, labels = _play_out(gen, ev.evaluate, games=4, max_steps=3)
    assert len(boards) == 12
    assert np.allclose(labels, ply1_probs(ev.evaluate, boards), atol=1e-5)


def test_lambda_blends_the_one_ply_value_and_the_return_linearly():
    # Same dice (same seed), same plays: the λ label is (1 - λ) of the 1-ply value plus λ of
    # the λ = 1 label, at the last position of each game (where the rest is the result).
    from models.checkpoint import load_evaluator

    ev = load_evaluator("models/tabla.npz")
    start = _board({6: 4, 8: 3, 13: 5, 24: 2, 3: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    out = {}
    for lam in (1.0, 0.5):
        gen = ReturnGenerator(RefineConfig(parallel_games=4, max_game_plies=2, lam=lam), np.random.default_rng(8), start=start)
        out[lam] = _play_out(gen, ev.evaluate, games=4, max_steps=2)
    (b1, y1), (bh, yh) = out[1.0], out[0.5]
    assert (b1 == bh).all()
    v1 = ply1_probs(ev.evaluate, b1)
    first = np.arange(0, len(b1), 2)  # each game's first position: its rest is one more ply
    assert np.allclose(yh[first], 0.5 * v1[first] + 0.5 * y1[first], atol=1e-5)
    assert not np.allclose(y1[first], v1[first], atol=1e-3)


def test_restarted_games_begin_at_pooled_positions_reached_from_the_start():
    # Games from a one-sided bear-off reach the two-sided database's range; with restart
    # chance 1 every finished game begins again at such a position, and restarted games do
    # not feed the pool (it holds positions reached from the start only).
    from models.checkpoint import load_evaluator

    ev = load_evaluator("models/tabla.npz")
    start = _board({1: 2, 3: 2, 5: 2, 6: 1}, {2: 2, 4: 2, 6: 2, 5: 1})
    assert classify(start[None])[0] == BEAROFF1
    cfg = RefineConfig(parallel_games=8, restart_class="bearoff2", restart=1.0, restart_pool=500)
    gen = ReturnGenerator(cfg, np.random.default_rng(4), start=start)
    for _ in range(40):
        gen.step(ev.evaluate)
        if not gen.pool.from_start.any():
            break
    assert not gen.pool.from_start.any() and gen.pool.restarts >= 8
    pooled = gen.pool.boards[:min(gen.pool.added, 500)]
    assert len(pooled) > 0 and (classify(pooled) == BEAROFF2).all()
    added, restarts = gen.pool.added, gen.pool.restarts
    labelled = np.concatenate([gen.step(ev.evaluate)[0] for _ in range(30)])
    assert gen.pool.added == added and gen.pool.restarts > restarts  # restarted games feed no pool
    assert len(labelled) > 0 and (classify(labelled) == BEAROFF2).all() and not gen.opening.any()


def test_the_restart_pool_keeps_the_last_positions_of_its_class():
    pool = RestartPool(RefineConfig(restart_class="bearoff2", restart=0.5, restart_pool=2))
    rng = np.random.default_rng(0)
    assert pool.draw(rng) is None
    a = _board({1: 2}, {2: 1})
    b = _board({2: 2}, {3: 1})
    c = _board({3: 2}, {4: 1})
    one_sided = _board({1: 4, 2: 3}, {2: 1})
    pool.add(np.stack([a, one_sided, b]))
    assert pool.added == 2
    pool.add(c[None])
    drawn = {pool.draw(rng).tobytes() for _ in range(50)}
    assert drawn == {b.tobytes(), c.tobytes()}


def test_an_unknown_restart_class_is_refused():
    with pytest.raises(ValueError, match="restart_class must be one of"):
        RefineConfig(restart_class="blitz", restart=0.5)


def test_an_unknown_policy_class_is_refused():
    with pytest.raises(ValueError, match="policy_classes must be among"):
        RefineConfig(policy_ply=2, policy_classes=("crashed", "blitz"))


def test_search_label_games_restart_from_the_pool_too():
    # The search-label generator pools and restarts as the returns generator does: every
    # finished game begins again at a pooled race position reached from the opening.
    from models.checkpoint import load_evaluator
    from engine.classes import RACE
    from training.refine import Generator

    ev = load_evaluator("models/tabla.npz")
    cfg = RefineConfig(parallel_games=4, candidates=2, keep_agreed=0.0, restart_class="race", restart=1.0, restart_pool=500)
    gen = Generator(cfg, np.random.default_rng(12))
    for _ in range(400):
        gen.step(ev.evaluate)
        if not gen.pool.from_start.any():
            break
    assert not gen.pool.from_start.any() and gen.pool.restarts >= 4 and not gen.opening.any()
    pooled = gen.pool.boards[:min(gen.pool.added, 500)]
    assert len(pooled) > 0 and (classify(pooled) == RACE).all()
    added = gen.pool.added
    for _ in range(5):
        gen.step(ev.evaluate)
    assert gen.pool.added == added


def test_search_labels_of_one_decision_share_its_number_and_only_its():
    # The rank term of the loss compares the labelled results of one roll: every disputed
    # decision's candidates carry one number, no two decisions share one, and the labels of
    # a decision lie together (what LabelBuffer.sample's span relies on).
    from models.checkpoint import load_evaluator
    from training.refine import Generator

    ev = load_evaluator("models/tabla.npz")
    gen = Generator(RefineConfig(parallel_games=8, candidates=3, keep_agreed=0.5), np.random.default_rng(21))
    seen, sizes = set(), []
    for _ in range(30):
        before = gen.decisions
        boards, targets, groups = gen.step_grouped(ev.evaluate)
        assert len(boards) == len(targets) == len(groups)
        assert ((groups >= before) & (groups < gen.decisions)).all()
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        runs = groups[starts]
        assert len(set(runs.tolist())) == len(runs) and not (set(runs.tolist()) & seen)  # together, and new
        seen |= set(runs.tolist())
        sizes += np.diff(np.r_[starts, len(groups)]).tolist()
    assert max(sizes) <= 3 and 1 in sizes and max(sizes) > 1  # agreed decisions: one label; disputed: up to 3


def test_two_ply_self_play_plays_the_best_of_the_candidates_at_two_ply():
    # For every roll of a middle-game position, the play kept is the candidate (among the
    # nets' best few) with the highest 2-ply value, and the value kept for the luck is the
    # nets' own value of that result; on some rolls that is not the nets' best play.
    from models.checkpoint import load_evaluator
    from engine.values import flip_probs as flip
    from engine.values import mover_equity as meq
    from training.labels import every_roll

    ev = load_evaluator("models/tabla.npz")
    board = _board({6: 4, 8: 3, 13: 4, 24: 2, 3: 1, 20: 1}, {6: 5, 8: 2, 13: 5, 24: 2, 11: 1})
    cfg = RefineConfig(parallel_games=21, policy_ply=2, candidates=4)
    gen = ReturnGenerator(cfg, np.random.default_rng(0), start=board)
    choice, best_opp, offsets = every_roll(ev.evaluate, board[None])
    segment = np.arange(21)
    chosen = choice.index[segment].copy()
    played = flip(np.asarray(best_opp, np.float64))
    gen._play_two_ply(ev.evaluate, choice, offsets, segment, chosen, played)
    changed = 0
    for r in range(21):
        a, b = offsets[r], offsets[r + 1]
        top = a + np.argsort(-meq(choice.opp_probs[a:b]), kind="stable")[:4]
        two_ply = meq(ply1_probs(ev.evaluate, choice.opp_boards[top]))
        assert chosen[r] == top[int(np.argmax(two_ply))]
        assert np.allclose(played[r], flip(np.asarray(choice.opp_probs[chosen[r]], np.float64)))
        changed += chosen[r] != choice.index[r]
    assert changed == gen.deeper and changed >= 1


def test_two_ply_self_play_limited_to_a_class_plays_other_classes_at_one_ply():
    from models.checkpoint import load_evaluator
    from engine.values import flip_probs as flip
    from training.labels import every_roll

    ev = load_evaluator("models/tabla.npz")
    board = _board({6: 4, 8: 3, 13: 4, 24: 2, 3: 1, 20: 1}, {6: 5, 8: 2, 13: 5, 24: 2, 11: 1})  # contact
    choice, best_opp, offsets = every_roll(ev.evaluate, board[None])
    plays = {}
    for classes in ((), ("crashed",), ("contact",)):
        gen = ReturnGenerator(RefineConfig(parallel_games=21, policy_ply=2, candidates=4, policy_classes=classes),
                              np.random.default_rng(0), start=board)
        chosen = choice.index[np.arange(21)].copy()
        gen._play_two_ply(ev.evaluate, choice, offsets, np.arange(21), chosen, flip(np.asarray(best_opp, np.float64)))
        plays[classes] = (chosen, gen.deeper)
    assert plays[("crashed",)][1] == 0 and np.array_equal(plays[("crashed",)][0], choice.index)
    assert plays[("contact",)][1] == plays[()][1] >= 1 and np.array_equal(plays[("contact",)][0], plays[()][0])
    with pytest.raises(ValueError, match="policy_classes"):
        ReturnGenerator(RefineConfig(policy_ply=2, policy_classes=("middle",)), np.random.default_rng(0))


def test_two_ply_self_play_with_an_exact_evaluator_keeps_exact_labels():
    db = get_db()
    start = _board({1: 2, 3: 1, 5: 2}, {2: 2, 4: 2, 6: 1})
    gen = ReturnGenerator(RefineConfig(parallel_games=8, policy_ply=2, lam=0.5), np.random.default_rng(3), start=start)
    boards, labels = _play_out(gen, db.two_sided_probs, games=16)
    assert len(boards) > 30 and gen.deeper == 0  # exact values: the 2-ply best is the 1-ply best
    assert np.allclose(labels, db.two_sided_probs(boards), atol=2e-3)
