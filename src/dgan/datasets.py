"""A small real dataset bundled with dgan, for demos, docs and smoke tests.

``load_demo()`` returns daily weather observed in Seattle from 2012 to 2015 (NOAA data,
public domain, as shipped by the ``vega_datasets`` package), cut into one example per
calendar month. Each example has one attribute, the month name, and four daily
features: precipitation (mm), maximum and minimum temperature (°C) and wind speed (m/s).
Only the first 28 days of each month are kept, so all 48 examples have the same length.
Source, licence and derivation: ``dgan/data/README.md`` and
``scripts/make_demo_dataset.py`` in the repository.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from dgan.errors import DataError

__all__ = ["DEMO_COLUMNS", "DEMO_MAX_SEQUENCE_LEN", "load_demo"]

_DEMO_FILE = "seattle_weather_monthly.csv.gz"

DEMO_MAX_SEQUENCE_LEN = 28
"""Length of every demo series (days). Divisible by 1, 2, 4, 7 and 14 for ``sample_len``."""

DEMO_COLUMNS = {
    "attribute_columns": ["month"],
    "feature_columns": ["precipitation", "temp_max", "temp_min", "wind"],
    "example_id_column": "example_id",
    "time_column": "day",
    "discrete_columns": ["month"],
}
"""Keyword arguments that describe the demo frame to ``train_dataframe(..., df_style="long")``.

Pass as ``**DEMO_COLUMNS``; copy the lists before changing them, the dict is shared.
"""

# Types read from the CSV: ids and labels stay strings, the time step is an integer.
_DTYPES = {
    "example_id": object,
    "month": object,
    "day": "int64",
    "precipitation": "float64",
    "temp_max": "float64",
    "temp_min": "float64",
    "wind": "float64",
}


def load_demo() -> pd.DataFrame:
    """Load the bundled Seattle weather demo dataset as a long-format DataFrame.

    One row per (example, day): 48 examples (one per month, ``example_id`` like
    ``"2012-01"``) x 28 days = 1344 rows, sorted by ``example_id`` then ``day``, with
    columns ``example_id`` (str), ``month`` (str, ``"Jan"``..``"Dec"``; the attribute),
    ``day`` (int, 1..28; the time step) and the float features ``precipitation``,
    ``temp_max``, ``temp_min``, ``wind``. No missing values. Each call returns a fresh
    frame, so changing it does not affect later calls.

    Example:
        >>> from dgan.datasets import DEMO_COLUMNS, DEMO_MAX_SEQUENCE_LEN, load_demo
        >>> df = load_demo()
        >>> df.shape
        (1344, 7)
        >>> bool(df.groupby("example_id").size().eq(DEMO_MAX_SEQUENCE_LEN).all())
        True
        >>> features = df[DEMO_COLUMNS["feature_columns"]].to_numpy()
        >>> features.reshape(-1, DEMO_MAX_SEQUENCE_LEN, 4).shape  # (examples, days, features)
        (48, 28, 4)
    """
    # importlib.resources, not a path next to __file__: works from zipped installs too.
    resource = resources.files("dgan") / "data" / _DEMO_FILE
    try:
        with resource.open("rb") as handle:
            return pd.read_csv(handle, compression="gzip", dtype=_DTYPES)
    except FileNotFoundError as exc:
        raise DataError(
            f"The bundled demo file dgan/data/{_DEMO_FILE} is missing from this "
            "installation; reinstall dgan from a wheel or a checkout that includes "
            "src/dgan/data/ (package-data 'data/*')."
        ) from exc
