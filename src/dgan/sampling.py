"""Generation: the `Sampler` turns noise (and optionally requested attributes) into
decoded examples with a trained generator. It runs the generator in eval mode under the
requested precision, in batches of its own size (`generation_batch_size`, not training's:
without gradients a generator call holds far less, and few large calls are much faster
than many small ones), and puts the generator back as it found it; its noise comes from
`dgan.noise` (RNG stream 1 of the config's seed), drawn for all series at once, so the
batch size never changes what is generated. Where the encoder keeps the training classes'
shares (`dgan.encoding.class_shares`), fresh attribute noise is chosen from a pool of
draws so that each class comes out at its share.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

import numpy as np
import torch

from dgan.config import MAX_SEED, DGANConfig, short_repr
from dgan.config.checks import is_int
from dgan.encoding.class_shares import POOL
from dgan.encoding.encoder import ContinuousEncoder, DataEncoder, EncodedData
from dgan.encoding.matching import Calibration, calibrate, calibrated, match_training
from dgan.encoding.onsets import with_onsets
from dgan.encoding.variables import inverse_columns
from dgan.errors import DataError, DGANError, ParameterError, raise_all
from dgan.networks import Generator
from dgan.noise import draw_noise_part, given_noise, make_rng
from dgan.precision import PrecisionPolicy, resolve_precision
from dgan.series import SeriesRows
from dgan.tabular.arrays import validate_condition_attributes

logger = logging.getLogger(__name__)

AttributesAndFeatures = tuple[np.ndarray | None, list[np.ndarray] | SeriesRows]


@contextlib.contextmanager
def evaluating(module: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """``module`` in eval mode for the block (BatchNorm reads its running statistics),
    then back in the mode it was in."""
    was_training = module.training
    module.eval()
    try:
        yield module
    finally:
        module.train(was_training)


GENERATION_BATCH = 4096
"""The most series one generator call generates by default (`generation_batch_size`)."""
CALIBRATION_SERIES, CALIBRATION_SEED = 1000, 0
"""The generator's own value distribution (`ValueMarginals`) is read from this many series
of noise from this seed: the same for every call until the weights change."""
GENERATION_MEMORY = 256 * 2**20
"""Bytes of activations one generator call may hold by default: long series and wide
networks get smaller batches."""


def generation_batch_size(config: DGANConfig, encoder: DataEncoder) -> int:
    """Series per generator call when none is asked for: `GENERATION_BATCH`, or fewer
    where one series' activations (LSTM gates and states, output and noise at every step,
    in float32) would take more than `GENERATION_MEMORY` in all.

    Example:
        >>> from dgan import DGAN, DGANConfig
        >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
        >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
        >>> generation_batch_size(model.config, model.encoder)
        4096
    """
    steps = config.max_sequence_len // config.sample_len
    lstm = 5 * config.feature_num_units * config.feature_num_layers  # 4 gates and the state
    per_step = lstm + config.sample_len * encoder.feature_dim + config.feature_noise_dim
    attribute_mlps = 2 * config.attribute_num_units * config.attribute_num_layers
    per_series = 4 * (steps * per_step + attribute_mlps)  # bytes of float32
    return int(max(1, min(GENERATION_BATCH, GENERATION_MEMORY // per_series)))


class Sampler:
    """Generate decoded examples from a trained generator.

    Args:
        config: the model's config (noise sizes, network sizes, seed).
        encoder: the fitted `DataEncoder` (decodes the generator's output).
        generator: the trained `Generator`.
        device: where the generator lives.
        attribute_names: attribute names for error messages (e.g. DataFrame columns).

    Example:
        >>> import numpy as np
        >>> from dgan import DGAN, DGANConfig
        >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
        >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
        >>> sampler = Sampler(model.config, model.encoder, model.generator, model.device)
        >>> attributes, features = sampler.generate(2)
        >>> attributes is None, [f.shape for f in features]
        (True, [(4, 1), (4, 1)])
    """

    def __init__(
        self,
        config: DGANConfig,
        encoder: DataEncoder,
        generator: Generator,
        device: torch.device,
        attribute_names: list | None = None,
    ):
        self.config = config
        self.encoder = encoder
        self.generator = generator
        self.device = device
        self.attribute_names = attribute_names
        self.rng = make_rng(config.seed, 1, device)
        # (the weights' versions, `Calibration`): see `calibration`
        self._calibration: tuple[tuple, Calibration] | None = None

    def noise(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Fresh (attribute noise, feature noise) for ``n`` examples from the sampler's RNG."""
        return self.attribute_noise(n), self.feature_noise(n)

    def attribute_noise(self, n: int) -> torch.Tensor:
        """(n, attribute_noise_dim) standard normal noise from the sampler's RNG."""
        return draw_noise_part(self.config, "attribute_noise", n, self.rng, self.device)

    def feature_noise(self, n: int) -> torch.Tensor:
        """(n, max_sequence_len // sample_len, feature_noise_dim) noise from the RNG."""
        return draw_noise_part(self.config, "feature_noise", n, self.rng, self.device)

    def generate(
        self,
        n: int | None = None,
        attribute_noise: np.ndarray | torch.Tensor | None = None,
        feature_noise: np.ndarray | torch.Tensor | None = None,
        attributes: np.ndarray | None = None,
        precision: str | None = None,
        batch_size: int | None = None,
        *,
        as_numbers: bool = False,
        as_rows: bool = False,
    ) -> AttributesAndFeatures:
        """Decoded ``(attributes, features)``; discrete values as their training categories.

        Arguments as in `DGAN.generate_numpy`. Requested continuous attributes come back
        exactly as given, not as their float32 round trip through the encoder. With
        ``as_numbers``, an array whose variables are all numbers (numeric categories
        included) is float64, so that np.isnan, arithmetic and allclose work on it. With
        ``as_rows`` the features come as one `SeriesRows`, not a list of series.
        """
        condition = requested = None
        if attributes is not None:
            requested, condition = self.encode_condition(attributes)
            if n is not None and n != len(condition):
                raise ParameterError(
                    f"n={n} but {len(condition)} attribute rows were given; omit n or give "
                    "one attribute row per example."
                )
            n = len(condition)
        if batch_size is not None and not (is_int(batch_size) and batch_size > 0):
            raise ParameterError(
                f"batch_size must be None (the default, {GENERATION_BATCH} series at most, "
                f"fewer for long series) or a positive integer, got {short_repr(batch_size)}."
            )
        at_shares = self.encoder.class_shares is not None and condition is None
        attribute_noise, feature_noise, filled = self._check_noise(
            n, attribute_noise, feature_noise, at_shares
        )
        if filled is not None:  # the attributes to condition on where a class came out short
            condition = filled
        policy = PrecisionPolicy(self.device, resolve_precision(precision or "fp32", self.device))
        periods = None
        if self._maps_periods():  # the generated periods onto the training ones
            periods = self.calibration().periods
        encoded = self.generate_encoded(
            attribute_noise, feature_noise, condition, policy, batch_size, periods
        )
        generated_attributes, features = self.encoder.inverse_rows(encoded)
        onsets = self.encoder.onsets(encoded)
        del encoded
        features = self._match_training(generated_attributes, features)
        if onsets is not None:  # each series' zero steps before it switches on
            features = with_onsets(features, onsets, self.encoder.max_sequence_len)
        if requested is not None:
            for j, enc in enumerate(self.encoder.attribute_encoders):
                if isinstance(enc, ContinuousEncoder):
                    generated_attributes[:, j] = requested[:, j]
        if as_numbers and generated_attributes is not None and self.encoder.numeric_attributes:
            generated_attributes = generated_attributes.astype(np.float64)
        if as_numbers and self.encoder.numeric_features:
            features = features.with_rows(features.rows.astype(np.float64))
        return generated_attributes, features if as_rows else list(features)

    def _match_training(self, attributes: np.ndarray | None, features: SeriesRows) -> SeriesRows:
        """Decoded ``features`` matched to the training data by the encoder's maps
        (`dgan.encoding.matching.match_training`), from the `calibration` where they read one."""
        calibration = self.calibration() if calibrated(self.encoder) else None
        return match_training(self.encoder, calibration, attributes, features)

    def own_quantiles(self) -> np.ndarray:
        """The generator's value quantiles per class (`ValueMarginals.quantiles`) after
        the texture filter (`calibration`).

        Example:
            >>> from dgan import DGAN, DGANConfig
            >>> config = DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False,
            ...                     match_marginals=True)
            >>> model = DGAN(config)
            >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
            >>> model.sampler.own_quantiles().shape  # features, classes, quantiles
            (1, 1, 1001)
        """
        return self.calibration().quantiles

    def _maps_periods(self) -> bool:
        """Whether the generator's periods are mapped onto the training ones (`PeriodMap`)."""
        return self.encoder.period_map is not None and self.generator.carrier is not None

    def calibration(self) -> Calibration:
        """The texture filters (`SeriesTexture.kernels`), its dead bands where the value
        map follows (`SeriesTexture.hold_thresholds`), the generator's value quantiles
        per class after both (`ValueMarginals.quantiles`), the quantiles of its
        periods' units (`PeriodMap.quantiles`, from the attribute MLPs alone; the sample
        is drawn with the periods mapped) and of its carried waves' centres
        (`CentreMap.quantiles`, read first: `dgan.encoding.matching.calibrate`), the
        margins of the value map's switches (`ValueMarginals.margins`), its steadying and
        noise on each level (`ValueMarginals.steadiness`, `ValueMarginals.noise`), None
        for what the encoder does not have: from `CALIBRATION_SERIES` series of fixed
        noise in fp32, computed again only when the generator's weights (or BatchNorm
        statistics) or the decoding change; the sampler's RNG is not touched.

        Example:
            >>> from dgan import DGAN, DGANConfig
            >>> config = DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False,
            ...                     match_texture=True)
            >>> model = DGAN(config)
            >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
            >>> kernels, holds, quantiles, periods, centres, switches, noise, steady = (
            ...     model.sampler.calibration())
            >>> kernels.shape  # features, classes, taps
            (1, 1, 193)
            >>> holds, quantiles, periods, centres, switches, noise, steady
            (None, None, None, None, None, None, None)
        """
        tensors = [*self.generator.parameters(), *self.generator.buffers()]
        encoder = self.encoder
        maps = (encoder.texture, encoder.marginals, encoder.period_map, encoder.centre_map)
        decoding = (encoder.fill_range, *(id(m) for m in maps))
        key = (id(self.generator), *decoding, *(t._version for t in tensors))
        if self._calibration is None or self._calibration[0] != key:
            rng = torch.Generator(device=self.device).manual_seed(CALIBRATION_SEED)
            noise = [
                draw_noise_part(self.config, part, CALIBRATION_SERIES, rng, self.device)
                for part in ("attribute_noise", "feature_noise")
            ]
            policy = PrecisionPolicy(self.device, resolve_precision("fp32", self.device))
            periods = self._own_periods(noise[0]) if self._maps_periods() else None
            calibration = Calibration(None, None, None)
            if calibrated(self.encoder):
                attributes, rows = self.encoder.inverse_rows(
                    self.generate_encoded(*noise, None, policy, periods=periods)
                )
                calibration = calibrate(self.encoder, attributes, rows)
            self._calibration = (key, calibration._replace(periods=periods))
        return self._calibration[1]

    def _own_periods(self, attribute_noise: torch.Tensor) -> np.ndarray:
        """Each class's quantiles of the units of the periods the generator makes of
        ``attribute_noise`` (`PeriodMap.quantiles`), as generated: the attribute MLPs only."""
        periods = self.encoder.period_map
        with evaluating(self.generator), torch.inference_mode():
            attributes, additional = self.generator.draw_attributes(attribute_noise)
            units = self.generator.carrier.units(additional).cpu().numpy()
        classes = self._classes_of(attributes, periods.attribute)
        return periods.quantiles(units, classes, periods.n_classes)

    def _period_map(self, own: np.ndarray) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        """The generator's ``period_map``: each series' frequency unit mapped by
        `PeriodMap.apply` within its class, read from the batch's encoded attributes,
        from the generator's own quantiles ``own``."""
        periods = self.encoder.period_map

        def period_map(attributes: torch.Tensor | None, units: torch.Tensor) -> torch.Tensor:
            classes = self._classes_of(attributes, periods.attribute)
            if classes is not None:
                classes = torch.from_numpy(classes).to(units.device)
            return periods.apply(units, classes, own)

        return period_map

    def _classes_of(self, encoded, attribute: int | None) -> np.ndarray | None:
        """Each series' class (its category index of discrete attribute ``attribute``;
        None: one class) from its ``encoded`` attributes, (n, A), as the generator makes
        them."""
        if attribute is None:
            return None
        if isinstance(encoded, torch.Tensor):
            encoded = encoded.float().cpu().numpy()
        columns = (self.encoder.attribute_encoders, self.encoder.attribute_slices)
        return self.encoder.class_of(inverse_columns(*columns, encoded, (len(encoded),)), attribute)

    def generate_encoded(
        self,
        attribute_noise: torch.Tensor,
        feature_noise: torch.Tensor,
        condition: torch.Tensor | None,
        policy: PrecisionPolicy,
        batch_size: int | None = None,
        periods: np.ndarray | None = None,
    ) -> EncodedData:
        """Run the generator in eval mode under ``policy``, ``batch_size`` series per call
        (None: `generation_batch_size`), the carrier's periods mapped from the generator's
        own quantiles ``periods`` onto the training ones (`PeriodMap.apply`; None: as
        generated); restore its state."""
        generator = self.generator
        parts: list[list[torch.Tensor | None]] = [[], [], []]
        batch = batch_size or generation_batch_size(self.config, self.encoder)
        period_map = None if periods is None else self._period_map(periods)
        with evaluating(generator):
            training_lstm = policy.configure(generator)
            try:
                with torch.inference_mode(), policy.autocast():
                    for start in range(0, len(attribute_noise), batch):
                        stop = start + batch
                        given = None if condition is None else condition[start:stop]
                        noise = attribute_noise[start:stop], feature_noise[start:stop]
                        drawn = generator(*noise, given, period_map)
                        for store, tensor in zip(parts, drawn, strict=True):
                            store.append(tensor)
            finally:  # back to the training policy's choice
                generator.lstm_in_fp32, generator.lstm_even_input = training_lstm

        def gather(store):
            if store[0] is None:
                return None
            return torch.cat(store).float().cpu().numpy()

        attrs, additional, feats = (gather(p) for p in parts)
        finite = [np.isfinite(a).all() for a in (attrs, additional, feats) if a is not None]
        if not all(finite):
            raise DGANError(
                "The generator produced NaN or infinite values from finite noise: its "
                "weights are broken (e.g. a diverged training without the divergence guard). "
                "Retrain with divergence_guard=True, or load an earlier saved model."
            )
        return EncodedData(attrs, additional, feats, self.encoder.lengths_from_flags(feats))

    def encode_condition(self, attributes) -> tuple[np.ndarray, torch.Tensor]:
        """(validated attribute values, their encoding on the device)."""
        if self.encoder.attribute_encoders is None:
            raise ParameterError(
                "This model was trained without attributes, so it cannot be conditioned on "
                "them; generate without attributes."
            )
        values = validate_condition_attributes(
            attributes, self.encoder.attribute_types, self.attribute_names
        )
        # Slightly outside the training range the model extrapolates (a warning); more
        # than one range width out, its output means nothing (or is NaN): an error.
        problems = []
        for j, enc in enumerate(self.encoder.attribute_encoders):
            if not isinstance(enc, ContinuousEncoder):
                continue
            seen = f"the range seen in training [{enc.min:g}, {enc.max:g}]"
            if enc.outside_range(values[:, j], tolerance=1.0).any():
                problems.append(
                    f"attribute {enc.name!r} is asked for far outside {seen}; ask for "
                    "values within it (the model can only extrapolate there, or give NaN)."
                )
            elif enc.outside_range(values[:, j]).any():
                logger.warning(
                    "Conditioning on attribute %r outside %s: the model extrapolates.",
                    enc.name,
                    seen,
                )
        raise_all(problems, DataError, "the attributes to condition on")
        encoded = self.encoder.transform_attributes(values, len(values))
        return values, torch.from_numpy(encoded).to(self.device)

    def _check_noise(
        self, n, attribute_noise, feature_noise, at_class_shares: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``(attribute noise, feature noise, condition)`` to generate from: the given
        arrays (checked) or fresh draws, and no condition; with ``at_class_shares`` and
        neither given, attribute noise chosen so the classes come out at the encoder's
        `ClassShares`, and where a class is short, the attributes to condition on
        (`_attribute_noise_at_shares`)."""
        arrays = dict(attribute_noise=attribute_noise, feature_noise=feature_noise)
        given, count = given_noise(self.config, n, self.device, **arrays)
        condition = None
        if at_class_shares and all(v is None for v in given.values()):
            attribute_noise, condition = self._attribute_noise_at_shares(count)
            fresh = (attribute_noise, self.feature_noise(count))
        else:
            missing = any(v is None for v in given.values())
            fresh = self.noise(count) if missing else (None, None)
        noise = (
            value if value is not None else default
            for value, default in zip(given.values(), fresh, strict=True)
        )
        return (*noise, condition)

    def _attribute_noise_at_shares(self, n: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(n, attribute_noise_dim) attribute noise whose series come out at the training
        classes' shares: `POOL` x n draws, the attribute generator's class of each, and
        `ClassShares.choose` among them; and, where a class is short in the pool, the
        (n, attributes) encoded attributes to generate from: the attribute generator's of
        each chosen draw, the short class's encoding in the places it takes (else None)."""
        shares, encoder = self.encoder.class_shares, self.encoder
        pool = self.attribute_noise(POOL * n)
        batch = GENERATION_BATCH * POOL
        with evaluating(self.generator), torch.inference_mode():
            parts = [pool[i : i + batch] for i in range(0, len(pool), batch)]
            encoded = torch.cat([self.generator.attribute_net(part) for part in parts])
        encoded = encoded.float().cpu().numpy()
        chosen, given = shares.choose(self._classes_of(encoded, shares.attribute), n)
        noise = pool[torch.from_numpy(chosen).to(pool.device)]
        taken = np.flatnonzero(given >= 0)
        if not len(taken):
            return noise, None
        condition = encoded[chosen]
        place = encoder.attribute_slices[shares.attribute]
        class_encoder = encoder.attribute_encoders[shares.attribute]
        classes = np.array(class_encoder.categories, dtype=object)[given[taken]]
        condition[taken, place.start : place.start + place.width] = class_encoder.transform(classes)
        return noise, torch.from_numpy(condition).to(pool.device)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The sampler's RNG state (saved with the model so generation continues exactly)."""
        return {"rng": self.rng.get_state()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore what `state_dict` returned."""
        self.rng.set_state(state["rng"])

    def reseed(self, seed: int | None) -> None:
        """Restart the sampler's RNG: from ``seed`` (the same seed gives the same output
        from the same model), or from fresh entropy when ``seed`` is None.

        Without a call, generation continues the RNG stream saved with the model, so a
        loaded model generates the same series every time it is loaded; ``dgan
        generate`` calls ``reseed(--seed)`` so that each run without ``--seed`` differs.

        Example:
            >>> import numpy as np
            >>> from dgan import DGAN, DGANConfig
            >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
            >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
            >>> model.sampler.reseed(3)
            >>> first = model.generate_numpy(2)[1]
            >>> model.sampler.reseed(3)
            >>> np.array_equal(first, model.generate_numpy(2)[1])
            True
        """
        if seed is not None and not (is_int(seed) and 0 <= seed <= MAX_SEED):
            raise ParameterError(
                f"seed must be None or an integer from 0 to 2**63 - 2 (what torch's "
                f"generators take), got {short_repr(seed)}."
            )
        self.rng = make_rng(seed, 1, self.device)
