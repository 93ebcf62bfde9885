import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dgan import DGAN, DGANConfig, Normalization, OutputType
from dgan.encoding.encoder import ContinuousEncoder, DataEncoder, DiscreteEncoder, encoder_from_json
from dgan.encoding.log_scale import around_zero, log_floor, to_log
from dgan.errors import DataError, ParameterError, SerializationError

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(
    values=hnp.arrays(np.float64, st.integers(1, 50), elements=finite),
    normalization=st.sampled_from(list(Normalization)),
)
def test_continuous_round_trip_and_range(values, normalization):
    enc = ContinuousEncoder(normalization).fit(values)
    encoded = enc.transform(values)
    low = 0.0 if normalization == Normalization.ZERO_ONE else -1.0
    assert encoded.min() >= low - 1e-6 and encoded.max() <= 1 + 1e-6
    if enc.log_floor is None:
        span = max(values.max() - values.min(), 1e-12)
        np.testing.assert_allclose(enc.inverse(encoded), values, atol=span * 1e-6 + 1e-9)
    else:  # float32 steps of the log scale: errors relative to each value
        decades = np.abs(to_log(np.array([values.min(), values.max()]), enc.log_floor)).max()
        rtol = 1e-6 * max(decades, 1.0) * 10
        np.testing.assert_allclose(enc.inverse(encoded), values, rtol=rtol, atol=enc.log_floor)


@given(
    values=hnp.arrays(np.float64, st.integers(2, 60), elements=finite),
    normalization=st.sampled_from(list(Normalization)),
)
def test_a_log_scale_is_used_exactly_when_values_span_orders_of_magnitude(values, normalization):
    enc = ContinuousEncoder(normalization).fit(values)
    spans = log_floor(values) is not None
    assert (enc.log_floor is not None) == (spans and not around_zero(values))
    assert ContinuousEncoder(normalization, log_scale=False).fit(values).log_floor is None
    again = ContinuousEncoder.from_json(enc.to_json())
    np.testing.assert_array_equal(again.transform(values), enc.transform(values))


def test_quiet_and_loud_classes_keep_their_shapes_on_the_log_scale():
    """Amplitudes 0.01 and 10,000 in one variable: linear scaling squeezes the quiet class
    into the bottom 1e-6 of the range, which the generator's output must hit to that
    precision; the log scale spreads it over a tenth of the range."""
    t = np.linspace(0, 6, 100)
    quiet, loud = 0.01 * (1.5 + np.sin(t)), 1e4 * (1.5 + np.sin(t))
    values = np.concatenate([quiet, loud])
    for log_scale, spread in ((False, 1e-6), ("auto", 0.05)):
        enc = ContinuousEncoder(Normalization.ZERO_ONE, log_scale=log_scale).fit(values)
        encoded = enc.transform(quiet)
        assert (np.ptp(encoded) > 0.05) == (spread > 0.01)
        np.testing.assert_allclose(enc.inverse(encoded), quiet, rtol=1e-4)
    old = {k: v for k, v in enc.to_json().items() if not k.startswith("log_")}
    assert ContinuousEncoder.from_json(old).log_floor is None  # files from before: linear


def test_waves_around_zero_stay_linear_unless_asked():
    """Alternating currents of 0.01 and 100 amperes: four orders of magnitude, but the
    signed log would square each wave; "auto" keeps them linear, True still logs them."""
    t = np.arange(400.0)
    waves = np.concatenate([0.01 * np.sin(t / 2), 100 * np.sin(t / 8)])
    assert log_floor(waves) is not None and around_zero(waves)
    assert ContinuousEncoder(Normalization.MINUSONE_ONE).fit(waves).log_floor is None
    assert ContinuousEncoder(Normalization.MINUSONE_ONE, log_scale=True).fit(waves).log_floor
    # mostly one sign (a temperature class among positive sensors): the log scale as before
    one_sided = np.concatenate([np.abs(waves), -0.1 * np.abs(waves[:100])])
    assert not around_zero(one_sided)
    assert ContinuousEncoder(Normalization.ZERO_ONE).fit(one_sided).log_floor is not None
    # two bounds (a private run's public range) tell nothing: the log scale as before
    assert not around_zero(np.array([-0.01, 100.0]))


categories = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans(), st.just(np.nan))


@given(values=st.lists(categories, min_size=1, max_size=40), cutoff=st.sampled_from([1, 150]))
def test_discrete_round_trip_one_hot_and_binary(values, cutoff):
    array = np.empty(len(values), dtype=object)
    array[:] = values
    enc = DiscreteEncoder(binary_encoder_cutoff=cutoff).fit(array)
    decoded = enc.inverse(enc.transform(array))
    for original, back in zip(values, decoded, strict=True):
        if isinstance(original, float) and np.isnan(original):
            assert back is None  # NaN is one category, decoded as a missing value
        else:
            assert back == original and type(back) is type(original)


def test_binary_code_is_compact():
    enc = DiscreteEncoder(binary_encoder_cutoff=4).fit(np.arange(100))
    assert enc.width == 7 and enc.activation == "bits"
    assert list(enc.inverse(enc.transform(np.array([0, 63, 99])))) == [0, 63, 99]


def test_unknown_category_names_values():
    enc = DiscreteEncoder(150, name="color").fit(np.array(["red", "blue"]))
    with pytest.raises(DataError, match=r"'color'.*\['green'\]"):
        enc.transform(np.array(["green"]))


def test_feature_scaling_off_requires_range():
    with pytest.raises(DataError, match="apply_feature_scaling=True"):
        ContinuousEncoder(Normalization.ZERO_ONE, apply_scaling=False).fit(np.array([0.0, 3.0]))


def _config(**kw):
    return DGANConfig(**{"max_sequence_len": 6, "sample_len": 2, **kw})


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 6), min_size=2, max_size=8),
    normalization=st.sampled_from(list(Normalization)),
    example_scaling=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_dataset_round_trip_variable_length(lengths, normalization, example_scaling, seed):
    rng = np.random.default_rng(seed)
    features = []
    for length in lengths:
        series = np.empty((length, 2), dtype=object)
        series[:, 0] = rng.normal(size=length) * 100
        series[:, 1] = rng.choice(["a", "b", "c"], size=length)
        features.append(series)
    attributes = np.array([[rng.normal()] for _ in lengths])
    config = _config(normalization=normalization, apply_example_scaling=example_scaling)
    types = [OutputType.CONTINUOUS, OutputType.DISCRETE]
    enc = DataEncoder.fit(config, features, types, attributes, [OutputType.CONTINUOUS])
    data = enc.transform(features, attributes)
    assert data.features.shape == (len(lengths), 6, enc.feature_dim)
    assert (data.additional_attributes is not None) == example_scaling
    # Restore from JSON to prove the saved state is complete.
    restored = DataEncoder.from_json(json.loads(json.dumps(enc.to_json())))
    attrs_back, features_back = restored.inverse(data)
    np.testing.assert_allclose(attrs_back.astype(float), attributes, atol=1e-4)
    for original, back in zip(features, features_back, strict=True):
        assert back.shape == original.shape
        span = np.ptp(np.concatenate([f[:, 0] for f in features]).astype(float))
        np.testing.assert_allclose(
            back[:, 0].astype(float), original[:, 0].astype(float), atol=span * 1e-5 + 1e-9
        )
        assert list(back[:, 1]) == list(original[:, 1])


def test_generation_flag_and_padding():
    features = [np.ones((2, 1)), np.ones((4, 1))]
    enc = DataEncoder.fit(_config(), features, [OutputType.CONTINUOUS], None, None)
    data = enc.transform(features, None)
    flag = enc.generation_flag_column
    assert enc.variable_length and flag == 1
    np.testing.assert_array_equal(data.features[0, :, flag], [1, 0, 0, 0, 0, 0])  # continues
    np.testing.assert_array_equal(data.features[0, :, flag + 1], [0, 1, 0, 0, 0, 0])  # ends
    np.testing.assert_array_equal(data.features[0, 2:], 0)  # nothing after the end
    np.testing.assert_array_equal(enc.lengths_from_flags(data.features), [2, 4])


def test_fixed_length_has_no_flag_and_no_attributes_means_none():
    features = [np.zeros((6, 1)), np.ones((6, 1))]
    enc = DataEncoder.fit(_config(), features, [OutputType.CONTINUOUS], None, None)
    data = enc.transform(features, None)
    assert enc.generation_flag_column is None and data.attributes is None


def test_constant_series_round_trip():
    features = [np.full((6, 1), 3.0), np.arange(6.0)[:, None]]
    enc = DataEncoder.fit(_config(), features, [OutputType.CONTINUOUS], None, None)
    _, back = enc.inverse(enc.transform(features, None))
    np.testing.assert_allclose(back[0], 3.0)


def test_unknown_encoder_type_in_file():
    with pytest.raises(SerializationError, match="Unknown encoder type"):
        encoder_from_json({"type": "pickle"})


def test_overshooting_midpoint_and_half_range_stay_in_the_training_range():
    features = [np.array([[0.0], [1.0], [2.0]]), np.array([[5.0], [7.0], [10.0]])]
    enc = DataEncoder.fit(
        _config(max_sequence_len=3, sample_len=1), features, [OutputType.CONTINUOUS], None, None
    )
    data = enc.transform(features, None)
    data.additional_attributes[:] = [[0.0, 1.0], [1.0, 1.0]]  # generated extremes
    _, back = enc.inverse(data)
    values = np.concatenate(back)
    assert values.min() >= 0.0 and values.max() <= 10.0


@pytest.mark.parametrize(
    "normalization, low", [(Normalization.ZERO_ONE, 0.0), (Normalization.MINUSONE_ONE, -1.0)]
)
def test_example_scaling_spans_each_series_over_the_full_range(normalization, low):
    """Each series' continuous feature is rescaled to the whole range; its midpoint and
    half-range (in the globally scaled space) become the additional attributes."""
    features = [np.array([[0.0], [1.0], [2.0]]), np.array([[5.0], [7.0], [10.0]])]
    config = _config(max_sequence_len=3, sample_len=1, normalization=normalization)
    enc = DataEncoder.fit(config, features, [OutputType.CONTINUOUS], None, None)
    data = enc.transform(features, None)
    np.testing.assert_allclose(data.features[:, :, 0].min(axis=1), [low, low])
    np.testing.assert_allclose(data.features[:, :, 0].max(axis=1), [1.0, 1.0])
    # Globally scaled to [0, 1]: series 0 spans [0, 0.2], series 1 [0.5, 1].
    unit_mid, unit_half = np.array([0.1, 0.75]), np.array([0.1, 0.25])
    scaled = unit_mid if low == 0.0 else unit_mid * 2 - 1
    half = unit_half if low == 0.0 else unit_half * 2
    midpoints = enc.additional_encoders[0].inverse(data.additional_attributes[:, 0])
    half_ranges = enc.additional_encoders[1].inverse(data.additional_attributes[:, 1])
    np.testing.assert_allclose(midpoints, scaled, atol=1e-6)
    np.testing.assert_allclose(half_ranges, half, atol=1e-6)


def _classes_far_apart(per_class: int = 12, seed: int = 0, levels=(0.1, 5.0, 1000.0)):
    """Series of three classes whose levels sit orders of magnitude apart, one column."""
    rng = np.random.default_rng(seed)
    features, labels = [], []
    for label, level in zip(("quiet", "middle", "loud"), levels, strict=True):
        for _ in range(per_class):
            start = level * (1.0 + 0.2 * rng.random())
            features.append(start + level * 0.05 * rng.normal(size=(6, 1)))
            labels.append(label)
    return features, np.array(labels, dtype=object)[:, None]


def _fit(features, attributes, **config):
    return DataEncoder.fit(
        _config(**config), features, [OutputType.CONTINUOUS], attributes, [OutputType.DISCRETE]
    )


@pytest.mark.parametrize("normalization", list(Normalization))
def test_classes_far_apart_get_level_ranges_of_their_own(normalization):
    """Pressure near 1,000 and aerosol near 0.1 in one column: each class's levels fill a
    sliver of the column's range, which the generator must hit to that precision. Per-class
    ranges give each class the whole output range, and the round trip stays exact."""
    features, attributes = _classes_far_apart()
    enc = _fit(features, attributes, normalization=normalization)
    assert enc.groups is not None and enc.groups.name == "attribute 0"
    data = enc.transform(features, attributes)
    # Each class's midpoints now spread over most of the output range, not a sliver.
    unit = data.additional_attributes[:, 0]
    unit = unit if normalization == Normalization.ZERO_ONE else (unit + 1) / 2
    for label in ("quiet", "middle", "loud"):
        assert np.ptp(unit[attributes[:, 0] == label]) > 0.5
    restored = DataEncoder.from_json(json.loads(json.dumps(enc.to_json())))
    attributes_back, features_back = restored.inverse(data)
    assert attributes_back[:, 0].tolist() == attributes[:, 0].tolist()
    for original, back in zip(features, features_back, strict=True):
        np.testing.assert_allclose(back, original, rtol=1e-4)


def test_a_generated_level_lands_within_its_class():
    """The middle of the output range decodes to each class's own level with per-class
    ranges; with one range for the column it is one level for every class."""
    features, attributes = _classes_far_apart()
    for setting in ("auto", False):
        enc = _fit(features, attributes, per_class_scaling=setting)
        data = enc.transform(features, attributes)
        data.additional_attributes[:] = 0.5  # a generator's undecided midpoint and spread
        _, back = enc.inverse(data)
        means = np.array([series.mean() for series in back])
        medians = {
            label: np.median(means[attributes[:, 0] == label]) for label in ("quiet", "loud")
        }
        if setting == "auto":
            assert 0.05 < medians["quiet"] < 0.2 and 500 < medians["loud"] < 2000
        else:
            assert medians["quiet"] == pytest.approx(medians["loud"], rel=0.05)  # one level


def _waves_far_apart(per_class: int = 12, seed: int = 0, shared_level: bool = False):
    """Waves around 0 of three classes four decades apart in amplitude (a fan, a fridge,
    a heater on one current column); each series' midpoint is near 0, or the fan's all
    exactly 0."""
    rng = np.random.default_rng(seed)
    features, labels = [], []
    for label, amplitude in (("fan", 0.01), ("fridge", 1.0), ("heater", 100.0)):
        for _ in range(per_class):
            t = np.arange(40.0)
            wave = np.sin(2 * np.pi * t / 12 + rng.uniform(0, 2 * np.pi))
            shared = shared_level and label == "fan"
            if shared:
                wave = np.r_[wave[:20], -wave[:20]]  # max = -min: every midpoint exactly 0
            x = amplitude * rng.uniform(0.8, 1.25) * wave
            features.append(x + (0 if shared else 0.01 * amplitude * rng.normal()))
            labels.append(label)
    return [f[:, None] for f in features], np.array(labels, dtype=object)[:, None]


@pytest.mark.parametrize("shared_level", [False, True])
def test_a_quiet_class_keeps_its_level_at_its_own_resolution(shared_level):
    """A class four decades below the column's loudest gets a range of midpoints its own
    size: a generated midpoint anywhere in the output range decodes to a level within a
    small share of that class's amplitude (a floor of 1% of the column's range once let
    it fall anywhere in a range hundreds of times that). A class whose series all share
    one level keeps a range to divide by, and the round trip holds."""
    features, attributes = _waves_far_apart(shared_level=shared_level)
    enc = _fit(features, attributes, max_sequence_len=40, sample_len=4)
    assert enc.groups is not None
    data = enc.transform(features, attributes)
    _, back = enc.inverse(data)
    for original, restored in zip(features, back, strict=True):  # to 0.1% of its amplitude
        np.testing.assert_allclose(restored, original, atol=1e-3 * np.abs(original).max())
    fan = attributes[:, 0] == "fan"
    for end in (0.0, 1.0):  # a generator's midpoint at either end of its range
        data.additional_attributes[:, 0] = end
        _, back = enc.inverse(data)
        levels = np.array([(x.max() + x.min()) / 2 for x in back])[fan]
        assert np.abs(levels).max() < 0.01 * 0.1  # within a tenth of the fan's amplitude


def test_classes_on_one_scale_or_too_small_keep_the_columns_range():
    same, attributes = _classes_far_apart(levels=(5.0, 5.0, 5.0))
    assert _fit(same, attributes).groups is None  # the classes explain nothing
    few, few_attributes = _classes_far_apart(per_class=4)
    assert _fit(few, few_attributes).groups is None  # 4 series a class: too few for a range
    features, attributes = _classes_far_apart()
    assert _fit(features, attributes, per_class_scaling=False).groups is None
    assert _fit(few, few_attributes, per_class_scaling="attribute 0").groups is not None


def test_per_class_scaling_must_name_a_discrete_attribute():
    features, attributes = _classes_far_apart()
    with pytest.raises(ParameterError, match=r"names no discrete attribute.*\['attribute 0'\]"):
        _fit(features, attributes, per_class_scaling="sensor")
    # No attributes at all: the name cannot be honoured, so it is an error, not ignored.
    with pytest.raises(ParameterError, match=r"names no discrete attribute.*are \[\]"):
        DataEncoder.fit(
            _config(per_class_scaling="sensor"), features, [OutputType.CONTINUOUS], None, None
        )
    with pytest.raises(ParameterError, match="per_class_scaling must be 'auto', False"):
        _config(per_class_scaling=True)
    assert DGANConfig.gretel(max_sequence_len=6, sample_len=2).per_class_scaling is False


def test_a_generated_series_fills_its_generated_range():
    """Every training series spans exactly its midpoint +/- half-range; a generated one
    whose values stop short of 0 and 1 (a sigmoid never reaches them) is stretched over it,
    so its amplitude is the generated half-range, not a fraction of it."""
    features = [np.array([[0.0], [1.0], [2.0]]), np.array([[5.0], [7.0], [10.0]])]
    config = _config(max_sequence_len=3, sample_len=1)
    for fill in (True, False):
        enc = DataEncoder.fit(
            _config(max_sequence_len=3, sample_len=1, fill_series_range=fill),
            features,
            [OutputType.CONTINUOUS],
            None,
            None,
        )
        assert enc.fill_range is fill
        data = enc.transform(features, None)
        data.features[:, :, 0] = [[0.2, 0.5, 0.8], [0.5, 0.5, 0.5]]  # short of 0 and 1; flat
        _, back = enc.inverse(data)
        span = np.ptp(back[0])
        assert span == pytest.approx(2.0 if fill else 1.2)  # series 0's range is [0, 2]
        np.testing.assert_allclose(back[1], 7.5)  # a flat series stays at its midpoint
    old = {k: v for k, v in enc.to_json().items() if k != "fill_range"}
    assert DataEncoder.from_json(old).fill_range is False  # files from before: as generated
    assert DGANConfig.gretel(**{"max_sequence_len": 3, "sample_len": 1}).fill_series_range is False
    assert config.fill_series_range == "auto"


@pytest.mark.parametrize("levels, fills", [((0.1, 5.0, 1000.0), True), ((4.0, 5.0, 6.0), False)])
def test_auto_fills_the_range_of_features_on_a_log_scale(levels, fills):
    """On a log scale a peak short of the top by a tenth of the range comes out at half
    the height; on a linear one at 90%, and filling there lost quality on Stocks."""
    features, attributes = _classes_far_apart(levels=levels)
    enc = _fit(features, attributes)
    assert (enc.feature_encoders[0].log_floor is not None) is fills
    data = enc.transform(features, attributes)
    data.features[:, :, 0] = 0.1 + 0.8 * data.features[:, :, 0]  # short of both ends
    _, back = enc.inverse(data)
    spans = np.array([np.ptp(b) for b in back]) / np.array([np.ptp(f) for f in features])
    if fills:
        np.testing.assert_allclose(spans, 1.0, rtol=1e-3)
    else:  # as generated: 80% of each range
        np.testing.assert_allclose(spans, 0.8, rtol=1e-3)


@pytest.mark.parametrize("normalization", list(Normalization))
def test_long_series_learn_their_ranges_on_a_log_scale(normalization):
    """At "auto", from 100 steps on, where one series' wide range squeezes the others',
    each half-range is encoded on a log scale, which leaves them apart; encoding stays exact
    (restored from JSON), midpoints stay linear, and short series, False, a private run's
    fixed bounds, the default (False, as gretel) and the plan follow the setting."""
    rng = np.random.default_rng(0)
    widths = np.r_[rng.uniform(0.5, 2.0, size=30), 100.0]  # one recording far wider
    features = [w * rng.random((120, 1)) + rng.normal() for w in widths]
    types = [OutputType.CONTINUOUS]

    def encoded_halves(setting):
        config = _config(max_sequence_len=120, sample_len=12, normalization=normalization,
                         log_series_ranges=setting)  # fmt: skip
        enc = DataEncoder.fit(config, features, types, None, None)
        data = enc.transform(features, None)
        restored = DataEncoder.from_json(json.loads(json.dumps(enc.to_json())))
        for original, back in zip(features, restored.inverse(data)[1], strict=True):
            np.testing.assert_allclose(back, original, atol=100 * 1e-5)
        assert enc.additional_encoders[0].log_floor is None  # the midpoint: linear
        unit = (data.additional_attributes[:, 1] - enc.additional_encoders[1].low) / (
            1.0 - enc.additional_encoders[1].low
        )
        return enc.additional_encoders[1].log_floor, unit[:-1]  # the 30 narrow ones

    floor, logged = encoded_halves("auto")
    linear_floor, linear = encoded_halves(False)
    assert floor is not None and linear_floor is None
    assert DGANConfig(max_sequence_len=120, sample_len=12).log_series_ranges is False
    assert np.ptp(linear) < 0.02 < 0.2 < np.ptp(logged)  # squeezed together, then apart
    short = DataEncoder.fit(
        _config(log_series_ranges="auto"), [f[:6] for f in features], types, None, None
    )
    assert short.additional_encoders[1].log_floor is None  # the protocol's windows: as gretel
    config = _config(max_sequence_len=120, sample_len=12, log_series_ranges="auto")
    alike = DataEncoder.fit(config, features[:-1], types, None, None)  # none far wider
    assert alike.additional_encoders[1].log_floor is None  # not squeezed: linear
    plan = DGAN(config).plan(np.stack(features), feature_types=types, warm_up_steps=0)
    said = "each series' range learned on a log scale (log_series_ranges)"
    assert said in next(c for c in plan.columns if c.role == "feature").detail
    plain = DGAN(_config(max_sequence_len=120, sample_len=12))  # the default: linear
    plan = plain.plan(np.stack(features), feature_types=types, warm_up_steps=0)
    assert not any(said in c.detail for c in plan.columns)
    private = _config(max_sequence_len=120, sample_len=12, dp_epsilon=1.0, large_data=False,
                      batch_size=16, epochs=1, public_values={"feature 0": [-10, 110]},
                      log_series_ranges="auto")  # fmt: skip
    plan = DGAN(private).plan(np.stack(features), feature_types=types, warm_up_steps=0)
    assert not any(said in c.detail for c in plan.columns)
