"""What a private run takes from the user instead of reading it from the data.

A non-private run learns each continuous variable's range, each discrete variable's
categories, whether series vary in length, the time grid of LONG tables (the times of one
training series) and the decimals of float columns from the data, and saves them in the
model: values that no noise protects. Under differential privacy (`DGANConfig.dp_epsilon`)
they come from ``DGANConfig.public_values`` or from the data's form, never its values:

- each variable's [low, high] or categories from ``public_values`` (a variable without
  them is an error naming the entry to add); continuous values outside the given range
  are clipped to it (a per-series change, which privacy allows), categories outside the
  given list are an error;
- the per-series midpoint and half-range ("additional attributes" of example scaling)
  use their fixed bounds in the scaled space, not the data's;
- variable length is the input's form: a list of arrays or a LONG table with an example
  id column may hold series of any length, so the model learns lengths (the generation
  flag); a 3-d array, a WIDE table or a LONG table cut into chunks is fixed-length;
- the time grid of a LONG table from ``public_values[time column]``; float columns are
  not rounded to the decimals seen.

The number of series is treated as public (the sampling rate is batch_size / n, as in
Opacus); docs/privacy.md says what is protected and what is not.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dgan.config import Normalization, OutputType
from dgan.encoding.encoder import ContinuousEncoder, DataEncoder, DiscreteEncoder
from dgan.encoding.variables import (
    VariableEncoder,
    all_numeric,
    make_encoder,
    variable_names,
    variable_settings,
)
from dgan.errors import DataError, ParameterError, raise_all
from dgan.privacy.accounting import check_sample_rate, noise_multiplier_for
from dgan.tabular.arrays import TrainingArrays
from dgan.tabular.layout import FrameLayout

logger = logging.getLogger(__name__)


def _example(name: str, kind: OutputType) -> str:
    shown = "[low, high]" if kind is OutputType.CONTINUOUS else "[every category]"
    return f"public_values={{{name!r}: {shown}}}"


def _variables(arrays: TrainingArrays) -> list[tuple[str, str, OutputType]]:
    """(role, name, type) of every variable, named as the encoders name them."""
    features = variable_names(arrays.feature_names, "feature", len(arrays.feature_types))
    out = [("feature", n, t) for n, t in zip(features, arrays.feature_types, strict=True)]
    if arrays.attribute_types is not None:
        count = len(arrays.attribute_types)
        attributes = variable_names(arrays.attribute_names, "attribute", count)
        out += [
            ("attribute", n, t) for n, t in zip(attributes, arrays.attribute_types, strict=True)
        ]
    return out


def _encoder(name: str, kind: OutputType, values: list, settings: dict, role: str):
    """(the encoder fitted on the given values, None) or (None, the problem)."""
    if kind is OutputType.DISCRETE:
        return make_encoder(kind, name, settings).fit(np.array(values, dtype=object)), None
    numbers = len(values) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    )
    if not numbers or not values[0] < values[1]:
        return None, (
            f"public_values[{name!r}] must be [low, high] with low < high for the continuous "
            f"{role} {name!r}, got {values!r}."
        )
    try:
        return make_encoder(kind, name, settings).fit(np.array(values, dtype=np.float64)), None
    except DataError as e:  # apply_feature_scaling=False: the range must be the network's
        return None, str(e).replace("spans", "is given as")


def public_encoder(
    config: Any, arrays: TrainingArrays, variable_length: bool, time_column: str | None = None
) -> DataEncoder:
    """The `DataEncoder` of a private run: built from ``config.public_values`` and the
    data's form (``variable_length``), reading no value of ``arrays``; ParameterError
    listing every variable without public values (and every unknown entry).

    Example:
        >>> from dgan import DGANConfig
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> arrays = validate_training_arrays(np.zeros((4, 2, 1)), None, None, None, 2)
        >>> config = DGANConfig(max_sequence_len=2, sample_len=1, dp_epsilon=1.0,
        ...                     public_values={"feature 0": [-5, 5]})
        >>> encoder = public_encoder(config, arrays, variable_length=False)
        >>> encoder.feature_encoders[0].min, encoder.feature_encoders[0].max
        (-5.0, 5.0)
    """
    given = dict(config.public_values or {})
    settings = variable_settings(config)
    problems: list[str] = []
    encoders: dict[str, list[VariableEncoder]] = {"feature": [], "attribute": []}
    for role, name, kind in _variables(arrays):
        values = given.pop(name, None)
        if values is None:
            problems.append(
                f"{role} {name!r} has no public values: under differential privacy dgan "
                f"does not read ranges or categories from the data; give {_example(name, kind)}."
            )
            continue
        encoder, problem = _encoder(name, kind, list(values), settings, role)
        if problem is not None:
            problems.append(problem)
        else:
            encoders[role].append(encoder)
    given.pop(time_column, None)
    if given:
        known = [name for _, name, _ in _variables(arrays)] + ([time_column] if time_column else [])
        problems.append(
            f"public_values names {sorted(given)}, which are not variables of this data; the "
            f"variables are {known}."
        )
    onsets = config.onset_attribute is True  # "auto" would read the values: off
    if onsets and not (variable_length and all_numeric(encoders["feature"])):
        problems.append(
            "onset_attribute=True needs numeric features and series of different lengths; "
            "set onset_attribute=False."
        )
    raise_all(problems, ParameterError, "public_values (differential privacy)")
    encoder = DataEncoder(
        encoders["attribute"] if arrays.attributes is not None else None,
        encoders["feature"],
        None,
        config.max_sequence_len,
        variable_length,
        config.normalization,
        fill_range=config.fill_series_range,  # decoding only: no privacy cost
        length_attribute=config.length_attribute,  # encoded by max_sequence_len alone
        onset_attribute=onsets,  # each series' own zeros, encoded by max_sequence_len alone
    )
    # "auto" would read the values: off; True carries each continuous feature, its
    # frequency encoded by max_sequence_len alone and its noise floor on the fixed
    # `FLOORS` scale, with every harmonic (which ones the data holds is not read)
    encoder.period_features = encoder.continuous_features if config.period_carrier is True else []
    if config.apply_example_scaling and encoder.continuous_features:
        encoder.additional_encoders = _scaling_encoders(encoder, config.normalization)
    return encoder


def public_parts(
    config: Any, arrays: TrainingArrays, layout: FrameLayout | None, fixed_length: bool
) -> tuple[DataEncoder, FrameLayout | None]:
    """A private run's encoder (`public_encoder`) and table layout (`public_layout`, None
    for arrays): what it learns about its variables, none of it from the data's values."""
    time_column = None if layout is None else layout.time_column
    encoder = public_encoder(config, arrays, not fixed_length, time_column)
    return encoder, None if layout is None else public_layout(layout, config.public_values)


def privacy_plan(config: Any, checked: Any, steps: int) -> str:
    """The training plan's line of a private run (target, Opacus's noise for ``steps``
    steps, sampling), after the errors training raises for what it would read from the
    data (`public_parts`; ``checked`` is `dgan.prepare.Checked`); "" without privacy.

    Example:
        >>> from dgan import DGANConfig
        >>> privacy_plan(DGANConfig(max_sequence_len=4, sample_len=2), None, 100)
        ''
    """
    if config.dp_target_epsilon is None:
        return ""
    public_parts(config, checked.arrays, checked.layout, checked.fixed_length)
    rate = check_sample_rate(config.batch_size, len(checked.arrays.features))
    sigma = noise_multiplier_for(config.dp_target_epsilon, config.dp_delta, rate, steps)
    return (
        f"epsilon {config.dp_target_epsilon:g} at delta {config.dp_delta:.3g}, noise "
        f"multiplier {sigma:.3g} for {steps:,} steps of Poisson batches (each series in "
        f"each with probability {rate:.3g}), every example's critic gradient clipped to "
        f"{config.dp_max_grad_norm:g}; training stops at the epsilon"
    )


def _scaling_encoders(encoder: DataEncoder, normalization: Normalization) -> list:
    """The midpoint and half-range encoders at their fixed bounds: in the scaled space a
    series' midpoint lies in [low, 1] and its half-range in [0, (1 - low) / 2]."""
    low = 0.0 if normalization == Normalization.ZERO_ONE else -1.0
    out = []
    for i in encoder.continuous_features:
        name = encoder.feature_encoders[i].name
        for part, bounds in (("midpoint", [low, 1.0]), ("half-range", [0.0, (1.0 - low) / 2])):
            scaler = ContinuousEncoder(normalization, True, f"{name} {part}", log_scale=False)
            out.append(scaler.fit(np.array(bounds)))
    return out


def within_public(arrays: TrainingArrays, encoder: DataEncoder) -> TrainingArrays:
    """``arrays`` with continuous values clipped to the public ranges (new arrays; logged
    with the count), and a DataError naming categories outside the public lists.

    Example:
        >>> from dgan import DGANConfig
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> series = np.array([[[9.0], [0.0]], [[1.0], [-7.0]]])
        >>> arrays = validate_training_arrays(series, None, None, None, 2)
        >>> config = DGANConfig(max_sequence_len=2, sample_len=1, dp_epsilon=1.0,
        ...                     public_values={"feature 0": [-5, 5]})
        >>> clipped = within_public(arrays, public_encoder(config, arrays, False))
        >>> [f.ravel().tolist() for f in clipped.features]
        [[5.0, 0.0], [1.0, -5.0]]
    """
    problems: list[str] = []
    clipped = 0

    def fit(encoders: Sequence[VariableEncoder], matrix: np.ndarray, role: str) -> np.ndarray:
        nonlocal clipped
        out = matrix.copy()
        for j, enc in enumerate(encoders):
            column = out[:, j]
            if isinstance(enc, DiscreteEncoder):
                seen = DiscreteEncoder(enc.binary_encoder_cutoff).fit(column).categories
                unknown = [c for c in seen if not _among(c, enc.categories)]
                if unknown:
                    problems.append(
                        f"{role} {enc.name!r} has values outside its public categories: "
                        f"{unknown[:10]}; add them to public_values[{enc.name!r}]."
                    )
                continue
            values = column.astype(np.float64)
            with np.errstate(invalid="ignore"):  # NaN stays NaN (repaired before this)
                outside = (values < enc.min) | (values > enc.max)
            clipped += int(outside.sum())
            out[:, j] = np.where(outside, np.clip(values, enc.min, enc.max), column)
        return out

    stacked = np.concatenate(arrays.features, axis=0)
    lengths = np.cumsum([len(f) for f in arrays.features])[:-1]
    features = np.split(fit(encoder.feature_encoders, stacked, "feature"), lengths)
    attributes = arrays.attributes
    if attributes is not None:
        attributes = fit(encoder.attribute_encoders, attributes, "attribute")
    raise_all(problems, DataError, "the data under differential privacy")
    if clipped:
        logger.warning("%d value(s) outside their public range were clipped to it.", clipped)
    return dataclasses.replace(arrays, features=features, attributes=attributes)


def _among(value: Any, categories: list) -> bool:
    """``value`` is one of ``categories`` as the encoder matches them (1 is 1.0, True is
    not 1)."""
    return any(isinstance(value, bool) == isinstance(c, bool) and value == c for c in categories)


def public_layout(layout: FrameLayout, public_values: dict | None) -> FrameLayout:
    """``layout`` without what it read from the data's values: no rounding to the decimals
    seen, the time grid from ``public_values`` (a ParameterError naming the entry if
    missing), and pandas categories replaced by the public ones.

    Example:
        >>> import pandas as pd
        >>> from dgan.tabular.columns import Columns
        >>> from dgan.tabular.frames import dataframe_to_arrays
        >>> df = pd.DataFrame({"id": [0, 0, 1, 1], "t": [5, 6, 5, 6], "x": [0.5, 1.25, 1, 2]})
        >>> roles = Columns(example_id_column="id", time_column="t", df_style="long")
        >>> layout = dataframe_to_arrays(df, roles, 2).layout
        >>> public = public_layout(layout, {"t": [1, 2], "x": [0, 3]})
        >>> public.time_grid, public.spec("x").decimals
        ([1, 2], None)
    """
    given = {str(k): v for k, v in (public_values or {}).items()}
    grid = None
    if layout.time_column is not None:
        grid = given.get(str(layout.time_column))
        if grid is None:
            raise ParameterError(
                f"The time column {layout.time_column!r} would give generated series the "
                "times of one training series (the time grid); under differential privacy "
                f"give them: public_values={{{str(layout.time_column)!r}: [the times of a "
                "series, first to last]}}."
            )
    columns = []
    for spec in layout.columns:
        categories = spec.categories
        if categories is not None:
            categories = list(given.get(str(spec.name), []))
        columns.append(dataclasses.replace(spec, decimals=None, categories=categories))
    return dataclasses.replace(layout, columns=columns, time_grid=grid)
