"""Tables on disk: CSV (optionally compressed) and Parquet, read and written by file name.

`read_table` raises a `DataError` naming the file for anything unreadable (a missing
file, a broken Parquet file, a ``.csv.gz`` that is not gzip); `write_table` writes a
whole frame and `TableWriter` appends frames one chunk at a time, so that large
outputs never need to fit in memory at once.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv.gz"
    >>> _ = write_table(pd.DataFrame({"x": [1, 2]}), path)
    >>> read_table(path)["x"].tolist()
    [1, 2]
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pandas as pd

from dgan.errors import DataError, ParameterError

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".csv.zst")


def table_format(path: str | Path) -> str:
    """ "csv" or "parquet", by the file name; a `ParameterError` for anything else.

    Example:
        >>> table_format("data.csv.gz"), table_format("data.parquet")
        ('csv', 'parquet')
    """
    name = str(path).lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    raise ParameterError(
        f"{str(path)!r}: unknown table format; use a .csv (optionally compressed, e.g. "
        ".csv.gz) or .parquet file."
    )


def require_module(module: str, what: str, extra: str) -> None:
    """Raise a `ParameterError` naming the pip extra when an optional module is missing.

    Example:
        >>> require_module("json", "JSON output needs json", "none")  # present: no error
    """
    try:
        __import__(module)
    except ImportError:
        raise ParameterError(f'{what}; install it with pip install "dgan[{extra}]".') from None


def check_table_format(path: str | Path) -> None:
    """Check that ``path`` names a table format dgan can write here (pyarrow for Parquet)."""
    if table_format(path) == "parquet":
        _require_pyarrow()


def _require_pyarrow() -> None:
    require_module("pyarrow", "Parquet files need pyarrow (or use CSV)", "parquet")


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet table; unreadable files raise `DataError` naming the file."""
    kind = table_format(path)
    if kind == "parquet":
        _require_pyarrow()
    if not Path(path).is_file():
        raise DataError(f"No such file: {str(path)!r}; check the path.")
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except (
        ValueError,  # pyarrow's ArrowInvalid, UnicodeDecodeError and pandas' parser errors
        EOFError,  # a truncated compressed file
        zlib.error,
        OSError,  # gzip.BadGzipFile and other decompressors' "not a ... file"
    ) as e:
        if isinstance(e, OSError) and type(e).__name__ in ("PermissionError", "IsADirectoryError"):
            raise
        label = "CSV" if kind == "csv" else "Parquet"
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        compressed = kind == "csv" and not str(path).lower().endswith(".csv")
        fix = (
            f"check that it is a valid {label} file compressed as its name says"
            if compressed
            else f"check that it is a valid {label} file"
        )
        raise DataError(f"Cannot read {str(path)!r} as {label} ({reason}); {fix}.") from e


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as CSV or Parquet (by the file name), creating parent folders."""
    with TableWriter(path) as writer:
        writer.write(df)
    return Path(path)


class TableWriter:
    """Write a table in chunks: CSV chunks are appended, Parquet chunks become row groups.

    Use as a context manager. Chunks go to a temporary file next to ``path`` that
    replaces ``path`` only when the block ends without an error, so a failed run never
    leaves a half-written table (or destroys the file it was to replace). At least one
    chunk must be written (it gives the columns).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
        >>> with TableWriter(path) as writer:
        ...     writer.write(pd.DataFrame({"x": [1]}))
        ...     writer.write(pd.DataFrame({"x": [2]}))
        >>> read_table(path)["x"].tolist()
        [1, 2]
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._partial = self.path.with_name(f".{self.path.name}.partial")
        self.format = table_format(path)
        if self.format == "parquet":
            _require_pyarrow()
        self._parquet = None
        self._csv = None  # the open text handle of a CSV

    def __enter__(self) -> TableWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self

    def write(self, df: pd.DataFrame) -> None:
        """Append ``df``'s rows (same columns and dtypes as the first chunk)."""
        if self.format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(df, preserve_index=False)
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self._partial, table.schema)
            self._parquet.write_table(table.cast(self._parquet.schema))
            return
        if self._csv is None:
            self._csv = _open_text(self._partial, self.path.name)
            df.to_csv(self._csv, index=False)
        else:
            df.to_csv(self._csv, index=False, header=False)

    def __exit__(self, exc_type, exc, traceback) -> None:
        try:
            for handle in (self._parquet, self._csv):
                if handle is not None:
                    handle.close()  # writes what is buffered: can fail (a full disk)
            if exc_type is None and self._partial.exists():
                os.replace(self._partial, self.path)
        except OSError as error:
            raise self._named(error) from error
        finally:
            self._parquet = self._csv = None
            self._partial.unlink(missing_ok=True)  # gone already after a success
        if isinstance(exc, OSError) and exc.filename is None:  # e.g. a failed write
            raise self._named(exc) from exc

    def _named(self, error: OSError) -> OSError:
        """``error`` naming the output (the user's path, not the hidden partial file)."""
        return OSError(error.errno, error.strerror or str(error), str(self.path))


def _open_text(path: Path, name: str):
    """A text handle on ``path`` compressed as ``name`` says (.gz, .bz2, .xz, .zip, .zst)."""
    lower = name.lower()
    if lower.endswith(".gz"):
        import gzip

        return gzip.open(path, "wt", encoding="utf-8", newline="")
    if lower.endswith(".bz2"):
        import bz2

        return bz2.open(path, "wt", encoding="utf-8", newline="")
    if lower.endswith(".xz"):
        import lzma

        return lzma.open(path, "wt", encoding="utf-8", newline="")
    if lower.endswith(".zip"):
        import io
        import zipfile

        archive = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        member = archive.open(name[: -len(".zip")], "w", force_zip64=True)
        return _ClosingText(io.TextIOWrapper(member, encoding="utf-8", newline=""), archive)
    if lower.endswith(".zst"):
        import io

        zstandard = __import__("zstandard")  # pandas needs it to read .zst as well
        raw = open(path, "wb")  # noqa: SIM115 (closed by _ClosingText)
        stream = zstandard.ZstdCompressor().stream_writer(raw)
        return _ClosingText(io.TextIOWrapper(stream, encoding="utf-8", newline=""), raw)
    return open(path, "w", encoding="utf-8", newline="")


class _ClosingText:
    """A text handle that also closes what it writes into (a zip archive, a raw file)."""

    def __init__(self, text, outer):
        self._text, self._outer = text, outer

    def write(self, data: str) -> int:
        return self._text.write(data)

    def close(self) -> None:
        try:
            self._text.close()
        finally:
            self._outer.close()
