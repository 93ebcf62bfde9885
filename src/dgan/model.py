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
import dataclasses
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dgan.config import DfStyle, DGANConfig, OutputType
from dgan.encoding import ContinuousEncoder, DataEncoder, EncodedData
from dgan.errors import DataError, NotTrainedError, ParameterError, SerializationError
from dgan.frames import (
    FrameLayout,
    arrays_to_dataframe,
    attributes_frame_to_array,
    dataframe_to_arrays,
)
from dgan.missing import repair_missing_values
from dgan.networks import Critic, Generator
from dgan.precision import Precision, PrecisionPolicy, resolve_precision
from dgan.serialization import (
    flatten_state_dict,
    join_optimizer_state,
    json_safe,
    read_model_file,
    split_optimizer_state,
    unflatten_state_dict,
    write_model_file,
)
from dgan.training import Batch, ProgressInfo, Trainer
from dgan.validation import (
    TrainingArrays,
    validate_condition_attributes,
    validate_training_arrays,
)

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
        self.data_frame_layout: FrameLayout | None = None
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

    def train_dataframe(
        self,
        df: pd.DataFrame,
        attribute_columns: list[str] | None = None,
        feature_columns: list[str] | None = None,
        example_id_column: str | None = None,
        time_column: str | None = None,
        discrete_columns: list[str] | None = None,
        df_style: DfStyle = DfStyle.WIDE,
        progress_callback: Callable[[ProgressInfo], None] | None = None,
        *,
        progress_bar: bool | None = None,
    ) -> None:
        """Train on a DataFrame in WIDE (one row per example) or LONG (one row per step) form.

        Args:
            df: the training data; it is not modified.
            attribute_columns: columns of fixed per-example values (None: no attributes).
            feature_columns: time-series columns; None takes every other column. In WIDE
                style each feature column is one time step of a single feature.
            example_id_column: LONG style: the column that tells examples apart. Without
                it, rows are cut into consecutive chunks of max_sequence_len (rows
                left after the last whole chunk are left out).
            time_column: LONG style: the column that orders each example's rows
                (numbers or datetimes); generated frames get the training time grid.
            discrete_columns: numeric columns to treat as discrete (strings, bools and
                categoricals are discrete anyway).
            df_style: `DfStyle.WIDE` or `DfStyle.LONG` (or "wide"/"long").
            progress_callback, progress_bar: as in `train_numpy`.

        Example:
            >>> import pandas as pd
            >>> from dgan import DGAN, DGANConfig
            >>> df = pd.DataFrame({"kind": ["a", "b"] * 10, "t0": range(20), "t1": range(20)})
            >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, epochs=1, cuda=False))
            >>> model.train_dataframe(df, attribute_columns=["kind"], progress_bar=False)
            >>> list(model.generate_dataframe(3).columns)
            ['kind', 't0', 't1']
        """
        converted = dataframe_to_arrays(
            df,
            attribute_columns=attribute_columns,
            feature_columns=feature_columns,
            example_id_column=example_id_column,
            time_column=time_column,
            discrete_columns=discrete_columns,
            df_style=df_style,
            max_sequence_len=self.config.max_sequence_len,
        )
        layout = converted.layout
        trained_layout = self.data_frame_layout
        if trained_layout is not None and layout.column_order != trained_layout.column_order:
            raise DataError(
                f"This model was trained on columns {self.data_frame_layout.column_order}; "
                f"continue training with the same columns, not {layout.column_order}."
            )
        arrays = validate_training_arrays(
            converted.features,
            converted.feature_types,
            converted.attributes,
            converted.attribute_types if converted.attributes is not None else None,
            self.config.max_sequence_len,
            feature_names=layout.feature_names,
            attribute_names=layout.attribute_columns or None,
            example_names=converted.example_labels,
        )
        self._train(arrays, progress_callback, progress_bar)
        if self.data_frame_layout is None:
            self.data_frame_layout = layout

    def _train(
        self,
        arrays: TrainingArrays,
        progress_callback: Callable[[ProgressInfo], None] | None,
        progress_bar: bool | None,
    ) -> None:
        arrays = self._repair_missing(arrays)
        if not self.is_built:
            self.encoder = DataEncoder.fit(
                self.config,
                arrays.features,
                arrays.feature_types,
                arrays.attributes,
                arrays.attribute_types,
                feature_names=arrays.feature_names,
                attribute_names=arrays.attribute_names,
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

    def _repair_missing(self, arrays: TrainingArrays) -> TrainingArrays:
        """Interpolate short NaN gaps in continuous features; drop hopeless examples."""
        continuous = [i for i, t in enumerate(arrays.feature_types) if t == OutputType.CONTINUOUS]
        if not continuous:
            return arrays
        c = self.config
        features, kept, _ = repair_missing_values(
            arrays.features,
            continuous,
            max_nan_fraction=c.max_nan_fraction,
            max_consecutive_nans=c.max_consecutive_nans,
            max_dropped_fraction=c.max_dropped_fraction,
            feature_names=arrays.feature_names,
            example_names=arrays.example_names,
        )
        attributes = None if arrays.attributes is None else arrays.attributes[kept]
        names = arrays.example_names
        names = None if names is None else [name for name, k in zip(names, kept, strict=True) if k]
        return dataclasses.replace(
            arrays, features=features, attributes=attributes, example_names=names
        )

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
            PrecisionPolicy.from_config(c, self.device),
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
        attributes: np.ndarray | None = None,
        precision: str | None = None,
    ) -> AttributesAndFeatures:
        """Generate ``n`` synthetic examples in the original units.

        Args:
            n: number of examples; may be omitted when noise or attributes are given.
            attribute_noise: (n, attribute_noise_dim) noise, for reproducible output.
            feature_noise: (n, max_sequence_len // sample_len, feature_noise_dim) noise.
            attributes: (n, attributes) values to condition on, in original units: the
                series (and their ranges) are generated for these attributes.
            precision: run the generator under "fp16", "bf16", "auto" or "fp32"
                autocast (default: fp32). Output is always float data in original units.

        Returns:
            ``(attributes, features)``: an (n, attributes) array, or None for a model
            without attributes, and a list of n (time steps, features) arrays. As in
            gretel, an array is float64 when all its variables are numbers (numeric
            categories included; a missing category is NaN), else it is an object array
            holding the categories as they were in training.

        Example:
            >>> import numpy as np
            >>> from dgan import DGAN, DGANConfig
            >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
            >>> model.train_numpy(np.random.default_rng(0).random((16, 4, 1)), progress_bar=False)
            >>> _, series = model.generate_numpy(3)
            >>> [s.shape for s in series]
            [(4, 1), (4, 1), (4, 1)]
        """
        generated_attributes, features = self._generate(
            n, attribute_noise, feature_noise, attributes, precision
        )
        # Numbers as numbers, so that np.isnan, arithmetic and allclose work on them.
        if generated_attributes is not None and self.encoder.numeric_attributes:
            generated_attributes = generated_attributes.astype(np.float64)
        if self.encoder.numeric_features:
            features = [f.astype(np.float64) for f in features]
        return generated_attributes, features

    def _generate(
        self, n, attribute_noise, feature_noise, attributes, precision=None
    ) -> AttributesAndFeatures:
        """`generate_numpy` with discrete values as their training categories (objects)."""
        self._require_built()
        condition = requested = None
        if attributes is not None:
            requested, condition = self._encode_condition(attributes)
            if n is not None and n != len(condition):
                raise ParameterError(
                    f"n={n} but {len(condition)} attribute rows were given; omit n or give "
                    "one attribute row per example."
                )
            n = len(condition)
        attribute_noise, feature_noise = self._check_noise(n, attribute_noise, feature_noise)
        policy = PrecisionPolicy(self.device, resolve_precision(precision or "fp32", self.device))
        encoded = self._generate_encoded(
            len(attribute_noise), attribute_noise, feature_noise, condition, policy
        )
        generated_attributes, features = self.encoder.inverse(encoded)
        if requested is not None:
            # Give back the requested continuous values themselves, not their float32
            # round trip through the encoder (discrete ones decode to their category).
            for j, enc in enumerate(self.encoder.attribute_encoders):
                if isinstance(enc, ContinuousEncoder):
                    generated_attributes[:, j] = requested[:, j]
        return generated_attributes, features

    def _require_built(self) -> None:
        if not self.is_built:
            raise NotTrainedError(
                "The model is not trained yet; call train_numpy() or train_dataframe() first."
            )

    def _encode_condition(self, attributes) -> tuple[np.ndarray, torch.Tensor]:
        """(validated attribute values, their encoding on the device)."""
        if self.encoder.attribute_encoders is None:
            raise ParameterError(
                "This model was trained without attributes, so it cannot be conditioned on "
                "them; generate without attributes."
            )
        types = [
            OutputType.CONTINUOUS if isinstance(e, ContinuousEncoder) else OutputType.DISCRETE
            for e in self.encoder.attribute_encoders
        ]
        names = self.data_frame_layout.attribute_columns if self.data_frame_layout else None
        values = validate_condition_attributes(attributes, types, names)
        encoded = self.encoder.transform_attributes(values, len(values))
        return values, torch.from_numpy(encoded).to(self.device)

    def generate_dataframe(
        self,
        n: int | None = None,
        attribute_noise: np.ndarray | torch.Tensor | None = None,
        feature_noise: np.ndarray | torch.Tensor | None = None,
        attributes: pd.DataFrame | None = None,
        precision: str | None = None,
    ) -> pd.DataFrame:
        """Generate a DataFrame with the training frame's columns, order and dtypes.

        Args:
            n, attribute_noise, feature_noise, precision: as in `generate_numpy`.
            attributes: a frame with the attribute columns (one row per example, or a
                LONG frame with an example id column) to condition generation on.

        Example:
            >>> import pandas as pd
            >>> from dgan import DGAN, DGANConfig
            >>> df = pd.DataFrame({"kind": ["a", "b"] * 10, "t0": range(20), "t1": range(20)})
            >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, epochs=1, cuda=False))
            >>> model.train_dataframe(df, attribute_columns=["kind"], progress_bar=False)
            >>> wanted = pd.DataFrame({"kind": ["b", "b"]})
            >>> model.generate_dataframe(attributes=wanted)["kind"].tolist()
            ['b', 'b']
        """
        self._require_built()
        if self.data_frame_layout is None:
            raise ParameterError(
                "This model was trained with train_numpy(), so it knows no DataFrame layout; "
                "use generate_numpy(), or train with train_dataframe()."
            )
        given = None
        if attributes is not None:
            given = attributes_frame_to_array(attributes, self.data_frame_layout)
        generated_attributes, features = self._generate(
            n, attribute_noise, feature_noise, given, precision
        )
        return arrays_to_dataframe(generated_attributes, features, self.data_frame_layout)

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
            if isinstance(value, torch.Tensor):  # maybe on a GPU, where numpy cannot go
                value = value.detach().float()
            else:
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
        return self.attribute_noise_func(n), self.feature_noise_func(n)

    def attribute_noise_func(self, n: int) -> torch.Tensor:
        """(n, attribute_noise_dim) noise from the model's generation RNG (gretel's name).

        Pass it, with `feature_noise_func`'s, to `generate_numpy` to reproduce output.
        """
        self._require_built()
        shape = (n, self.config.attribute_noise_dim)
        return torch.randn(shape, device=self.device, generator=self._generation_rng)

    def feature_noise_func(self, n: int) -> torch.Tensor:
        """(n, max_sequence_len // sample_len, feature_noise_dim) noise (gretel's name)."""
        self._require_built()
        c = self.config
        shape = (n, c.max_sequence_len // c.sample_len, c.feature_noise_dim)
        return torch.randn(shape, device=self.device, generator=self._generation_rng)

    def _generate_encoded(
        self,
        n: int,
        attribute_noise: torch.Tensor,
        feature_noise: torch.Tensor,
        condition: torch.Tensor | None,
        policy: PrecisionPolicy,
    ) -> EncodedData:
        """Run the generator in eval mode under ``policy``, in batches; restore its mode."""
        was_training = self.generator.training
        self.generator.eval()
        policy.configure(self.generator)
        parts: list[list[torch.Tensor | None]] = [[], [], []]
        try:
            with torch.inference_mode(), policy.autocast():
                for start in range(0, n, self.config.batch_size):
                    stop = start + self.config.batch_size
                    given = None if condition is None else condition[start:stop]
                    out = self.generator(
                        attribute_noise[start:stop], feature_noise[start:stop], given
                    )
                    for store, tensor in zip(parts, out, strict=True):
                        store.append(tensor)
        finally:
            self.generator.train(was_training)
            self._trainer.policy.configure(self.generator)  # back to the training policy

        def gather(store):
            if store[0] is None:
                return None
            return torch.cat(store).float().cpu().numpy()

        attrs, additional, feats = (gather(p) for p in parts)
        return EncodedData(attrs, additional, feats, self.encoder.lengths_from_flags(feats))

    # ----- save / load ----------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Save the trained model (and its training state) to one file; never a pickle.

        Weights, optimizer moments and RNG states go in safetensors; config, encoders,
        DataFrame layout and history as JSON. Continue training or generate after `load`.

        Example:
            >>> import tempfile, numpy as np
            >>> from dgan import DGAN, DGANConfig
            >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
            >>> model.train_numpy(np.random.default_rng(0).random((8, 4, 1)), progress_bar=False)
            >>> path = model.save(tempfile.mkdtemp() + "/model.dgan")
            >>> DGAN.load(path).generate_numpy(2)[1][0].shape
            (4, 1)
        """
        self._require_built()
        import dgan  # for the version, which __init__ defines

        tensors: dict[str, torch.Tensor] = {}
        optimizers = {}
        for name, module, opt in self._trainable():
            tensors |= flatten_state_dict(name, module.state_dict())
            opt_tensors, optimizers[name] = split_optimizer_state(
                f"optimizer.{name}", opt.state_dict()
            )
            tensors |= opt_tensors
        tensors[f"rng.{self.device.type}.train"] = self._trainer.rng.get_state()
        tensors[f"rng.{self.device.type}.generate"] = self._generation_rng.get_state()
        state = {
            "dgan_version": dgan.__version__,
            "torch_version": torch.__version__,
            "config": self.config.to_json_dict(),
            "encoder": self.encoder.to_json(),
            "data_frame_layout": None
            if self.data_frame_layout is None
            else self.data_frame_layout.to_json_dict(),
            "history": json_safe(self.history),
            "optimizers": optimizers,
            "steps_done": self._trainer.steps_done,
            "precision": {
                "in_effect": self._trainer.policy.name,
                "critic_scaler": self._trainer.policy.critic_scaler.state_dict(),
                "generator_scaler": self._trainer.policy.generator_scaler.state_dict(),
            },
        }
        return write_model_file(path, tensors, state)

    @classmethod
    def load(cls, path: str | os.PathLike, map_location: str | torch.device | None = None) -> DGAN:
        """Load a model written by `save`; ``map_location`` picks the device (e.g. "cpu").

        Without ``map_location`` the model goes to CUDA when its config asks for it and a
        GPU is present, else to the CPU, so a model trained on a GPU loads anywhere.
        Files that are truncated, corrupt, pickles or from a newer dgan raise
        `SerializationError` without executing anything.
        """
        device = None if map_location is None else _loading_device(map_location)
        tensors, state = read_model_file(path)
        try:
            model = cls(DGANConfig.from_json_dict(state["config"]))
            if device is not None:
                model.device = device
            model.encoder = DataEncoder.from_json(state["encoder"])
            if state["data_frame_layout"] is not None:
                model.data_frame_layout = FrameLayout.from_json_dict(state["data_frame_layout"])
            model._build()
            for name, module, opt in model._trainable():
                module.load_state_dict(unflatten_state_dict(name, tensors))
                opt_state = state["optimizers"][name]
                opt.load_state_dict(
                    join_optimizer_state(f"optimizer.{name}", tensors, opt_state, opt.state_dict())
                )
            for stream, rng in (("train", model._trainer.rng), ("generate", model._generation_rng)):
                saved = tensors.get(f"rng.{model.device.type}.{stream}")
                if saved is not None:  # RNG states do not carry across device types
                    rng.set_state(saved)
            model._trainer.steps_done = state["steps_done"]
            model._restore_precision(state["precision"])
            model.history = state["history"]
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
            detail = " ".join(str(e).split())  # torch's messages span several lines
            raise SerializationError(
                f"{str(path)!r} holds an incomplete or inconsistent dgan model ({detail}); "
                "save it again with DGAN.save()."
            ) from e
        return model

    def _restore_precision(self, saved: dict[str, Any]) -> None:
        """Continue in the precision training had reached (a guard may have lowered it)."""
        trainer = self._trainer
        in_effect = Precision(saved["in_effect"])
        if in_effect != trainer.policy.precision:
            try:
                resolve_precision(in_effect, self.device)  # can this device run it?
                trainer.set_policy(trainer.policy.with_precision(in_effect))
            except ParameterError:
                logger.warning(
                    "The model was training in %s, which %s cannot run; continuing in %s.",
                    in_effect.value,
                    self.device,
                    trainer.policy.name,
                )
                return
        if trainer.policy.critic_scaler.is_enabled() and saved["critic_scaler"]:
            trainer.policy.critic_scaler.load_state_dict(saved["critic_scaler"])
            trainer.policy.generator_scaler.load_state_dict(saved["generator_scaler"])

    def _trainable(self) -> list[tuple[str, torch.nn.Module, torch.optim.Optimizer]]:
        """(name, network, its optimizer) for every trained network."""
        optimizers = self._trainer.optimizers()
        return [(name, m, optimizers[name]) for name, m in self._trainer.modules().items()]


def _loading_device(map_location: str | torch.device) -> torch.device:
    """``map_location`` as a device this machine has; ParameterError otherwise."""
    try:
        device = torch.device(map_location)
    except (RuntimeError, TypeError) as e:
        raise ParameterError(
            f"map_location={map_location!r} is not a device ({e}); use e.g. 'cpu' or 'cuda'."
        ) from e
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ParameterError(
            f"map_location={map_location!r} but this machine has no usable CUDA device; "
            "load with map_location='cpu' (or leave it out: the CPU is then used)."
        )
    return device
