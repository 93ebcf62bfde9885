"""Held values (dgan.encoding.holds): runs of holds counted per class, the dead band scaled
by local activity, and the texture's choice of rule per class by the runs it gives."""

import numpy as np

from dgan.encoding.holds import DeadBands, held, hold_runs, hold_shares, local_activity
from dgan.encoding.texture import SeriesTexture
from dgan.series import SeriesRows

STRETCH = 20  # steps of each calm or busy stretch


def _stretches(rng, n: int, t: int = 200) -> np.ndarray:
    """(n, t) random walks whose step sizes alternate between calm (0.05) and busy (1.0)
    every `STRETCH` steps."""
    busy = (np.arange(t) // STRETCH) % 2 == 1
    return np.cumsum(rng.normal(size=(n, t)) * np.where(busy, 1.0, 0.05), axis=1)


def _busy(t: int) -> np.ndarray:
    return (np.arange(t) // STRETCH) % 2 == 1


def test_hold_runs_are_the_mean_run_of_held_steps_per_class():
    series = [
        np.array([1.0, 1.0, 1.0, 2.0, 2.0, 3.0]),  # runs of 2 and 1 held steps
        np.array([0.0, 1.0, 2.0]),  # never holds
        np.array([5.0, 5.0, np.nan, 5.0, 5.0]),  # a gap ends a run: 1 and 1
    ]
    rows = SeriesRows.from_list([s[:, None] for s in series])
    # Fewer than MIN_SERIES series in a class: over all series, 5 held steps in 4 runs.
    assert hold_runs(rows, 0, np.array([0, 1, 0]), 2).tolist() == [1.25, 1.25]  # class 1 too
    big = SeriesRows.from_list([s[:, None] for s in series * 5])
    runs = hold_runs(big, 0, np.array([0, 1, 2] * 5), 4)
    assert runs[:3].tolist()[0] == 1.5 and runs[2] == 1.0
    assert np.isnan(runs[1]) and np.isnan(runs[3])  # never holds; no series


def test_local_activity_is_high_in_busy_stretches_and_low_in_calm_ones():
    walks = _stretches(np.random.default_rng(0), 4)
    activity = local_activity(walks)
    inner = np.arange(200) % STRETCH
    inner = (inner > 4) & (inner < STRETCH - 4)  # away from the stretches' edges
    busy = _busy(200)
    assert np.median(activity[:, busy & inner]) > 1.5
    assert np.median(activity[:, ~busy & inner]) < 0.2
    flat = local_activity(np.ones((1, 5)))
    assert flat.tolist() == [[1.0] * 5]  # never changes: one band throughout
    assert local_activity(np.ones((2, 1))).tolist() == [[1.0], [1.0]]  # one step: no change


def test_a_local_band_spreads_holds_more_evenly_over_calm_and_busy_stretches():
    walks = _stretches(np.random.default_rng(1), 30)
    rows = SeriesRows.from_padded(walks[..., None])
    busy = np.tile(_busy(200)[1:], 30)

    def calm_over_busy(local: bool) -> float:
        bands = DeadBands(np.array([[0.05]]), np.array([[local]]))
        x = held(rows, [0], None, bands).rows[:, 0].reshape(30, 200)
        holds = (np.diff(x, axis=1) == 0).ravel()
        return holds[~busy].mean() / holds[busy].mean()

    # One width a series holds the calm stretches nearly whole and few busy steps (about
    # 6 to 1); scaled by local activity, about 1.5 to 1.
    assert calm_over_busy(False) > 4.0 > 2.5 > calm_over_busy(True)
    assert np.array_equal(rows.rows[:, 0], walks.ravel())  # not mutated


def test_each_class_takes_the_rule_whose_runs_are_nearer_its_training_runs():
    """Class 0 holds at random steps in short runs (a gesture's holds break its moves);
    class 1 holds its calm stretches whole (a sensor on a grid). Generated series of both
    never hold."""
    rng = np.random.default_rng(2)
    n, t = 40, 200
    classes = np.arange(n) % 2
    busy = _busy(t)
    steps = rng.normal(size=(n, t)) * np.where(busy, 1.0, 0.05)
    scattered = rng.random((n, t)) < 0.4
    steps[classes == 0] *= ~scattered[classes == 0]
    steps[classes == 1] *= busy  # calm: constant
    real = SeriesRows.from_padded(np.cumsum(steps, axis=1)[..., None])
    texture = SeriesTexture.fit(real, [0], 0, classes, 2)
    assert texture.runs[0, 0] < 2.0 < 10.0 < texture.runs[0, 1]

    generated = SeriesRows.from_padded(_stretches(rng, n, t)[..., None])
    bands = texture.hold_thresholds(generated, classes, lambda rows: rows, exact=[0])
    assert bands.local.tolist() == [[True, False]]
    out = texture.hold(generated, classes, bands)
    shares, runs = hold_shares(out, 0, classes, 2), hold_runs(out, 0, classes, 2)
    assert np.allclose(shares, texture.holds[0], atol=0.02)
    assert runs[0] < 2.5 < 3.5 < runs[1]  # short runs where they are short, long where long
    # Files from before runs were kept: one width a series for every class.
    texture.runs = None
    assert not texture.hold_thresholds(generated, classes, lambda r: r, exact=[0]).local.any()
