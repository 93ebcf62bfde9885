"""Held values (dgan.encoding.holds): runs of holds counted per class, the dead band scaled
by local activity, the texture's choice of rule per class by the runs it gives, and the
dither that gives back the flicker of readings on a grid, never larger than their moves."""

import numpy as np

from dgan.encoding.holds import (
    MAX_DITHER,
    DeadBands,
    held,
    hold_runs,
    hold_shares,
    local_activity,
    move_sizes,
    reversal_shares,
)
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


def test_reversal_shares_count_the_moves_that_turn_back_per_class():
    series = [
        np.array([0.0, 1.0, 1.0, 0.0, 1.0]),  # up, (a hold), down, up: 2 turns in 2 pairs
        np.array([3.0, 2.0, 1.0, 0.0]),  # down, down, down: 0 in 2 (none from series 0's up)
        np.array([4.0, 4.0, 4.0]),  # no moves
    ]
    rows = SeriesRows.from_list([s[:, None] for s in series])
    # Fewer than MIN_SERIES series in a class: over all series, 2 turns in 4 pairs.
    assert reversal_shares(rows, 0, np.array([0, 1, 0]), 2).tolist() == [0.5, 0.5]
    big = SeriesRows.from_list([s[:, None] for s in series * 5])
    shares = reversal_shares(big, 0, np.array([0, 1, 2] * 5), 4)
    assert shares[:2].tolist() == [1.0, 0.0]
    assert np.isnan(shares[2]) and np.isnan(shares[3])  # never moves; no series


def test_move_sizes_are_each_class_median_move_in_units_of_a_series_spread():
    series = [
        np.array([0.0, 2.0, 2.0, 0.0]),  # moves of 2 (holds skipped), spread 1: 2
        np.array([0.0, 1.0, 3.0, 4.0]),  # moves of 1, 2, 1, spread sqrt(2.5)
        np.array([5.0, 5.0, 5.0]),  # never moves: not counted
    ]
    rows = SeriesRows.from_list([s[:, None] for s in series])
    # Fewer than MIN_SERIES series in a class: the median over all moving series.
    pooled = np.median([2.0, 1 / np.sqrt(2.5)])
    assert np.allclose(move_sizes(rows, 0, np.array([0, 1, 0]), 2), [pooled, pooled])
    big = SeriesRows.from_list([s[:, None] for s in series * 5])
    sizes = move_sizes(big, 0, np.array([0, 1, 2] * 5), 4)
    assert np.allclose(sizes[:2], [2.0, 1 / np.sqrt(2.5)])
    assert np.isnan(sizes[2]) and np.isnan(sizes[3])  # never moves; no series
    # One sort for every group: the same as a median per series and per class.
    rng = np.random.default_rng(3)
    walks = [np.round(np.cumsum(rng.normal(size=int(n))))[:, None] for n in rng.integers(5, 60, 40)]
    classes = rng.integers(0, 3, 40)
    changes = [np.diff(w[:, 0]) for w in walks]
    assert all(d.any() for d in changes)  # every walk moves: one median each
    each = np.array(
        [np.median(np.abs(d[d != 0])) / w.std() for d, w in zip(changes, walks, strict=True)]
    )
    expected = [np.median(each[classes == k]) for k in range(3)]
    assert np.allclose(move_sizes(SeriesRows.from_list(walks), 0, classes, 3), expected)


def _waves(rng, n: int, t: int) -> np.ndarray:
    """(n, t) slow sines, 6 grid steps high, of periods of 80 to 160 steps."""
    period = rng.uniform(80, 160, size=(n, 1))
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1))
    return 6 * np.sin(2 * np.pi * np.arange(t) / period + phase)


def _on_grid(rows: SeriesRows) -> SeriesRows:  # a stand-in for the value map
    return rows.with_rows(np.round(rows.rows))


def test_a_dither_gives_back_the_flicker_of_noisy_readings_on_a_grid():
    """Class 0 reads a slow wave with noise, so it flickers between grid values; class 1
    reads it clean. Generated series come out the other way round: class 0's sit on a
    grid value for as long as the wave is slow, class 1's flicker."""
    rng = np.random.default_rng(5)
    n, t = 40, 300
    classes = np.arange(n) % 2
    noisy = (classes == 0)[:, None]
    noise = rng.normal(size=(n, t)) * 0.35
    real = np.round(_waves(rng, n, t) + np.where(noisy, noise, 0.0))
    texture = SeriesTexture.fit(SeriesRows.from_padded(real[..., None]), [0], 0, classes, 2)
    real_turns = texture.reversals[0].copy()
    assert real_turns[0] > 0.4 > 0.15 > real_turns[1]
    generated = _waves(rng, n, t) + np.where(noisy, 0.0, rng.normal(size=(n, t)) * 0.35)
    generated = SeriesRows.from_padded(generated[..., None])
    before = generated.rows.copy()

    bands = texture.hold_thresholds(generated, classes, _on_grid, exact=[0])
    assert 0 < bands.dither[0, 0] < MAX_DITHER and bands.dither[0, 1] == 0
    out = _on_grid(texture.hold(generated, classes, bands))
    texture.reversals = None  # as a file from before reversals were kept: no dither
    plain_bands = texture.hold_thresholds(generated, classes, _on_grid, exact=[0])
    assert plain_bands.dither is None
    plain = _on_grid(texture.hold(generated, classes, plain_bands))
    assert np.array_equal(generated.rows, before)  # not mutated

    turns, plain_turns = (reversal_shares(r, 0, classes, 2) for r in (out, plain))
    # Near the training flicker, never past it (on the sample the dither was found on).
    assert plain_turns[0] < 0.15 and real_turns[0] - 0.03 < turns[0] <= real_turns[0]
    # Holds too: the dither takes away the generated class 0's extra ones.
    shares, plain_shares = (hold_shares(r, 0, classes, 2) for r in (out, plain))
    assert texture.holds[0, 0] - 0.02 < shares[0] < plain_shares[0] - 0.1
    runs, plain_runs = (hold_runs(r, 0, classes, 2) for r in (out, plain))
    # Runs of holds a third as far from the training ones (4.1 -> 2.8 steps against 2.5).
    assert abs(runs[0] - texture.runs[0, 0]) < (plain_runs[0] - texture.runs[0, 0]) / 3
    first = classes == 1  # the class without dither comes out as before
    assert np.array_equal(out.padded(t)[first], plain.padded(t)[first])


def test_the_dither_is_never_larger_than_the_training_series_moves():
    """Where the training series' moves are small against their spread (a charger's noise
    against its plug-in jump), the dither found from the turns alone is cut to them; where
    they are not, it is as found."""
    rng = np.random.default_rng(5)
    n, t = 40, 300
    classes = np.arange(n) % 2
    real = np.round(_waves(rng, n, t) + rng.normal(size=(n, t)) * 0.35)
    texture = SeriesTexture.fit(SeriesRows.from_padded(real[..., None]), [0], 0, classes, 2)
    assert np.all(texture.moves > 0.15)  # a grid step of waves 6 steps high
    generated = SeriesRows.from_padded(_waves(rng, n, t)[..., None])
    found = texture.hold_thresholds(generated, classes, _on_grid, exact=[0])
    assert np.all(found.dither > 0) and np.all(found.dither < texture.moves)
    moves = texture.moves
    texture.moves = None  # as a file from before moves were kept: the same where they allow
    unheld = texture.hold_thresholds(generated, classes, _on_grid, exact=[0])
    assert all(np.array_equal(a, b) for a, b in zip(unheld, found, strict=True))
    texture.moves = np.array([[found.dither[0, 0] / 4, moves[0, 1]]])
    held_to = texture.hold_thresholds(generated, classes, _on_grid, exact=[0])
    assert held_to.dither[0, 0] == found.dither[0, 0] / 4
    assert held_to.dither[0, 1] == found.dither[0, 1]
    capped, free = (_on_grid(texture.hold(generated, classes, b)) for b in (held_to, found))
    turns, free_turns = (reversal_shares(r, 0, classes, 2) for r in (capped, free))
    assert turns[0] < free_turns[0] - 0.1  # less flicker than the turns alone would give
    other = classes == 1  # the class the moves allow comes out as before
    assert np.array_equal(capped.padded(t)[other], free.padded(t)[other])


def test_the_dither_noise_is_read_from_the_series_themselves():
    rng = np.random.default_rng(6)
    series = SeriesRows.from_padded(_waves(rng, 6, 50)[..., None])
    bands = DeadBands(np.zeros((1, 1)), np.zeros((1, 1), bool), np.full((1, 1), 0.1))
    once, again = held(series, [0], None, bands), held(series, [0], None, bands)
    assert np.array_equal(once.rows, again.rows)  # the same series, the same noise
    assert not np.array_equal(once.rows, series.rows)
    other = series.with_rows(series.rows.copy())
    other.rows[0, 0] += 1.0  # one value of the first series changed
    moved = held(other, [0], None, bands)
    last = slice(len(series.rows) - 50, None)  # the last series, unchanged itself
    assert not np.array_equal(moved.rows[last], once.rows[last])


def test_the_dither_is_the_same_for_the_same_values_stored_as_objects():
    """Decoded rows with a discrete feature are an object array: its buffer holds the
    values' addresses, which differ between two decodings of the same series."""
    waves = _waves(np.random.default_rng(7), 4, 30).ravel()
    bands = DeadBands(np.zeros((1, 1)), np.zeros((1, 1), bool), np.full((1, 1), 0.1))

    def decoded() -> SeriesRows:  # a continuous feature and a category, as decoding gives
        rows = np.empty((len(waves), 2), dtype=object)
        rows[:, 0] = [float(v) for v in waves]  # new float objects each time
        rows[:, 1] = "on"
        return SeriesRows(rows, np.full(4, 30))

    once, again = held(decoded(), [0], None, bands), held(decoded(), [0], None, bands)
    assert np.array_equal(once.rows[:, 0].astype(float), again.rows[:, 0].astype(float))
    assert not np.array_equal(once.rows[:, 0].astype(float), waves)  # dithered
