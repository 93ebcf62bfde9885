"""`DGAN`: the public facade. Public methods validate and convert; private ones work.

Example:
    >>> import numpy as np
    >>> from dgan import DGAN, DGANConfig
    >>> features = np.random.default_rng(0).random((64, 8, 2))
    >>> model = DGAN(DGANConfig(max_sequence_len=8, sample_len=2, epochs=1, batch_size=32,
    ...                         cuda=False, seed=0))
    >>> model.train_numpy(features, progress_bar=False)
    >>> attributes, series = model.generate_numpy(5)
    >>> attributes is None, len(series), series[0].shape
    (True, 5, (8, 2))
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from dgan.config import DGANConfig, OutputType
from dgan.encoding import DataEncoder, EncodedData
from dgan.errors import DataError, NotTrainedError, ParameterError
from dgan.networks import Critic, Generator
from dgan.precision import PrecisionPolicy
from dgan.training import Batch, ProgressInfo, Trainer
from dgan.validation import TrainingArrays, validate_training_arrays

logger = logging.getLogger(__name__)

AttributesAndFeatures = tuple[np.ndarray | None, list[np.ndarray]]


class DGAN:
    """A DoppelGANger model: train on time series with attributes, generate new ones.

    Drop-in compatible with gretel-synthetics' ``timeseries_dgan.dgan.DGAN``.

    Attributes:
        config: the model's `DGANConfig` (a private copy of the one passed in).
        history: one dict per trained epoch: mean losses, examples/s, wall time.
    """

    def __init__(self, config: DGANConfig):
        if not isinstance(config, DGANConfig):
            raise ParameterError(
                f"DGAN expects a DGANConfig, got {type(config).__name__}; "
                "build one with DGANConfig(max_sequence_len=..., sample_len=...)."
            )
        self.config = copy.deepcopy(config)  # later changes to the caller's object stay theirs
        self.history: list[dict[str, Any]] = []
        self.encoder: DataEncoder | None = None
        self.generator: Generator | None = None
        self.critic: Critic | None = None
        self.attribute_critic: Critic | None = None
        self._trainer: Trainer | None = None
        use_cuda = self.config.cuda and torch.cuda.is_available()
        self.device = torch.device("cuda" if use_cuda else "cpu")

    @property
    def is_built(self) -> bool:
        """True once the networks exist (after the first training call or a load)."""
        return self.generator is not None

    # ----- training -------------------------------------------------------------------
    def train_numpy(
        self,
        features: np.ndarray | list[np.ndarray],
        feature_types: list[OutputType] | None = None,
        attributes: np.ndarray | None = None,
        attribute_types: list[OutputType] | None = None,
        progress_callback: Callable[[ProgressInfo], None] | None = None,
        *,
        progress_bar: bool | None = None,
    ) -> None:
        """Train on numpy data in its original units.

        Args:
            features: (examples, max_sequence_len, features) array, or a list of
                (time steps, features) arrays (series may be shorter than
                max_sequence_len: lengths are learned too).
            feature_types: one `OutputType` per feature; inferred when None (numbers are
                continuous, strings and bools discrete).
            attributes: (examples, attributes) array of fixed per-series values, or None.
            attribute_types: one `OutputType` per attribute; inferred when None.
            progress_callback: called with a `ProgressInfo` after every batch.
            progress_bar: show a tqdm bar; None shows it when stderr is a terminal.

        Calling it again continues training the same model on the new data (which must
        fit the encoders learned the first time; types are then ignored).

        Example:
            >>> import numpy as np
            >>> from dgan import DGAN, DGANConfig, OutputType
            >>> rng = np.random.default_rng(0)
            >>> feats, labels = rng.random((40, 6, 1)), rng.integers(0, 3, (40, 1))
            >>> model = DGAN(DGANConfig(max_sequence_len=6, sample_len=3, epochs=1, cuda=False))
            >>> model.train_numpy(feats, attributes=labels,
            ...                   attribute_types=[OutputType.DISCRETE], progress_bar=False)
            >>> len(model.history)
            1
        """
        arrays = validate_training_arrays(
            features, feature_types, attributes, attribute_types, self.config.max_sequence_len
        )
        self._train(arrays, progress_callback, progress_bar)

    def _train(
        self,
        arrays: TrainingArrays,
        progress_callback: Callable[[ProgressInfo], None] | None,
        progress_bar: bool | None,
    ) -> None:
        if not self.is_built:
            self.encoder = DataEncoder.fit(
                self.config,
                arrays.features,
                arrays.feature_types,
                arrays.attributes,
                arrays.attribute_types,
            )
            self._build()
        elif (arrays.attributes is None) != (self.encoder.attribute_encoders is None):
            raise DataError(
                "This model was first trained "
                f"{'without' if self.encoder.attribute_encoders is None else 'with'} "
                "attributes; continue training with data of the same shape."
            )
        encoded = self.encoder.transform(arrays.features, arrays.attributes)
        history = self._trainer.fit(
            self._to_device(encoded), self.config.epochs, progress_callback, progress_bar
        )
        offset = len(self.history)
        self.history.extend({**h, "epoch": h["epoch"] + offset} for h in history)

    def _build(self) -> None:
        """Create networks, optimizers and RNGs for the fitted encoder."""
        c, enc = self.config, self.encoder
        with torch.random.fork_rng(devices=[]):  # seeding must not touch the user's RNG
            if c.seed is not None:
                torch.manual_seed(c.seed)
            self.generator = Generator(
                attribute_slices=enc.attribute_slices,
                additional_slices=enc.additional_slices,
                feature_slices=enc.feature_slices,
                max_sequence_len=c.max_sequence_len,
                sample_len=c.sample_len,
                attribute_noise_dim=c.attribute_noise_dim,
                feature_noise_dim=c.feature_noise_dim,
                attribute_num_layers=c.attribute_num_layers,
                attribute_num_units=c.attribute_num_units,
                feature_num_layers=c.feature_num_layers,
                feature_num_units=c.feature_num_units,
                forget_bias=c.forget_bias,
                generation_flag_column=enc.generation_flag_column,
            ).to(self.device)
            attribute_dim = enc.attribute_dim + enc.additional_dim
            critic_dim = attribute_dim + c.max_sequence_len * enc.feature_dim
            self.critic = Critic(
                critic_dim, c.discriminator_num_layers, c.discriminator_num_units
            ).to(self.device)
            self.attribute_critic = None
            if c.use_attribute_discriminator and attribute_dim > 0:
                self.attribute_critic = Critic(
                    attribute_dim, c.discriminator_num_layers, c.discriminator_num_units
                ).to(self.device)
        self._trainer = Trainer(
            c,
            self.generator,
            self.critic,
            self.attribute_critic,
            PrecisionPolicy(self.device),
            self._make_rng(0),
        )
        self._generation_rng = self._make_rng(1)

    def _make_rng(self, stream: int) -> torch.Generator:
        rng = torch.Generator(device=self.device)
        if self.config.seed is None:
            rng.seed()
        else:
            rng.manual_seed(self.config.seed * 2 + stream + 1)
        return rng

    def _to_device(self, encoded: EncodedData) -> Batch:
        def move(a):
            return None if a is None else torch.from_numpy(a).to(self.device)

        return Batch(
            move(encoded.attributes), move(encoded.additional_attributes), move(encoded.features)
        )

    # ----- generation -----------------------------------------------------------------
    def generate_numpy(
        self,
        n: int | None = None,
        attribute_noise: np.ndarray | torch.Tensor | None = None,
        feature_noise: np.ndarray | torch.Tensor | None = None,
    ) -> AttributesAndFeatures:
        """Generate ``n`` synthetic examples in the original units.

        Args:
            n: number of examples; may be omitted when noise is given.
            attribute_noise: (n, attribute_noise_dim) noise, for reproducible output.
            feature_noise: (n, max_sequence_len // sample_len, feature_noise_dim) noise.

        Returns:
            ``(attributes, features)``: an (n, attributes) array, or None for a model
            without attributes, and a list of n (time steps, features) arrays.

        Example:
            >>> import numpy as np
            >>> from dgan import DGAN, DGANConfig
            >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
            >>> model.train_numpy(np.random.default_rng(0).random((16, 4, 1)), progress_bar=False)
            >>> _, series = model.generate_numpy(3)
            >>> [s.shape for s in series]
            [(4, 1), (4, 1), (4, 1)]
        """
        if not self.is_built:
            raise NotTrainedError("The model is not trained yet; call train_numpy() first.")
        attribute_noise, feature_noise = self._check_noise(n, attribute_noise, feature_noise)
        encoded = self._generate_encoded(len(attribute_noise), attribute_noise, feature_noise)
        return self.encoder.inverse(encoded)

    def _check_noise(self, n, attribute_noise, feature_noise) -> tuple[torch.Tensor, ...]:
        c = self.config
        shapes = {
            "attribute_noise": (c.attribute_noise_dim,),
            "feature_noise": (c.max_sequence_len // c.sample_len, c.feature_noise_dim),
        }
        given = {"attribute_noise": attribute_noise, "feature_noise": feature_noise}
        counts = {n} if n is not None else set()
        for name, value in given.items():
            if value is None:
                continue
            value = torch.as_tensor(np.asarray(value, dtype=np.float32))
            if tuple(value.shape[1:]) != shapes[name] or value.ndim != len(shapes[name]) + 1:
                raise ParameterError(
                    f"{name} has shape {tuple(value.shape)}; expected (n, "
                    f"{', '.join(map(str, shapes[name]))})."
                )
            counts.add(value.shape[0])
            given[name] = value.to(self.device)
        if not counts:
            raise ParameterError("Pass n (the number of examples to generate) or noise arrays.")
        if len(counts) > 1:
            raise ParameterError(
                f"n and the noise arrays disagree on the number of examples {sorted(counts)}; "
                "give the same count everywhere (or just n)."
            )
        count = counts.pop()
        if not isinstance(count, (int, np.integer)) or count < 1:
            raise ParameterError(f"n must be a positive integer, got {count!r}.")
        missing = any(v is None for v in given.values())
        fresh = self._noise(count) if missing else (None, None)
        return tuple(
            value if value is not None else default
            for value, default in zip(given.values(), fresh, strict=True)
        )

    def _noise(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.config
        cells = c.max_sequence_len // c.sample_len
        rng = self._generation_rng
        return (
            torch.randn(n, c.attribute_noise_dim, device=self.device, generator=rng),
            torch.randn(n, cells, c.feature_noise_dim, device=self.device, generator=rng),
        )

    def _generate_encoded(
        self, n: int, attribute_noise: torch.Tensor, feature_noise: torch.Tensor
    ) -> EncodedData:
        """Run the generator in eval mode, in batches, and restore its previous mode."""
        was_training = self.generator.training
        self.generator.eval()
        parts: list[list[torch.Tensor | None]] = [[], [], []]
        try:
            with torch.inference_mode():
                for start in range(0, n, self.config.batch_size):
                    stop = start + self.config.batch_size
                    out = self.generator(attribute_noise[start:stop], feature_noise[start:stop])
                    for store, tensor in zip(parts, out, strict=True):
                        store.append(tensor)
        finally:
            self.generator.train(was_training)

        def gather(store):
            if store[0] is None:
                return None
            return torch.cat(store).float().cpu().numpy()

        attrs, additional, feats = (gather(p) for p in parts)
        return EncodedData(attrs, additional, feats, self.encoder.lengths_from_flags(feats))
