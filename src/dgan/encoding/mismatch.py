"""Whether data given to continue training fits a fitted `DataEncoder`.

A model continues training only on data its encoders can represent: the same variables,
series no longer than it was fitted on (for a fixed-length model, of that length), and
continuous values not far outside the fitted ranges.
"""

from __future__ import annotations

import numpy as np

from dgan.encoding.encoded import varies_in_length
from dgan.encoding.encoder import ContinuousEncoder, DataEncoder
from dgan.encoding.standardized import TOLERANCE
from dgan.series import SeriesRows, as_series_rows


def mismatch_problems(
    encoder: DataEncoder,
    features: SeriesRows | list[np.ndarray],
    attributes: np.ndarray | None,
) -> list[str]:
    """Why data given to continue training does not fit these encoders ([] if it does).

    Continued training must see the variables the encoders were fitted on: the same
    number of features and attributes, fixed-length series for a fixed-length model,
    continuous values within the fitted range widened by one range (further out
    the networks' output activations cannot represent them), and, where the training
    series were all standardized alike (`Standardized`), series standardized so too.

    Example:
        >>> from dgan import DGANConfig, OutputType
        >>> config = DGANConfig(max_sequence_len=2, sample_len=1)
        >>> enc = DataEncoder.fit(config, [np.zeros((2, 1)), np.ones((2, 1))],
        ...                       [OutputType.CONTINUOUS], None, None)
        >>> mismatch_problems(enc, [np.zeros((2, 2))], None)[0][:44]
        'The model was trained on 1 feature(s); this '
    """
    features = as_series_rows(features)
    fix = "train a new DGAN on this data, or continue with data shaped like the first"
    problems = []
    n_features = len(encoder.feature_encoders)
    if features.width != n_features:
        problems.append(
            f"The model was trained on {n_features} feature(s); this data has "
            f"[{features.width}]: {fix}."
        )
    n_attributes = 0 if encoder.attribute_encoders is None else len(encoder.attribute_encoders)
    given = 0 if attributes is None else attributes.shape[1]
    if given != n_attributes:
        problems.append(
            f"The model was trained on {n_attributes} attribute(s); this data has {given}: {fix}."
        )
    if not encoder.variable_length and varies_in_length(features.lengths, encoder.max_sequence_len):
        problems.append(
            "The model was trained on series of one length "
            f"({encoder.max_sequence_len}); this data has shorter ones, which it would pad "
            f"with zeros as if they were data: {fix}."
        )
    if problems:
        return problems
    columns = [("feature", e, features.rows[:, i]) for i, e in enumerate(encoder.feature_encoders)]
    if attributes is not None:
        columns += [
            ("attribute", e, attributes[:, i]) for i, e in enumerate(encoder.attribute_encoders)
        ]
    for kind, enc, values in columns:
        if isinstance(enc, ContinuousEncoder) and enc.apply_scaling:
            far = enc.outside_range(values.astype(np.float64), tolerance=1.0)
            if far.any():
                problems.append(
                    f"{kind} {enc.name!r} has {int(far.sum())} value(s) far outside the "
                    f"range the model was fitted on [{enc.min:g}, {enc.max:g}]: {fix}."
                )
    for i in [] if encoder.standardized is None else encoder.standardized.unlike(features):
        mean, deviation, ddof = encoder.standardized.moments[i]
        mean = 0.0 if abs(mean) <= TOLERANCE * deviation else mean  # -2.7e-11 reads as 0
        problems.append(
            f"feature {encoder.feature_encoders[i].name!r}: the model was trained on series "
            f"each standardized to mean {mean:g} and deviation {deviation:g} "
            f"({'sample' if ddof else 'population'}), and generates them so; some series "
            f"here are not: standardize them the same way, or {fix}."
        )
    return problems
