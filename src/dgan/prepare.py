"""Training data, from what users pass to what the trainer takes, in one pass.

The data goes one way, through these stages:

    a table and its `Columns` --tabular.frames--> arrays + `FrameLayout`
    (or numpy arrays and their types, as they are)
      --tabular.arrays: checked copies-->           `TrainingArrays`
      --tabular.missing: short gaps interpolated, hopeless examples dropped-->
      --the config settled for the data's size (`DGANConfig.resolved_for`)-->
      --encoding: encoders fitted on the first call, or the data checked against them-->
    `Prepared`: the `EncodedData` with the encoder, config and layout it was made with.

A `FrameSource` or `ArraySource` holds what the user passed; `check` runs the first two
stages (all `dgan.planning` needs), `prepare` all of them (what `DGAN` trains on).

Example:
    >>> import numpy as np
    >>> from dgan import DGANConfig
    >>> config = DGANConfig(max_sequence_len=4, sample_len=2)
    >>> prepared = prepare(ArraySource(np.random.default_rng(0).random((8, 4, 1))), config)
    >>> prepared.encoded.features.shape, prepared.config.batch_size
    ((8, 4, 1), 16)
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
import torch

from dgan.config import DGANConfig, OutputType
from dgan.encoding.encoder import DataEncoder, EncodedData
from dgan.encoding.mismatch import mismatch_problems
from dgan.errors import DataError, ParameterError, raise_all
from dgan.privacy.public import public_parts, within_public
from dgan.tabular.arrays import TrainingArrays, validate_training_arrays
from dgan.tabular.columns import Columns
from dgan.tabular.frames import dataframe_to_arrays
from dgan.tabular.layout import FrameLayout
from dgan.tabular.messages import Labels
from dgan.tabular.missing import repair_missing_values
from dgan.train.memory import check_data_memory, check_memory

logger = logging.getLogger(__name__)


@dataclass
class Checked:
    """The user's data after the checks: validated copies, and the table's layout. It is a
    `Source` too (already checked), so it can be prepared without checking again."""

    arrays: TrainingArrays
    layout: FrameLayout | None  # None for numpy data
    frame: pd.DataFrame | None  # the user's table (read only), for the plan's warnings
    fixed_length: bool = False  # the data's form says every series is max_sequence_len long

    def check(self, max_sequence_len: int) -> Checked:
        return self


class Source(Protocol):
    """Training data as a user passed it."""

    def check(self, max_sequence_len: int) -> Checked: ...


@dataclass(frozen=True)
class FrameSource:
    """A DataFrame and the roles of its columns (`DGAN.train_dataframe`'s arguments).

    Its check is done once per ``max_sequence_len`` and kept (a plan and the training
    that follows it may share one source): the frame must not change meanwhile.
    """

    df: pd.DataFrame
    columns: Columns
    _checked: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def check(self, max_sequence_len: int) -> Checked:
        if max_sequence_len not in self._checked:
            self._checked[max_sequence_len] = self._check(max_sequence_len)
        return self._checked[max_sequence_len]

    def _check(self, max_sequence_len: int) -> Checked:
        columns = self.columns
        if columns.is_long and columns.example_id_column is None and columns.attribute_columns:
            raise ParameterError(  # gretel's words first
                "Long-style auto-splitting not available with attribute_columns: without "
                "example_id_column, rows are cut into chunks of max_sequence_len, which "
                "cannot carry per-example attributes. Pass example_id_column, or no "
                "attributes."
            )
        converted = dataframe_to_arrays(self.df, self.columns, max_sequence_len)
        layout = converted.layout
        arrays = validate_training_arrays(
            converted.features,
            converted.feature_types,
            converted.attributes,
            converted.attribute_types if converted.attributes is not None else None,
            max_sequence_len,
            feature_names=layout.feature_names,
            attribute_names=layout.attribute_columns or None,
            example_names=converted.example_labels,
        )
        # WIDE rows and LONG chunks have max_sequence_len steps by their form.
        fixed = not columns.is_long or columns.example_id_column is None
        return Checked(arrays, layout, self.df, fixed)


@dataclass(frozen=True)
class ArraySource:
    """Numpy data (`DGAN.train_numpy`'s arguments)."""

    features: Any  # (N, T, F) array or a list of (T_i, F) arrays
    feature_types: list[OutputType] | None = None
    attributes: np.ndarray | None = None
    attribute_types: list[OutputType] | None = None

    def check(self, max_sequence_len: int) -> Checked:
        arrays = validate_training_arrays(
            self.features,
            self.feature_types,
            self.attributes,
            self.attribute_types,
            max_sequence_len,
        )
        fixed = isinstance(self.features, np.ndarray) and self.features.ndim == 3
        return Checked(arrays, None, None, fixed)


def source_of(data: pd.DataFrame | Any, **how: Any) -> FrameSource | ArraySource:
    """A table and its column roles (gretel's keyword names), or numpy data and its types,
    as `DGAN.train_dataframe` or `DGAN.train_numpy` take them.

    Example:
        >>> source_of(pd.DataFrame({"x": [1.0]}), df_style="wide").columns.df_style
        'wide'
    """
    if isinstance(data, (FrameSource, ArraySource, Checked)):  # a source already
        return data
    if isinstance(data, pd.DataFrame):
        return FrameSource(data, Columns(**how))
    return ArraySource(data, **how)


@dataclass
class Prepared:
    """Data ready to train on, with what made it.

    Attributes:
        encoded: the encoded arrays.
        encoder: the encoder that made them (fitted here on a model's first call).
        config: the config settled for the data (``large_data`` decided).
        layout: the table's layout (the one given, else the data's; None for arrays).
    """

    encoded: EncodedData
    encoder: DataEncoder
    config: DGANConfig
    layout: FrameLayout | None


def fit_encoder(config: DGANConfig, arrays: TrainingArrays) -> DataEncoder:
    """The encoders a first training call fits on ``arrays`` (checked and repaired), with
    the variables' names for messages.

    Example:
        >>> import numpy as np
        >>> from dgan import OutputType
        >>> from dgan.tabular.arrays import TrainingArrays
        >>> arrays = TrainingArrays(np.zeros((2, 4, 1)), [OutputType.CONTINUOUS], None, None)
        >>> fit_encoder(DGANConfig(max_sequence_len=4, sample_len=2), arrays).feature_dim
        1
    """
    return DataEncoder.fit(
        config,
        arrays.features,
        arrays.feature_types,
        arrays.attributes,
        arrays.attribute_types,
        feature_names=arrays.feature_names,
        attribute_names=arrays.attribute_names,
    )


def prepare(
    source: Source,
    config: DGANConfig,
    encoder: DataEncoder | None = None,
    layout: FrameLayout | None = None,
    resuming: str | os.PathLike | None = None,
    device: torch.device | None = None,
) -> Prepared:
    """Check, repair and encode ``source`` for training with ``config``.

    Without ``encoder`` (a model's first training call) the config is settled for the
    data's size, the encoders are fitted on the data, and networks too large to train on
    ``device`` (None: the CPU) are refused before any is built (`check_memory`); with one
    (continuing training, or resuming from the checkpoint ``resuming``, whose encoder it
    is), the data must fit it (and a table must have ``layout``'s columns).
    """
    checked = source.check(config.max_sequence_len)
    new = checked.layout
    if layout is not None and new is not None and new.column_order != layout.column_order:
        if resuming is not None:
            raise _other_run(
                resuming, f"it was trained on columns {layout.column_order}, this call "
                f"passes {new.column_order}"
            )  # fmt: skip
        raise DataError(
            f"This model was trained on columns {layout.column_order}; "
            f"continue training with the same columns, not {new.column_order}."
        )
    layout = checked.layout if layout is None else layout
    arrays, _ = repair_missing(checked.arrays, config)
    new_model = encoder is None
    if encoder is None and config.dp_target_epsilon is not None:  # nothing read from values
        config = settle(config, len(arrays.features))
        encoder, layout = public_parts(config, arrays, layout, checked.fixed_length)
        arrays = within_public(arrays, encoder)  # clipped to the public ranges
    elif encoder is None:
        config = settle(config, len(arrays.features))
        encoder = fit_encoder(config, arrays)
    elif (arrays.attributes is None) != (encoder.attribute_encoders is None):
        trained = "without" if encoder.attribute_encoders is None else "with"
        if resuming is not None:
            now = "has none" if arrays.attributes is None else "has some"
            raise _other_run(resuming, f"it was trained {trained} attributes, this data {now}")
        raise DataError(
            f"This model was first trained {trained} attributes; continue training with "
            "data of the same shape."
        )
    else:
        if config.dp_target_epsilon is not None:
            arrays = within_public(arrays, encoder)
        problems = mismatch_problems(encoder, arrays.features, arrays.attributes)
        if problems and resuming is not None:
            raise _other_run(resuming, "; ".join(problems))
        raise_all(problems, DataError, "the data to continue training on")
    n = len(arrays.features)
    extra = 4 * n * (encoder.attribute_dim + encoder.additional_dim)
    shape = (n, encoder.max_sequence_len, encoder.feature_dim)
    check_data_memory(shape, extra, "memory", torch.device("cpu"))  # before it is made
    if new_model:  # its networks, before they are built
        check_memory(config, encoder, device or torch.device("cpu"))
    encoded = encoder.transform(arrays.features, arrays.attributes)
    return Prepared(encoded, encoder, config, layout)


def _other_run(checkpoint: str | os.PathLike, detail: str) -> DataError:
    return DataError(
        f"Cannot resume from {str(checkpoint)!r}: this checkpoint belongs to another run, "
        f"or the data changed ({detail}). Resume with the data and columns of the run that "
        "wrote it, or train this data as a new run (without resume_from, into another "
        "checkpoint_dir)."
    )


def settle(config: DGANConfig, n_series: int) -> DGANConfig:
    """``config`` as training on ``n_series`` series uses it (``large_data`` decided); says
    so in the log when the data's size chose the large-data settings."""
    resolved = config.resolved_for(n_series)
    if resolved.large_data and config.large_data == "auto":
        changed = "".join(
            f"{name}={getattr(resolved, name)}, "
            for name in ("batch_size", "generator_learning_rate", "training_steps")
            if name not in config.fields_set  # picked, not the caller's
        )
        logger.info(
            "%d series: training with the settings picked for that size (%s...; "
            "docs/quality.md); large_data=False keeps gretel's.",
            n_series,
            changed,
        )
    return resolved


def repair_missing(arrays: TrainingArrays, config: DGANConfig) -> tuple[TrainingArrays, str]:
    """Interpolate short NaN gaps in continuous features and drop hopeless examples, by the
    config's thresholds (`dgan.tabular.missing.repair_missing_values`); returns new arrays
    and the one-line summary of what was repaired ("" when nothing was missing).

    Example:
        >>> from dgan.tabular.arrays import validate_training_arrays
        >>> series = np.array([[[1.0], [np.nan], [3.0], [4.0]], [[1.0], [2.0], [3.0], [4.0]]])
        >>> checked = validate_training_arrays(series, None, None, None, 4)
        >>> config = DGANConfig(max_sequence_len=4, sample_len=1, max_nan_fraction=0.5)
        >>> repaired, summary = repair_missing(checked, config)
        >>> repaired.features[0].ravel().tolist(), summary.split(" (")[0]
        ([1.0, 2.0, 3.0, 4.0], 'missing values: 1 interpolated in 1 of 2 examples')
    """
    continuous = [i for i, t in enumerate(arrays.feature_types) if t == OutputType.CONTINUOUS]
    if not continuous:
        return arrays, ""
    features, kept, summary = repair_missing_values(
        arrays.features,
        continuous,
        max_nan_fraction=config.max_nan_fraction,
        max_consecutive_nans=config.max_consecutive_nans,
        max_dropped_fraction=config.max_dropped_fraction,
        feature_names=arrays.feature_names,
        example_names=arrays.example_names,
    )
    if kept.all():
        return dataclasses.replace(arrays, features=features), summary
    attributes = None if arrays.attributes is None else arrays.attributes[kept]
    names = arrays.example_names
    if isinstance(names, Labels):
        names = names.subset(kept)
    elif names is not None:
        names = [name for name, k in zip(names, kept, strict=True) if k]
    repaired = dataclasses.replace(
        arrays, features=features, attributes=attributes, example_names=names
    )
    return repaired, summary
