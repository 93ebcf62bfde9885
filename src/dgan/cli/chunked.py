"""Generating many series into a table file, a chunk at a time.

`write_generated` asks the model for at most `GENERATE_CHUNK` series at a time and
appends each chunk to the output (`dgan.cli.tables.TableWriter`), with example ids that
continue across chunks, so ``dgan generate -n 100000000`` needs the memory of one chunk
rather than of the whole result.

Example:
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> from dgan import DGAN, DGANConfig
    >>> df = pd.DataFrame({"id": [0, 0, 1, 1, 2, 2], "x": [1.0, 2, 3, 4, 5, 6]})
    >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, epochs=1, cuda=False))
    >>> model.train_dataframe(df, example_id_column="id", df_style="long", progress_bar=False)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> write_generated(model, path, n=5, chunk_size=2)
    (5, 10)
    >>> pd.read_csv(path)["id"].unique().tolist()
    [0, 1, 2, 3, 4]
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dgan.cli.tables import TableWriter
from dgan.model import DGAN
from dgan.tabular.frames import attributes_frame_to_array
from dgan.tabular.to_frame import renumber_examples

GENERATE_CHUNK = 10_000
"""Series generated (and held in memory) at a time by `write_generated`."""


def write_generated(
    model: DGAN,
    path: str | Path,
    n: int | None = None,
    attributes: pd.DataFrame | None = None,
    chunk_size: int | None = None,
) -> tuple[int, int]:
    """Generate ``n`` series (or one per row of ``attributes``) into the table ``path``.

    Returns ``(series, rows)`` written. ``attributes`` is a frame of attribute values as
    `DGAN.generate_dataframe` takes it; a LONG one (several rows per example id) is
    generated in one piece. All its rows are checked first, so that a bad row (a category
    never seen in training, say) is reported before generating, not after the chunks
    before it. ``chunk_size`` defaults to `GENERATE_CHUNK`.
    """
    layout = model.data_frame_layout
    chunk_size = chunk_size or GENERATE_CHUNK
    if attributes is not None:  # every row checked before any series is generated
        model.sampler.encode_condition(attributes_frame_to_array(attributes, layout))
    series = rows = 0
    with TableWriter(path) as writer:
        for chunk_n, chunk_attributes in _chunks(n, attributes, layout, chunk_size):
            frame = model.generate_dataframe(chunk_n, attributes=chunk_attributes)
            if series and layout is not None:
                frame = renumber_examples(frame, layout, series)
                if len(frame.columns) > len(layout.column_order):  # gretel's "example_id"
                    frame[frame.columns[-1]] += series
            writer.write(frame)
            series += _count_series(frame, layout, chunk_n, chunk_attributes)
            rows += len(frame)
    return series, rows


def _chunks(n, attributes, layout, chunk_size):
    if attributes is None:
        for start in range(0, n, chunk_size):
            yield min(chunk_size, n - start), None
        return
    id_column = layout.example_id_column if layout is not None else None
    if (
        id_column is not None
        and id_column in attributes
        and attributes[id_column].duplicated().any()
    ):
        yield n, attributes
        return
    for start in range(0, len(attributes), chunk_size):
        yield None, attributes.iloc[start : start + chunk_size]


def _is_long_attributes(attributes: pd.DataFrame, layout) -> bool:
    """Whether the attributes frame has several rows per example id."""
    id_column = layout.example_id_column if layout is not None else None
    return (
        id_column is not None
        and id_column in attributes.columns
        and bool(attributes[id_column].duplicated().any())
    )


def _count_series(frame, layout, n, attributes) -> int:
    if n is not None:
        return n
    if _is_long_attributes(attributes, layout):
        return int(attributes[layout.example_id_column].nunique())
    return len(attributes)
