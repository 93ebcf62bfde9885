"""Where each series switches on as a generated attribute (``onset_attribute``): the
leading zero steps counted, taken off before the encoder's fit, encoded after the length,
put back in front of generated series after every decoding map, chosen by "auto" only
where half the series start so, said in the plan, saved, checked, and private runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dgan import DGAN, Normalization, OutputType
from dgan.encoding.onsets import (
    encode_onsets,
    onsets_from_unit,
    series_onsets,
    starts_off,
    strip_onsets,
    with_onsets,
)
from dgan.errors import DataError, ParameterError
from dgan.series import SeriesRows
from dgan.storage.schema_encoder import encoder_problems
from tiny import tiny_config

T = 12


def _data(rng, n=24, off=True):
    """Series of 6..T steps of two features, a class attribute; with ``off`` each starts
    with 2..4 steps where both features are exactly 0 (the second is 0 while off, 1 on)."""
    features, classes = [], rng.integers(0, 2, n)
    for c in classes:
        length, k = int(rng.integers(6, T + 1)), int(rng.integers(2, 5)) if off else 0
        level = np.r_[np.zeros(k), rng.normal(3 + 3 * c, 1.0, length - k)]
        features.append(np.c_[level, np.r_[np.zeros(k), np.ones(length - k)]])
    return features, classes[:, None].astype(float)


def _train(features, attributes, **overrides) -> DGAN:
    config = tiny_config(max_sequence_len=T, sample_len=2, length_attribute=True, **overrides)
    model = DGAN(config)
    model.train_numpy(
        features,
        attributes=attributes,
        attribute_types=[OutputType.DISCRETE],
        feature_types=[OutputType.CONTINUOUS] * 2,
        progress_bar=False,
    )
    return model


def _force_onsets(model: DGAN, onsets: list[int]) -> None:
    """Make the attribute generator's onset column encode ``onsets`` (cycled), each a
    third of a step off (the rounding must still find it)."""
    column = model.encoder.onset_column
    zero_one = model.encoder.normalization == Normalization.ZERO_ONE

    def hook(module, inputs, output):
        out = output.clone()
        wanted = np.resize(np.array(onsets, float) + 0.3, len(out))
        out[:, column] = torch.from_numpy(encode_onsets(wanted, T, zero_one))
        return out

    model.generator.additional_net.register_forward_hook(hook)


def test_onsets_count_steps_where_every_feature_is_zero():
    rows = SeriesRows.from_list(
        [
            np.array([[0.0, 0.0], [0.0, 1.0], [2.0, 0.0]]),  # the second feature is on at 1
            np.array([[np.nan, 0.0], [0.0, 0.0]]),  # a missing value is not a zero
            np.zeros((4, 2)),  # never on: one step is kept
            np.array([[5.0, 0.0]]),
        ]
    )
    assert series_onsets(rows).tolist() == [1, 0, 3, 0]


def test_zeros_taken_off_come_back_exactly_and_are_cut_at_the_longest_length():
    rows = SeriesRows.from_list([np.r_[np.zeros(k), np.arange(1.0, 5.0)][:, None] for k in (0, 3)])
    onsets = series_onsets(rows)
    stripped = strip_onsets(rows, onsets)
    assert stripped.lengths.tolist() == [4, 4] and (stripped.rows != 0).all()
    back = with_onsets(stripped, onsets, max_sequence_len=7)
    np.testing.assert_array_equal(back.rows, rows.rows)
    np.testing.assert_array_equal(back.lengths, rows.lengths)
    # a generated onset too late for the series to fit: cut at max_sequence_len, and a
    # series always keeps one step after its zeros
    cut = with_onsets(stripped, np.array([5, 9]), max_sequence_len=7)
    assert [s.ravel().tolist() for s in cut] == [[0.0] * 5 + [1.0, 2.0], [0.0] * 6 + [1.0]]


@pytest.mark.parametrize("zero_one", [True, False])
def test_onsets_encode_by_max_sequence_len_alone_and_round_back(zero_one):
    onsets = np.arange(T)
    encoded = encode_onsets(onsets, T, zero_one)
    assert encoded.min() == (0.0 if zero_one else -1.0) and encoded.max() == 1.0
    assert onsets_from_unit(encoded, T, zero_one).tolist() == onsets.tolist()
    assert onsets_from_unit(np.array([-3.0, 3.0]), T, zero_one).tolist() == [0, T - 1]


def test_auto_needs_numbers_varied_lengths_and_half_the_series_off(rng):
    off = SeriesRows.from_list(_data(rng, n=10)[0])
    on = SeriesRows.from_list(_data(rng, n=10, off=False)[0])
    assert starts_off("auto", off, varied=True)
    assert not starts_off("auto", off, varied=False)  # one length: nothing to split
    assert not starts_off("auto", on, varied=True)
    assert not starts_off(False, off, varied=True)
    # four of ten off is not half
    mixed = SeriesRows.from_list([*list(off)[:4], *list(on)[:6]])
    assert not starts_off("auto", mixed, varied=True)
    assert starts_off(True, mixed, varied=True)
    words = SeriesRows(np.array([["a"], ["b"]], dtype=object), np.array([1, 1]))
    assert not starts_off("auto", words, varied=True)
    with pytest.raises(DataError, match=r"onset_attribute=True needs .* different lengths"):
        starts_off(True, off, varied=False)
    with pytest.raises(DataError, match="non-numeric features"):
        starts_off(True, words, varied=True)


@pytest.mark.parametrize("normalization", list(Normalization))
def test_the_encoder_fits_from_the_switch_on_and_decodes_exactly(rng, normalization):
    features, attributes = _data(rng)
    given = [f.copy() for f in features]
    config = tiny_config(
        max_sequence_len=T, sample_len=2, length_attribute=True, normalization=normalization
    )
    model = DGAN(config)
    encoded = model.preprocess(
        features, [OutputType.CONTINUOUS] * 2, attributes, [OutputType.DISCRETE]
    )
    encoder = model.encoder
    assert encoder.onset_attribute
    # after the 2 x 2 example-scaling attributes: the length, then the onset
    assert (encoder.length_column, encoder.onset_column, encoder.additional_dim) == (4, 5, 6)
    # the second feature is 1 from the switch-on: its range is fitted on that alone
    assert encoder.feature_encoders[1].min == encoder.feature_encoders[1].max == 1.0
    onsets = np.array([int((f[:, 1] == 0).sum()) for f in features])
    zero_one = normalization == Normalization.ZERO_ONE
    np.testing.assert_array_equal(
        encoded.additional_attributes[:, 5], encode_onsets(onsets, T, zero_one)
    )
    np.testing.assert_array_equal(encoded.lengths, [len(f) for f in features] - onsets)
    np.testing.assert_array_equal(encoder.onsets(encoded), onsets)
    _, rows = encoder.inverse_rows(encoded)
    decoded = with_onsets(rows, encoder.onsets(encoded), T)
    for real, back in zip(features, decoded, strict=True):
        np.testing.assert_allclose(back, real, rtol=1e-4, atol=1e-4)
    for mine, theirs in zip(features, given, strict=True):  # the user's arrays untouched
        np.testing.assert_array_equal(mine, theirs)


def test_generated_series_start_with_their_generated_zeros(rng):
    features, attributes = _data(rng)
    # the texture filter and the value map run on the series from their switch-on only
    model = _train(features, attributes, match_texture=True, match_marginals=True)
    wanted = [0, 3, 7, T - 1]
    _force_onsets(model, wanted)
    _, series = model.generate_numpy(8)
    onsets = np.resize(wanted, 8)
    for k, s in zip(onsets, series, strict=True):
        assert len(s) <= T and len(s) > k
        assert (s[:k] == 0).all()  # exactly zero, whatever the maps would make of them
        assert (s[k] != 0).any()  # the second feature is 1 once on
    frames = model.generate_numpy(attributes=np.array([[1.0]] * 4))[1]
    assert all(1 <= len(s) <= T for s in frames)  # conditioned generation draws onsets too


def test_data_that_does_not_start_off_is_left_alone(rng):
    model = _train(*_data(rng, off=False))
    assert not model.encoder.onset_attribute and model.encoder.onset_column is None
    assert model.encoder.additional_dim == 5  # the ranges and the length only


def test_the_plan_says_so_and_describes_the_series_from_their_switch_on(rng):
    features, attributes = _data(rng)
    config = tiny_config(max_sequence_len=T, sample_len=2)
    types = dict(feature_types=[OutputType.CONTINUOUS] * 2, attribute_types=[OutputType.DISCRETE])
    plan = DGAN(config).plan(features, attributes=attributes, warm_up_steps=0, **types)
    line = next(x for x in str(plan).splitlines() if "onsets:" in x)
    assert "(2..4; 24 of 24 series start with 2 or more)" in line
    assert "onset_attribute" in line
    second = next(c for c in plan.columns if c.name == "feature 1")
    assert second.detail.startswith("range 1 .. 1")  # not 0 .. 1: the zeros are off
    off = tiny_config(max_sequence_len=T, sample_len=2, onset_attribute=False)
    assert "onsets:" not in str(DGAN(off).plan(features, attributes=attributes, **types))


def test_the_setting_survives_a_save_and_old_files_decode_as_generated(rng, tmp_path):
    model = _train(*_data(rng))
    loaded = DGAN.load(model.save(tmp_path / "m.dgan"))
    assert loaded.encoder.onset_attribute and loaded.encoder.onset_column == 5
    noise = model.sampler.noise(8)
    _, mine = model.generate_numpy(attribute_noise=noise[0], feature_noise=noise[1])
    _, theirs = loaded.generate_numpy(attribute_noise=noise[0], feature_noise=noise[1])
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    state = model.encoder.to_json()
    del state["onset_attribute"]  # a file from before the setting
    assert not type(model.encoder).from_json(state).onset_attribute


def test_the_header_checks_the_setting():
    problems: list[str] = []
    base = {
        "attribute_encoders": None,
        "feature_encoders": [],
        "additional_encoders": None,
        "max_sequence_len": T,
        "normalization": "ZERO_ONE",
    }
    encoder_problems(problems, {**base, "variable_length": False, "onset_attribute": True}, None)
    encoder_problems(problems, {**base, "variable_length": True, "onset_attribute": 1}, None)
    assert any("onset_attribute is true for series of one length" in p for p in problems)
    assert any("encoder.onset_attribute" in p and "true or false" in p for p in problems)


def _private_frame(rng, off: bool) -> pd.DataFrame:
    parts = []
    for i in range(40):
        length, k = int(rng.integers(6, T + 1)), (3 if off else 0)
        x = np.r_[np.zeros(k), rng.random(length - k).round(3) * 7 + 0.5]
        parts.append(pd.DataFrame({"id": i, "day": np.arange(length), "x": x}))
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("setting", ["auto", True])
def test_a_private_run_reads_no_values_to_decide(rng, setting):
    pytest.importorskip("opacus")
    public = {"x": [-1, 8], "day": list(range(T))}
    config = tiny_config(
        max_sequence_len=T, sample_len=2, dp_epsilon=20.0, public_values=public,
        batch_size=8, onset_attribute=setting,
    )  # fmt: skip
    model = DGAN(config)
    frame = _private_frame(rng, off=True)
    roles = dict(example_id_column="id", time_column="day", df_style="long")
    plan = str(model.plan(frame, warm_up_steps=0, **roles))
    assert ("onsets: each series' leading zero steps taken off" in plan) is (setting is True)
    model.train_dataframe(frame, **roles)
    assert model.encoder.onset_attribute is (setting is True)  # "auto" would read the data


def test_a_private_run_with_one_length_refuses_true(rng):
    pytest.importorskip("opacus")
    config = tiny_config(
        max_sequence_len=T, sample_len=2, dp_epsilon=20.0, public_values={"feature 0": [-1, 8]},
        batch_size=8, onset_attribute=True,
    )  # fmt: skip
    with pytest.raises(ParameterError, match="onset_attribute=True needs"):
        DGAN(config).train_numpy(np.zeros((16, T, 1)), progress_bar=False)
