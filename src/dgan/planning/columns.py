"""The training plan's lines for the columns: each one's role and type, and what encoding
and decoding will do with it (log scale, value map, texture, standardization, per-class
levels and shares), said as the encoder's fit on the same data decides it.

Example:
    >>> import numpy as np
    >>> from dgan import DGANConfig
    >>> from dgan.tabular.arrays import validate_training_arrays
    >>> arrays = validate_training_arrays(np.ones((4, 3, 1)), None, None, None, 3)
    >>> config = DGANConfig(max_sequence_len=3, sample_len=1)
    >>> [(c.name, c.role, c.detail) for c in describe_columns(arrays, None, config)]
    [('feature 0', 'feature', 'range 1 .. 1')]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dgan.config import DfStyle, DGANConfig, OutputType
from dgan.config.sizing import LONG_SERIES
from dgan.encoding.example_scaling import fills_range, logs_ranges, series_ranges
from dgan.encoding.log_scale import scale_floor, to_log
from dgan.encoding.mapped_features import holds_often, matches_marginals, one_distribution
from dgan.encoding.standardized import Standardized
from dgan.encoding.texture import matches_texture
from dgan.prepare import fit_encoder
from dgan.tabular.arrays import TrainingArrays
from dgan.tabular.layout import FrameLayout
from dgan.tabular.suspicious import distinct, pooled_features


@dataclass
class ColumnPlan:
    """One column (or, in WIDE tables, the time-step columns of the feature)."""

    name: str
    role: str  # "attribute", "feature", "example id", "time"
    kind: str  # "discrete", "continuous" or "" (id and time columns)
    detail: str = ""  # "3 categories", "range -1.2 .. 4"


def column_names(arrays: TrainingArrays, layout: FrameLayout | None) -> tuple[list, list]:
    """The attributes' and the features' names: the table's columns, else numbered."""
    if layout is not None:
        return list(layout.attribute_columns), list(layout.feature_names)
    n_attributes = 0 if arrays.attributes is None else arrays.attributes.shape[1]
    features = range(len(arrays.feature_types))
    return [f"attribute {j}" for j in range(n_attributes)], [f"feature {j}" for j in features]


def classed(arrays: TrainingArrays) -> bool:
    """Whether the data has a discrete attribute (classes to scale, share and read by)."""
    return OutputType.DISCRETE in (arrays.attribute_types or [])


def describe_columns(
    arrays: TrainingArrays,
    layout: FrameLayout | None,
    config: DGANConfig,
    carried: list[int] | None = None,
) -> list[ColumnPlan]:
    """Each column of the (repaired) training ``arrays``: role, type, and what encoding and
    decoding will do with it, as the encoder's fit decides it; the ``carried`` features
    (`dgan.encoding.periods`) take no texture filter, and at "auto" the value map."""
    log_scale = config.log_scale if config.apply_feature_scaling else False
    fill = config.fill_series_range if config.apply_example_scaling else False
    ranges = config.apply_example_scaling and config.dp_target_epsilon is None  # fitted ones
    match = config.match_marginals if config.dp_target_epsilon is None else False
    by_class = classed(arrays)
    texture = config.match_texture if config.dp_target_epsilon is None else False
    filtered = matches_texture(texture, config.max_sequence_len, LONG_SERIES)
    decoding = (fill, match, one_distribution(by_class, len(arrays.features)), filtered)
    attribute_names, feature_names = column_names(arrays, layout)
    columns = []
    for j, name in enumerate(attribute_names):
        kind, values = arrays.attribute_types[j], arrays.attributes[:, j]
        columns.append(
            _column(str(name), "attribute", kind, values, _floor(kind, values, log_scale))
        )
    pooled = pooled_features(arrays)
    T, setting = config.max_sequence_len, config.log_series_ranges
    for j, name in enumerate(feature_names):
        kind = arrays.feature_types[j]
        continuous = kind is not OutputType.DISCRETE
        # As the encoder's fit reads them, and only where they decide (at "auto").
        holds = match == "auto" and continuous and holds_often(arrays.features, j, T)
        auto = ranges and continuous and setting == "auto"
        floor = _floor(kind, pooled[:, j], log_scale)
        half = _half_ranges(arrays, j, floor) if auto else np.zeros(0)
        logged = ranges and continuous and logs_ranges(setting, T, half)
        drawn = j in (carried or ())
        own = (*decoding[:3], decoding[3] and not drawn, logged)
        column = _column(str(name), "feature", kind, pooled[:, j], floor, own, holds, drawn)
        if layout is not None and layout.df_style is DfStyle.WIDE:
            column.detail += f"; {len(layout.feature_columns)} time-step columns"
        columns.append(column)
    if layout is not None and layout.example_id_column is not None:
        columns.append(ColumnPlan(str(layout.example_id_column), "example id", ""))
    if layout is not None and layout.time_column is not None:
        columns.append(ColumnPlan(str(layout.time_column), "time", "orders each series"))
    return columns


STANDARDIZED = "generated series standardized as every training series is (match_standardization)"
OWN_RANGES = "each class gets its own range of series levels (per_class_scaling)"
KEPT_SHARES = "each class generated at its share of the training series (match_class_shares)"
SWITCHES = (
    "switching between a class's levels as often and as long as the training series, each "
    "level as steady and noisy (match_switches)"
)
MAPPED = "generated values take the data's distribution (match_marginals)"
"""What the plan says on the line of a feature standardized series by series, of the
attribute whose classes get levels of their own, of the one whose shares are kept, of a
feature whose classes have levels with nothing between them, and of a mapped feature."""


def note_fitted(columns: list[ColumnPlan], config: DGANConfig, arrays: TrainingArrays) -> None:
    """Say, as the encoder's fit on the repaired ``arrays`` decides them, which features'
    series are standardized or switch between levels (`dgan.encoding.switches`), which
    attribute's classes get levels of their own and which one's shares are kept; a
    private encoder reads none of it."""
    if config.dp_target_epsilon is not None:
        return
    scaling, discrete = config.per_class_scaling, classed(arrays)
    # The whole fit only where the class lines need it; the moments come with it.
    whole = scaling is True or (discrete and (scaling == "auto" or config.match_class_shares))
    encoder = fit_encoder(config, arrays) if whole else None
    if encoder is not None:
        kept = encoder.standardized
    elif config.match_standardization:
        continuous = [j for j, k in enumerate(arrays.feature_types) if k is OutputType.CONTINUOUS]
        kept = Standardized.fit(arrays.features, continuous)
    else:
        kept = None
    lines = [c for c in columns if c.role == "feature"]
    for j in [] if kept is None else kept.moments:
        lines[j].detail += f"; {STANDARDIZED}"
    if encoder is None:
        return
    marginals = encoder.marginals
    for k, j in enumerate([] if marginals is None else marginals.features):
        if any(marginals.gaps_of(k, g)[0].size for g in range(marginals.n_classes)):
            if MAPPED not in lines[j].detail:  # mapped for its levels (`levels_apart`)
                lines[j].detail += f"; {MAPPED}"
            lines[j].detail += f"; {SWITCHES}"
    lines = [c for c in columns if c.role == "attribute"]
    if encoder.groups is not None:
        lines[encoder.groups.attribute].detail += f"; {OWN_RANGES}"
    if encoder.class_shares is not None:
        lines[encoder.class_shares.attribute].detail += f"; {KEPT_SHARES}"


def _column(
    name: str,
    role: str,
    kind: OutputType,
    values: np.ndarray,
    floor: float | None,  # its log floor (`_floor`), None on a linear scale
    decoding: tuple = (False,) * 5,  # as the encoder: fill, match, whole, texture, logs ranges
    holds: bool = False,  # the feature's series hold their values often (`holds_often`)
    carried: bool = False,  # a carrier draws the feature (`dgan.encoding.periods`)
) -> ColumnPlan:
    if kind is OutputType.DISCRETE:
        count = distinct(values)
        return ColumnPlan(name, role, "discrete", f"{count} categor{'y' if count == 1 else 'ies'}")
    numbers = np.asarray(values, dtype=np.float64)
    finite = numbers[np.isfinite(numbers)]
    detail = f"range {finite.min():.4g} .. {finite.max():.4g}" if finite.size else "no values"
    if floor is not None:
        detail += f"; log scale (log_scale), below {floor:.3g} linear"
    if decoding[4]:
        detail += "; each series' range learned on a log scale (log_series_ranges)"
    if fills_range(decoding[0], floor is not None):
        detail += "; generated series fill their range (fill_series_range)"
    if matches_marginals(decoding[1], floor is not None, decoding[2], holds, carried):
        detail += f"; {MAPPED}"
    if decoding[3]:
        detail += "; generated series take the data's texture per class (match_texture)"
    return ColumnPlan(name, role, "continuous", detail)


def _floor(kind: OutputType, values: np.ndarray, log_scale: bool | str) -> float | None:
    """A continuous variable's log floor, as the encoder decides it (`ContinuousEncoder.fit`);
    None for a discrete one."""
    if kind is OutputType.DISCRETE:
        return None
    numbers = np.asarray(values, dtype=np.float64)
    return scale_floor(numbers[np.isfinite(numbers)], log_scale)


def _half_ranges(arrays: TrainingArrays, feature: int, floor: float | None) -> np.ndarray:
    """(N,) each series' half-range of ``feature`` on its scale (``floor``: its log floor,
    None on a linear scale), up to the factor of the global scaling (`logs_ranges` reads
    their ratios)."""
    values = arrays.features.rows[:, feature].astype(np.float64)
    z = values if floor is None else to_log(values, floor)
    return series_ranges(arrays.features, z[None, :])[1][:, 0]
