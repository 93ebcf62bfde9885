"""What generation matches to the training data, fitted with the encoder: the value map
(`ValueMarginals`, `match_marginals`, with its switches: `match_switches`) and the texture
filter (`SeriesTexture`, `match_texture`), each per class of one discrete attribute, the
classes' shares (`ClassShares`, `match_class_shares`), each series' mean and deviation
where every training series has the same (`Standardized`, `match_standardization`) and
the carried features' periods (`PeriodMap`, `match_periods`) and centres (`CentreMap`,
`match_centres`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dgan.config.sizing import LONG_SERIES
from dgan.encoding.centre_map import CentreMap
from dgan.encoding.class_shares import ClassShares, matches_class_shares
from dgan.encoding.mapped_features import (
    holds_often,
    levels_apart,
    matches_marginals,
    one_distribution,
)
from dgan.encoding.marginals import ValueMarginals
from dgan.encoding.period_map import PeriodMap, matches_periods
from dgan.encoding.standardized import Standardized
from dgan.encoding.texture import SeriesTexture, matches_texture
from dgan.encoding.variables import ContinuousEncoder, DiscreteEncoder, VariableEncoder
from dgan.series import SeriesRows

TRAINING_MAPS = {
    "marginals": ValueMarginals,
    "texture": SeriesTexture,
    "class_shares": ClassShares,
    "standardized": Standardized,
    "period_map": PeriodMap,
    "centre_map": CentreMap,
}
"""Each map's key in the encoder's state and its kind; a model file from before a map
existed has none, and its series decode as they did then."""


def fit_training_maps(
    config: Any,
    features: SeriesRows,
    attributes: np.ndarray | None,
    attribute_encoders: list[VariableEncoder] | None,
    feature_encoders: list[VariableEncoder],
    group: int | None,
    carried: list[int] | None = None,
    sample: SeriesRows | None = None,
) -> dict[str, Any]:
    """Each of `TRAINING_MAPS` by its key: the value map, the texture, the class shares,
    the common means and deviations, and the periods and centres of the training
    ``features`` and ``attributes`` where ``config`` asks for them, else None. The value
    map's classes are those of the per-class ranges' attribute ``group`` (None: one
    class); the texture's, the shares', the periods' and the centres' those of
    ``group``, else of the first discrete attribute. The texture leaves out the
    ``carried`` features: a carrier draws their noise floor and loudness, which the
    filter would swing (docs/quality.md, "A carried wave as its own value, its loudness
    bounded"); at "auto" the value map takes them (their generated loudness lands on the
    class's levels); the periods and centres are those of the ``carried`` features, read
    from ``features``' `periods.gate_sample` (``sample``, where drawn already).

    Example:
        >>> from dgan import DGANConfig, OutputType
        >>> from dgan.encoding.variables import fit_variables
        >>> rows = SeriesRows.from_padded(np.random.default_rng(0).random((6, 120, 1)))
        >>> settings = dict(normalization=None, apply_feature_scaling=True,
        ...                 binary_encoder_cutoff=150, log_scale=False)
        >>> encoders = fit_variables([OutputType.CONTINUOUS], ["x"], rows.rows, settings)
        >>> config = DGANConfig(max_sequence_len=120, sample_len=10)
        >>> maps = fit_training_maps(config, rows, None, None, encoders, None)
        >>> maps["texture"].n_classes, [key for key, m in maps.items() if m is not None]
        (1, ['texture'])
    """
    continuous = [i for i, e in enumerate(feature_encoders) if isinstance(e, ContinuousEncoder)]
    discrete = [j for j, e in enumerate(attribute_encoders or []) if isinstance(e, DiscreteEncoder)]

    def classes(attribute: int | None) -> tuple[np.ndarray | None, int]:
        if attribute is None:
            return None, 1
        encoder = attribute_encoders[attribute]
        return encoder.codes(attributes[:, attribute]), len(encoder.categories)

    whole = one_distribution(bool(discrete), len(features))
    drawn = set(carried or ())  # the carried features
    setting = config.match_marginals
    auto, T = setting == "auto", config.max_sequence_len

    def maps(i: int) -> bool:
        floor = feature_encoders[i].log_floor
        reasons = (floor is not None, whole, auto and holds_often(features, i, T), i in drawn)
        if matches_marginals(setting, *reasons):
            return True
        # Levels with nothing between, for the switches: read only where nothing else maps
        # the feature, as the map's own fit reads the same quantiles again.
        gapped = auto and config.match_switches
        return gapped and matches_marginals(
            setting, *reasons, gapped=levels_apart(features, i, *classes(group), floor)
        )

    mapped = [i for i in continuous if maps(i)]
    marginals = texture = shares = standardized = periods = centres = None
    attribute = group if group is not None else (discrete[0] if discrete else None)
    if mapped:
        # The switches at a class's gaps: on the scale the generator draws the values on.
        floors = [feature_encoders[i].log_floor for i in mapped]
        switches = floors if config.match_switches else None
        marginals = ValueMarginals.fit(features, mapped, group, *classes(group), switches)
    filtered = [i for i in continuous if i not in drawn]
    if filtered and matches_texture(config.match_texture, config.max_sequence_len, LONG_SERIES):
        texture = SeriesTexture.fit(features, filtered, attribute, *classes(attribute))
    if attribute is not None and matches_class_shares(config.match_class_shares, True):
        shares = ClassShares.fit(attribute, *classes(attribute))
    if continuous and config.match_standardization:
        standardized = Standardized.fit(features, continuous)
    sample = features if sample is None else sample  # each map reads its gate sample
    if matches_periods(config.match_periods, bool(carried)):
        length = config.max_sequence_len
        periods = PeriodMap.fit(sample, list(carried), length, attribute, *classes(attribute))
    if matches_periods(config.match_centres, bool(carried)):
        centres = CentreMap.fit(sample, list(carried), attribute, *classes(attribute))
    maps = (marginals, texture, shares, standardized, periods, centres)
    return dict(zip(TRAINING_MAPS, maps, strict=True))
