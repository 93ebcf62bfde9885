"""Decoded generated series matched to the training data, in the order generation applies
the encoder's maps (`dgan.encoding.training_maps`): each carried wave moved onto the
training centres (`CentreMap`), the texture filter (`SeriesTexture`), the value map
(`ValueMarginals`), then each series' mean and deviation (`Standardized`). Each map but
the last reads what the generator makes of a fixed calibration sample (`Calibration`,
drawn by `dgan.sampling.Sampler.calibration`); `calibrate` reads it, applying each map
before the next one's quantiles are taken, as generation does."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from dgan.encoding.holds import DeadBands
from dgan.series import SeriesRows


class Calibration(NamedTuple):
    """What generation reads from the generator's own calibration sample: the texture
    filters, the texture's dead bands, the value quantiles, the quantiles of the
    generated periods' units (`PeriodMap`) and of the carried waves' centres
    (`CentreMap`), the margins of the value map's switches
    (`ValueMarginals.margins`), how it steadies each level (`ValueMarginals.steadiness`)
    and the noise it adds on each level (`ValueMarginals.noise`); None where unused."""

    kernels: np.ndarray | None
    holds: DeadBands | None
    quantiles: np.ndarray | None
    periods: np.ndarray | None = None
    centres: np.ndarray | None = None
    switches: np.ndarray | None = None
    noise: np.ndarray | None = None
    steady: np.ndarray | None = None


def calibrated(encoder: Any) -> bool:
    """Whether decoding ``encoder``'s (a `DataEncoder`) series reads a `Calibration` of
    decoded series (the centre, texture or value map): `calibrate`."""
    return any(m is not None for m in (encoder.centre_map, encoder.texture, encoder.marginals))


def match_training(
    encoder: Any, calibration: Calibration | None, attributes: np.ndarray | None, rows: SeriesRows
) -> SeriesRows:
    """Decoded ``rows`` (and their decoded ``attributes``) matched to the training data by
    each of ``encoder``'s maps it has, in order, from ``calibration`` (`calibrate`; None
    where `calibrated` is False).

    Example:
        >>> from dgan import DGAN, DGANConfig
        >>> config = DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False,
        ...                     match_standardization=True)
        >>> model = DGAN(config)
        >>> data = np.random.default_rng(0).normal(size=(8, 4, 1))
        >>> data = (data - data.mean(1, keepdims=True)) / data.std(1, keepdims=True)
        >>> model.train_numpy(data, progress_bar=False)
        >>> rows = match_training(model.encoder, None, None, SeriesRows.from_padded(data + 3))
        >>> bool(np.allclose(rows.padded(4).mean(1), 0, atol=1e-6))  # standardized again
        True
    """
    centres, texture, marginals = encoder.centre_map, encoder.texture, encoder.marginals
    if centres is not None:  # each carried wave onto the training centres
        classes = encoder.class_of(attributes, centres.attribute)
        rows = centres.apply(rows, classes, calibration.centres)
    if texture is not None:  # the training series' step-to-step texture and holds
        classes = encoder.class_of(attributes, texture.attribute)
        rows = texture.apply(rows, classes, calibration.kernels, calibration.holds)
    if marginals is not None:  # values onto the training values' distribution
        classes = encoder.class_of(attributes, marginals.attribute)
        rows = marginals.apply(
            rows, classes, calibration.quantiles, calibration.switches, calibration.noise,
            log_floors(encoder), calibration.steady,
        )  # fmt: skip
    if encoder.standardized is not None:
        rows = encoder.standardized.apply(rows)
    return rows


def calibrate(encoder: Any, attributes: np.ndarray | None, rows: SeriesRows) -> Calibration:
    """The `Calibration` of ``encoder``'s maps from the decoded calibration sample
    ``attributes``, ``rows``: each map's quantiles or filters read after the maps before
    it have moved the rows (`match_training`'s order); ``periods`` left None."""
    centre_map, texture, marginals = encoder.centre_map, encoder.texture, encoder.marginals
    centres = None
    if centre_map is not None:
        classes = encoder.class_of(attributes, centre_map.attribute)
        centres = centre_map.quantiles(rows, classes)
        rows = centre_map.apply(rows, classes, centres)
    value_classes = None
    if marginals is not None:
        value_classes = encoder.class_of(attributes, marginals.attribute)

    def value_map(filtered: SeriesRows) -> SeriesRows:  # what decoding does next
        own = marginals.quantiles(filtered, value_classes)
        margins = marginals.margins(filtered, value_classes, own)
        return marginals.apply(filtered, value_classes, own, margins)

    kernels = holds = None
    if texture is not None:
        classes = encoder.class_of(attributes, texture.attribute)
        kernels = texture.kernels(rows, classes, None if marginals is None else value_map)
        rows = texture.apply(rows, classes, kernels)
        if marginals is not None:  # its values are final: hold as the training ones
            holds = texture.hold_thresholds(rows, classes, value_map, marginals.features)
            rows = texture.hold(rows, classes, holds)
    quantiles = switches = noise = steady = None
    if marginals is not None:
        quantiles = marginals.quantiles(rows, value_classes)
        switches = marginals.margins(rows, value_classes, quantiles)
        floors = log_floors(encoder)
        steady = marginals.steadiness(rows, value_classes, quantiles, switches, floors)
        noise = marginals.noise(rows, value_classes, quantiles, switches, floors, steady)
    return Calibration(kernels, holds, quantiles, None, centres, switches, noise, steady)


def log_floors(encoder: Any) -> list[float | None]:
    """Each of ``encoder``'s value-mapped features' log floor (None: a linear scale):
    the scale the generator draws it on."""
    return [encoder.feature_encoders[i].log_floor for i in encoder.marginals.features]
