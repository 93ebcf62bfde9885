"""match_texture: generated series filtered to the training series' step-to-step texture,
per class (dgan.encoding.texture), calibrated on the generator's own output together with
the value map (dgan.sampling)."""

import contextlib
import json

import numpy as np
import pytest

from dgan import DGAN, DGANConfig, OutputType
from dgan.encoding.encoder import DataEncoder
from dgan.encoding.holds import MAX_HOLD, DeadBands, hold_shares
from dgan.encoding.texture import LAGS, SeriesTexture, all_pass, autocorrelations
from dgan.errors import ParameterError, SerializationError
from dgan.privacy.public import public_encoder
from dgan.series import SeriesRows
from dgan.tabular.arrays import validate_training_arrays
from model_files import rewritten
from tiny import tiny_config


def _roughness(rows: SeriesRows) -> np.ndarray:
    """Each series' step size over its spread."""
    return np.array([np.diff(s[:, 0]).std() / s[:, 0].std() for s in rows])


def _two_textures(rng, n=40, t=300):
    """Class 0: smooth random walks; class 1: white noise. Lengths vary."""
    lengths = rng.integers(t // 2, t + 1, n)
    classes = np.arange(n) % 2
    series = [
        (np.cumsum(rng.normal(size=m)) if c == 0 else rng.normal(size=m))[:, None]
        for m, c in zip(lengths, classes, strict=True)
    ]
    return SeriesRows.from_list(series), classes


def test_each_class_gets_its_own_texture_and_keeps_its_level_and_spread():
    rng = np.random.default_rng(0)
    real, classes = _two_textures(rng)
    texture = SeriesTexture.fit(real, [0], 0, classes, 2)
    # Generated: both classes as a mix of the two textures, at levels of their own.
    middle = [
        (0.5 * np.cumsum(rng.normal(size=len(s))) + 3 * rng.normal(size=len(s)) + 100 * k)[:, None]
        for k, s in enumerate(real)
    ]
    generated = SeriesRows.from_list(middle)
    filtered = texture.apply(generated, classes, texture.kernels(generated, classes))
    before, after, target = _roughness(generated), _roughness(filtered), _roughness(real)
    smooth, rough = classes == 0, classes == 1
    assert np.median(after[smooth]) < np.median(before[smooth]) / 2  # smoothed
    assert np.median(after[rough]) > np.median(before[rough])  # roughened
    for mine in (smooth, rough):
        gap_before = abs(np.median(before[mine]) - np.median(target[mine]))
        assert abs(np.median(after[mine]) - np.median(target[mine])) < gap_before / 2
    # Each series keeps its length, mean and standard deviation.
    assert np.array_equal(filtered.lengths, generated.lengths)
    for a, b in zip(generated, filtered, strict=True):
        assert np.isclose(a.mean(), b.mean()) and np.isclose(a.std(), b.std())
    assert np.array_equal(generated.rows[:, 0], np.concatenate(middle)[:, 0])  # not mutated


def test_a_class_missing_on_either_side_passes_through_and_the_state_round_trips():
    rng = np.random.default_rng(1)
    real, _ = _two_textures(rng, n=12)
    texture = SeriesTexture.fit(real, [0], 0, np.zeros(12, np.int64), 2)  # class 1: none
    assert np.isnan(texture.real[0, 1]).all() and texture.real[0, 0, 0] == pytest.approx(1.0)
    classes = np.arange(12) % 2
    kernels = texture.kernels(real, classes)
    assert np.array_equal(kernels[0, 1], all_pass())
    out = texture.apply(real, classes, kernels)
    ones = np.repeat(classes == 1, real.lengths)
    assert np.array_equal(out.rows[ones], real.rows[ones])
    assert not np.allclose(out.rows[~ones], real.rows[~ones])
    state = json.loads(json.dumps(texture.to_json()))  # NaN saved as null
    assert state["real"][0][1] is None and state["lags"] == LAGS
    back = SeriesTexture.from_json(state)
    assert np.array_equal(back.real, texture.real, equal_nan=True)


def test_constant_and_one_step_series_come_back_as_they_are():
    rows = SeriesRows.from_list([np.full((50, 1), 3.0), np.array([[7.0]]), np.zeros((0, 1))])
    assert np.isnan(autocorrelations(rows, 0, None, 1)).all()  # nothing varies
    walks = np.cumsum(np.random.default_rng(2).normal(size=(10, 80)), axis=1)[..., None]
    texture = SeriesTexture.fit(SeriesRows.from_padded(walks), [0], None, None, 1)
    kernels = texture.kernels(SeriesRows.from_padded(walks + 1.0), None)
    out = texture.apply(rows, None, kernels)
    assert np.array_equal(out.rows, rows.rows)


def _series(rng, n=48, t=120):
    """Long series (the texture's "auto" is for 100 steps and more) of two classes."""
    classes = rng.integers(0, 2, n)
    walk = np.cumsum(rng.normal(size=(n, t)), axis=1)
    noise = rng.normal(size=(n, t)) * 5
    values = np.where(classes[:, None] == 0, walk, noise)
    return values[..., None], classes[:, None].astype(float)


def _fit(features, attributes, **config):
    base = dict(max_sequence_len=features.shape[1], sample_len=4)
    return DataEncoder.fit(
        DGANConfig(**{**base, **config}),
        features,
        [OutputType.CONTINUOUS],
        attributes,
        [OutputType.DISCRETE],
    )


def test_auto_filters_long_series_per_class_and_leaves_short_ones_alone():
    features, attributes = _series(np.random.default_rng(3))
    auto = _fit(features, attributes)
    assert auto.texture.features == [0] and auto.texture.attribute == 0
    assert auto.texture.n_classes == 2
    short = _fit(features[:, :24], attributes)  # a TimeGAN window's length
    assert short.texture is None
    assert _fit(features[:, :24], attributes, match_texture=True).texture is not None
    assert _fit(features, attributes, match_texture=False).texture is None
    assert DGANConfig.gretel(max_sequence_len=8, sample_len=2).match_texture is False
    old = {k: v for k, v in auto.to_json().items() if k != "texture"}
    assert DataEncoder.from_json(old).texture is None  # files from before: as generated
    plan = DGAN(DGANConfig(max_sequence_len=120, sample_len=10)).plan(
        features, attributes=attributes, attribute_types=[OutputType.DISCRETE], warm_up_steps=0
    )
    feature = next(c for c in plan.columns if c.role == "feature")
    assert feature.detail.endswith("(match_texture)")


@pytest.fixture(scope="module")
def trained():
    features, attributes = _series(np.random.default_rng(4))
    model = DGAN(tiny_config(max_sequence_len=120, sample_len=10, epochs=1))
    model.train_numpy(
        features, [OutputType.CONTINUOUS], attributes, [OutputType.DISCRETE],
        progress_bar=False,
    )  # fmt: skip
    return model


@contextlib.contextmanager
def _texture_swapped(model, texture):
    """``model`` decoding with ``texture`` (None: without one) for the block, calibrated
    afresh; its own texture back after it."""
    own, model.encoder.texture = model.encoder.texture, texture
    model.sampler._calibration = None
    try:
        yield model
    finally:
        model.encoder.texture = own
        model.sampler._calibration = None


def test_generation_filters_with_the_calibrated_kernels(trained):
    model = trained
    assert model.encoder.texture is not None
    model.sampler.reseed(1)
    _, series = model.generate_numpy(30)
    kernels = model.sampler.calibration().kernels
    assert kernels.shape == (1, 2, 2 * LAGS + 1)
    assert not np.allclose(kernels, all_pass())  # an untrained generator's texture is not real
    # The same noise decoded without the texture gives other series.
    with _texture_swapped(model, None):
        model.sampler.reseed(1)
        _, plain = model.generate_numpy(30)
    assert not np.allclose(np.stack(series), np.stack(plain))
    assert np.allclose([s.mean() for s in series], [s.mean() for s in plain], atol=1e-4)


def test_the_texture_is_saved_checked_and_loaded(trained, tmp_path):
    model = trained
    path = model.save(tmp_path / "m.dgan")
    loaded = DGAN.load(path)
    assert np.array_equal(loaded.encoder.texture.real, model.encoder.texture.real)
    model.sampler.reseed(5)
    loaded.sampler.reseed(5)
    assert np.array_equal(
        np.stack(model.generate_numpy(4)[1]), np.stack(loaded.generate_numpy(4)[1])
    )


@pytest.mark.parametrize(
    "where, value, message",
    [
        ("real", [[[0.5] * (LAGS + 1), None]], r"texture\.real must be a 1 x 2 list"),
        ("features", [7], r"texture\.features must be indices of continuous features"),
        ("attribute", 3, r"texture\.attribute must be null or a discrete attribute's index"),
        ("lags", 0, r"texture\.lags must be a whole number of lags from 1 to 1024"),
        ("lags", 8, r"texture\.real must be a 1 x 2 list of null or 9 numbers"),
        ("holds", [[0.5, 1.5]], r"texture\.holds must be null or, per feature and class"),
        ("holds", [[0.5]], r"texture\.holds must be null or, per feature and class"),
        ("runs", [[2.0, 0.5]], r"texture\.runs must be null or, per feature and class"),
        ("reversals", [[0.5, -0.1]], r"texture\.reversals must be null or, per feature and"),
        ("moves", [[0.5, -0.1]], r"texture\.moves must be null or, per feature and class"),
    ],
)
def test_a_broken_texture_in_a_file_is_named(trained, tmp_path, where, value, message):
    path = trained.save(tmp_path / "m.dgan")
    with rewritten(path) as (_, state):
        state["encoder"]["texture"][where] = value
    with pytest.raises(SerializationError, match=rf"invalid header: .*encoder\.{message}"):
        DGAN.load(path)


def test_fitted_autocorrelations_are_exactly_1_at_lag_0_and_within_1():
    """What the file's check asks: computed through an FFT, lag 0 came out 1 +- 1e-16 in
    some classes, and a model trained so could not be loaded."""
    rng = np.random.default_rng(9)
    lengths = rng.integers(2, 800, 600)
    series = [np.cumsum(rng.normal(size=n))[:, None] * 10.0 ** rng.uniform(-3, 5) for n in lengths]
    texture = SeriesTexture.fit(SeriesRows.from_list(series), [0], 0, np.arange(600) % 60, 60)
    assert (texture.real[..., 0] == 1.0).all()
    assert (np.abs(texture.real) <= 1.0).all()


def test_a_file_written_with_32_lags_keeps_them(trained, tmp_path):
    """Files from before the texture kept `LAGS` lags load with their own 32 and
    generate as such a texture does."""
    model = trained
    texture = model.encoder.texture
    path = model.save(tmp_path / "m.dgan")
    with rewritten(path) as (_, state):
        saved = state["encoder"]["texture"]
        saved["lags"] = 32
        saved["real"] = [[None if q is None else q[:33] for q in per] for per in saved["real"]]
    loaded = DGAN.load(path)
    assert loaded.encoder.texture.lags == 32 and texture.lags == LAGS
    assert loaded.sampler.calibration().kernels.shape == (1, 2, 65)
    short = SeriesTexture(
        texture.features, texture.attribute, texture.real[..., :33], texture.holds, texture.runs
    )
    with _texture_swapped(model, short):
        model.sampler.reseed(5)
        loaded.sampler.reseed(5)
        ours, theirs = model.generate_numpy(6)[1], loaded.generate_numpy(6)[1]
    assert np.array_equal(np.stack(ours), np.stack(theirs))


def _daily(rng, n, t, drift):
    """Hourly series with a daily cycle and noise; its phase wanders by ``drift`` radians
    an hour (0: every day alike)."""
    hours = np.arange(t)
    phase = rng.uniform(0, 2 * np.pi, (n, 1)) + np.cumsum(rng.normal(0, drift, (n, t)), axis=1)
    return SeriesRows.from_padded(
        (np.sin(2 * np.pi * hours / 24 + phase) + 0.3 * rng.normal(size=(n, t)))[..., None]
    )


def test_four_days_of_lags_keep_generated_days_as_alike_as_real_ones():
    """Generated days whose cycle wanders are filtered towards training days that repeat:
    `LAGS` lags close more than twice as much of the gap in the autocorrelation one and
    three days apart as the 32 kept before (which cannot see past a day and a third)."""
    rng = np.random.default_rng(8)
    real, generated = _daily(rng, 60, 480, 0.0), _daily(rng, 60, 480, 0.15)
    days = [24, 72]
    target = autocorrelations(real, 0, None, 1)[0, days]
    gap = np.abs(autocorrelations(generated, 0, None, 1)[0, days] - target)
    closed = {}
    for lags in (32, LAGS):
        texture = SeriesTexture([0], None, autocorrelations(real, 0, None, 1, lags)[None])
        filtered = texture.apply(generated, None, texture.kernels(generated, None))
        closed[lags] = gap - np.abs(autocorrelations(filtered, 0, None, 1)[0, days] - target)
    assert (closed[32] > 0).all() and (closed[LAGS] > 2 * closed[32]).all()


def test_a_private_run_refuses_true_and_reads_no_texture_at_auto():
    with pytest.raises(ParameterError, match="match_texture=True filters generated series"):
        DGANConfig(max_sequence_len=120, sample_len=10, dp_epsilon=5.0, match_texture=True)
    pytest.importorskip("opacus")  # the plan of a private run asks for it (the GPU image lacks it)
    features, attributes = _series(np.random.default_rng(6), n=16)
    public = {"feature 0": [-100, 100], "attribute 0": [0.0, 1.0]}
    config = DGANConfig(
        max_sequence_len=120, sample_len=10, dp_epsilon=20.0, public_values=public, large_data=False
    )
    given = dict(
        feature_types=[OutputType.CONTINUOUS],
        attributes=attributes,
        attribute_types=[OutputType.DISCRETE],
    )
    plan = DGAN(config).plan(features, **given, warm_up_steps=0)
    assert not any("match_texture" in c.detail for c in plan.columns)
    arrays = validate_training_arrays(features, *given.values(), 120)
    encoder = public_encoder(config, arrays, variable_length=False)
    assert encoder.texture is None  # long series, "auto", but nothing read from them


def test_the_autocorrelations_do_not_depend_on_how_the_series_are_chunked(monkeypatch):
    real, classes = _two_textures(np.random.default_rng(5))
    whole = autocorrelations(real, 0, classes, 2)
    chunks = SeriesRows.chunks
    monkeypatch.setattr(SeriesRows, "chunks", lambda self: chunks(self, rows=100))
    assert len(list(real.chunks())) > 10
    assert np.allclose(autocorrelations(real, 0, classes, 2), whole, rtol=0, atol=1e-12)


def _quantized_walks(rng, n=40, t=300, grid=1.0):
    """Class 0: slow random walks on a grid of ``grid`` (they hold most steps); class 1:
    fast ones (they hold few)."""
    classes = np.arange(n) % 2
    scale = np.where(classes == 0, 0.3, 4.0)[:, None]
    walks = np.round(np.cumsum(rng.normal(size=(n, t)) * scale, axis=1) / grid) * grid
    return SeriesRows.from_padded(walks[..., None]), classes


def test_hold_shares_count_repeated_values_per_class():
    rows = SeriesRows.from_list(
        [np.array([[1.0], [1.0], [np.nan], [2.0], [2.0]]), np.array([[0.0], [1.0], [2.0]])]
    )
    # Series 0: steps (1,1) held, two steps touch NaN, (2,2) held; series 1: none held.
    shares = hold_shares(rows, 0, np.array([0, 1]), 3)
    assert np.isnan(shares[2])  # a class without series
    # Fewer than MIN_SERIES series in a class: the share over all of them (2 of 4 steps).
    assert shares[:2].tolist() == [0.5, 0.5]
    walks, classes = _quantized_walks(np.random.default_rng(0))
    slow, fast = hold_shares(walks, 0, classes, 2)
    assert slow > 0.5 > fast > 0.0


def test_hold_repeats_a_value_exactly_until_a_series_leaves_its_band():
    rows = SeriesRows.from_list(
        [np.array([[0.0], [0.1], [0.05], [2.0], [2.1], [np.nan], [2.0]]), np.array([[5.0], [5.2]])]
    )
    before = rows.rows.copy()
    texture = SeriesTexture([0], 0, np.ones((1, 2, LAGS + 1)))
    out = texture.hold(rows, np.array([0, 1]), DeadBands.uniform(np.array([[0.2, 0.0]])))
    assert np.array_equal(before, rows.rows, equal_nan=True)  # not mutated
    first = out.rows[:7, 0]
    assert first[:3].tolist() == [0.0, 0.0, 0.0] and first[3:5].tolist() == [2.0, 2.0]
    assert np.isnan(first[5]) and first[6] == 2.0  # a missing value stays missing
    assert out.rows[7:, 0].tolist() == [5.0, 5.2]  # a band of 0: as it was
    # No band at all: every value as it was.
    none = texture.hold(rows, np.array([0, 1]), DeadBands.uniform(np.zeros((1, 2))))
    assert np.array_equal(none.rows, rows.rows, equal_nan=True)


def test_the_dead_bands_give_each_class_the_training_share_of_holds():
    rng = np.random.default_rng(1)
    real, classes = _quantized_walks(rng)
    texture = SeriesTexture.fit(real, [0], 0, classes, 2)
    # Generated: the same walks with a flicker the grid turns into moves at every step,
    # class 1 without its real moves (it holds more than the real one already).
    walks = real.rows[:, 0].reshape(40, 300)
    flicker = walks + rng.normal(size=walks.shape) * 0.6
    flicker[1::2] = np.round(walks[1::2] / 40) * 40
    generated = SeriesRows.from_padded(flicker[..., None])

    def on_grid(rows):  # a stand-in for the value map: values onto the training grid
        return rows.with_rows(np.round(rows.rows))

    before = hold_shares(on_grid(generated), 0, classes, 2)
    assert before[0] < texture.holds[0, 0] - 0.2 and before[1] > texture.holds[0, 1]
    bands = texture.hold_thresholds(generated, classes, on_grid, exact=[0])
    assert 0 < bands.widths[0, 0] < MAX_HOLD and bands.widths[0, 1] == 0.0
    assert not bands.local[0, 1]  # no band, no rule
    after = hold_shares(on_grid(texture.hold(generated, classes, bands)), 0, classes, 2)
    assert after[0] == pytest.approx(texture.holds[0, 0], abs=0.02)
    assert after[1] == before[1]
    # Values rounded later, not by the value map, and files without holds: no bands.
    assert not texture.hold_thresholds(generated, classes, on_grid, exact=[]).widths.any()
    texture.holds = None
    assert not texture.hold_thresholds(generated, classes, on_grid, exact=[0]).widths.any()


def test_the_hold_shares_runs_reversals_and_moves_round_trip_and_files_without_them_load():
    real, _ = _quantized_walks(np.random.default_rng(2), n=12)
    texture = SeriesTexture.fit(real, [0], 0, np.zeros(12, np.int64), 2)  # class 1: none
    state = json.loads(json.dumps(texture.to_json()))
    assert state["holds"][0][1] is None and state["runs"][0][1] is None
    assert state["reversals"][0][1] is None
    back = SeriesTexture.from_json(state)
    assert np.array_equal(back.holds, texture.holds, equal_nan=True)
    assert np.array_equal(back.runs, texture.runs, equal_nan=True) and back.runs[0, 0] > 1
    assert np.array_equal(back.reversals, texture.reversals, equal_nan=True)
    assert 0 < back.reversals[0, 0] < 1
    assert state["moves"][0][1] is None and back.moves[0, 0] > 0
    assert np.array_equal(back.moves, texture.moves, equal_nan=True)
    del state["moves"]
    assert SeriesTexture.from_json(state).moves is None
    del state["reversals"]
    assert SeriesTexture.from_json(state).reversals is None
    del state["runs"]
    assert SeriesTexture.from_json(state).runs is None
    del state["holds"]
    assert SeriesTexture.from_json(state).holds is None


def test_generated_series_hold_as_often_as_the_training_ones():
    rng = np.random.default_rng(3)
    walks, classes = _quantized_walks(rng, n=64, t=120)
    features = walks.rows.reshape(64, 120, 1) + 1000.0  # positive: the value map's log scale
    config = tiny_config(max_sequence_len=120, sample_len=10, epochs=1, match_marginals=True)
    model = DGAN(config)
    model.train_numpy(
        features, [OutputType.CONTINUOUS], classes[:, None].astype(float),
        [OutputType.DISCRETE], progress_bar=False,
    )  # fmt: skip
    texture = model.encoder.texture
    assert texture.holds is not None and model.encoder.marginals is not None

    def generated_shares():
        model.sampler._calibration = None
        model.sampler.reseed(7)
        attributes, series = model.generate_numpy(400)
        rows = SeriesRows.from_list(series)
        return hold_shares(rows, 0, attributes[:, 0].astype(np.int64), 2)

    matched = generated_shares()
    holds, texture.holds = texture.holds, None
    try:
        plain = generated_shares()
    finally:
        texture.holds = holds
        model.sampler._calibration = None
    gap, gap_plain = np.abs(matched - holds[0]), np.abs(plain - holds[0])
    assert gap.max() < 0.05 and gap.sum() < gap_plain.sum()


def test_a_texture_that_is_not_an_object_is_named(trained, tmp_path):
    path = trained.save(tmp_path / "m.dgan")
    with rewritten(path) as (_, state):
        state["encoder"]["texture"] = 5
    with pytest.raises(SerializationError, match=r"encoder\.texture must be an object, got 5"):
        DGAN.load(path)
