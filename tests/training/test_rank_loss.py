"""The within-decision loss (:func:`training.netset.rank_loss`) and the label buffer that
keeps a decision's labels together (:class:`training.refine.LabelBuffer`)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from training.netset import rank_loss
from training.refine import LabelBuffer

PROBS = torch.tensor([[0.5, 0.1, 0.0, 0.1, 0.0], [0.6, 0.1, 0.0, 0.1, 0.0], [0.7, 0.2, 0.0, 0.0, 0.0]])


def test_an_error_shared_by_every_result_of_a_decision_costs_nothing():
    # a shift of every probability by -0.05 moves each result's equity by the same amount
    assert rank_loss(PROBS, PROBS - 0.05, np.array([4, 4, 9])).item() == pytest.approx(0.0, abs=1e-12)


def test_a_result_alone_in_its_decision_costs_nothing():
    assert rank_loss(PROBS, PROBS * 0.5, np.array([1, 2, 3])).item() == pytest.approx(0.0, abs=1e-12)


def test_the_error_of_a_difference_between_siblings_is_its_deviation_from_their_mean():
    # the first result's label wins 0.1 more: its equity error is -0.2, its sibling's 0;
    # both deviate 0.1 from their mean -0.1; the third result is alone: (0.01 + 0.01 + 0) / 3
    target = PROBS.clone()
    target[0, 0] += 0.1
    assert rank_loss(PROBS, target, np.array([4, 4, 9])).item() == pytest.approx(0.02 / 3, rel=1e-5)


def test_labels_without_a_decision_are_each_their_own():
    buf = LabelBuffer(10)
    buf.add(np.zeros((3, 26), np.int8), np.zeros((3, 5), np.float32))
    buf.add(np.zeros((2, 26), np.int8), np.zeros((2, 5), np.float32), np.array([7, 7]))
    assert len(set(buf.groups[:5].tolist())) == 4


def test_drawing_whole_decisions_brings_every_label_of_a_drawn_decision_once():
    buf = LabelBuffer(50)
    groups = np.repeat(np.arange(12), [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6])[:40]
    boards = np.zeros((40, 26), np.int8)
    boards[:, 0] = np.arange(40)  # tells the labels apart
    buf.add(boards, np.zeros((40, 5), np.float32), groups)
    b, _, g = buf.sample(np.random.default_rng(1), 6, span=5)
    assert len(np.unique(b[:, 0])) == len(b)
    for d in np.unique(g):
        assert sorted(b[g == d, 0].tolist()) == np.flatnonzero(groups == d).tolist()
