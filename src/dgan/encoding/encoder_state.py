"""A `DataEncoder`'s JSON-native state, so that models are saved without pickle:
`encoder_state` writes it, `encoder_arguments` reads it back into the encoder's
arguments. A file from before a part existed decodes as dgan did then."""

from __future__ import annotations

from typing import Any

from dgan.config import Normalization
from dgan.encoding.groups import GroupRanges
from dgan.encoding.training_maps import TRAINING_MAPS
from dgan.encoding.variables import encoder_from_json


def encoder_state(encoder: Any) -> dict[str, Any]:
    """``encoder``'s (a `DataEncoder`) state: JSON-native values only.

    Example:
        >>> import numpy as np
        >>> from dgan import DGANConfig, OutputType
        >>> from dgan.encoding.encoder import DataEncoder
        >>> config = DGANConfig(max_sequence_len=2, sample_len=1)
        >>> features = [np.zeros((2, 1)), np.ones((1, 1))]
        >>> encoder = DataEncoder.fit(config, features, [OutputType.CONTINUOUS], None, None)
        >>> state = encoder_state(encoder)
        >>> state["variable_length"], state["normalization"]
        (True, 'ZERO_ONE')
        >>> DataEncoder(**encoder_arguments(state)).feature_dim
        3
    """

    def state(part):  # None, a list of encoders, or one fitted part
        if part is None:
            return None
        return [e.to_json() for e in part] if isinstance(part, list) else part.to_json()

    return {
        "attribute_encoders": state(encoder.attribute_encoders),
        "feature_encoders": state(encoder.feature_encoders),
        "additional_encoders": state(encoder.additional_encoders),
        "max_sequence_len": encoder.max_sequence_len,
        "variable_length": encoder.variable_length,
        "normalization": encoder.normalization.name,
        "groups": state(encoder.groups),
        "fill_range": encoder.fill_range,
        "length_attribute": encoder.length_attribute,
        "onset_attribute": encoder.onset_attribute,
        "period_features": encoder.period_features,
        "period_harmonics": encoder.period_harmonics,
        "period_waveform": encoder.period_waveform,
        **{key: state(getattr(encoder, key)) for key in TRAINING_MAPS},
    }


def encoder_arguments(state: dict[str, Any]) -> dict[str, Any]:
    """The `DataEncoder` arguments that `encoder_state` wrote as ``state``."""

    def many(key):
        return None if state[key] is None else [encoder_from_json(s) for s in state[key]]

    def optional(key, kind):  # files from before `key` existed: none, decoded as then
        return None if state.get(key) is None else kind.from_json(state[key])

    return {
        "attribute_encoders": many("attribute_encoders"),
        "feature_encoders": many("feature_encoders"),
        "additional_encoders": many("additional_encoders"),
        "max_sequence_len": state["max_sequence_len"],
        "variable_length": state["variable_length"],
        "normalization": Normalization[state["normalization"]],
        "groups": optional("groups", GroupRanges),  # before per-class scaling
        "fill_range": state.get("fill_range", False),  # series decoded as generated
        "length_attribute": state.get("length_attribute", False),  # ended by the flag
        "onset_attribute": state.get("onset_attribute", False),  # decoded as generated
        "period_features": state.get("period_features", []),  # before the period carrier
        "period_harmonics": state.get("period_harmonics", 3),  # the carrier's first form
        "period_waveform": state.get("period_waveform", "step"),  # its first two forms
        **{key: optional(key, kind) for key, kind in TRAINING_MAPS.items()},
    }
