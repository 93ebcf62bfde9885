"""`DGAN`: the public facade. It takes what users pass, has `dgan.prepare` check and
encode it, then hands the work to the trainer (`dgan.train`), the sampler
(`dgan.sampling`) and the model file (`dgan.storage`). It orchestrates; it does not
compute.

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

import contextlib
import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dgan.config import DfStyle, DGANConfig, OutputType
from dgan.encoding.encoder import DataEncoder, EncodedData
from dgan.errors import NotTrainedError, ParameterError
from dgan.networks import Critic, Generator
from dgan.planning import TrainingPlan, make_plan
from dgan.prepare import ArraySource, FrameSource, Source, prepare, source_of
from dgan.sampling import AttributesAndFeatures, Sampler
from dgan.storage.checkpoint import Restored, ResumePoint, resume_point
from dgan.storage.checkpointer import Checkpointer
from dgan.storage.model_file import ModelFile, ModelParts, inconsistent_file_errors, loading_device
from dgan.tabular.columns import Columns
from dgan.tabular.frames import FrameLayout, attributes_frame_to_array
from dgan.tabular.to_frame import generated_frame
from dgan.train.batch import Batch
from dgan.train.distributed import training_device
from dgan.train.loop import Budget, ProgressInfo, continued_history, fit
from dgan.train.trainer import Trainer


class DGAN:
    """A DoppelGANger model: train on time series with attributes, generate new ones.

    Drop-in compatible with gretel-synthetics' ``timeseries_dgan.dgan.DGAN``.

    Attributes:
        config: the model's `DGANConfig` (a private copy of the one passed in; once
            training has seen the data, with ``large_data`` decided and the settings it
            implies: see `DGANConfig.resolved_for`).
        history: one plain dict per trained epoch (`dgan.records.EpochRecord.as_dict`):
            mean losses, examples/s, wall time, precision, loss scales, skipped steps,
            guard events, peak memory. `EpochRecord.from_dict` reads an entry back typed.
        encoder: the fitted `DataEncoder` (None before training).
        data_frame_layout: the training DataFrame's layout (None for numpy training).
        trainer: the `Trainer` (networks, optimizers, precision; None before training).
        sampler: the `Sampler` that generates (None before training).
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
        self.trainer: Trainer | None = None
        self.sampler: Sampler | None = None
        self._run_id: str | None = None  # of its training run, in its checkpoints
        self.device = training_device(self.config.cuda)  # under torchrun: GPU LOCAL_RANK

    @property
    def is_built(self) -> bool:
        """True once the networks exist (after the first training call or a load)."""
        return self.trainer is not None

    @property
    def generator(self) -> Generator | None:
        return None if self.trainer is None else self.trainer.generator

    @property
    def critic(self) -> Critic | None:
        return None if self.trainer is None else self.trainer.critic

    @property
    def attribute_critic(self) -> Critic | None:
        return None if self.trainer is None else self.trainer.attribute_critic

    def _build(
        self,
        encoder: DataEncoder,
        layout: FrameLayout | None = None,
        device: torch.device | None = None,
    ) -> None:
        """Networks, optimizers and RNG streams for a fitted encoder, on training's first
        call (the networks counted by `dgan.prepare`), a resume or `load`."""
        if self.is_built:
            raise ParameterError("This model is built already; create a new DGAN to rebuild.")
        if device is not None:
            self.device = device
        self.encoder, self.data_frame_layout = encoder, layout
        self.trainer = Trainer.create(self.config, encoder, self.device)
        names = None if layout is None else layout.attribute_columns
        generator = self.trainer.sampling_generator
        self.sampler = Sampler(self.config, encoder, generator, self.device, names)

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
        resume_from: str | os.PathLike | None = None,
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
            resume_from: a checkpoint folder (``config.checkpoint_dir``) or file: continue
                the interrupted run from its newest valid checkpoint (see dgan.storage.checkpoint;
                same data and config, only epochs and checkpoint settings may change).
                A folder without checkpoints starts training from the beginning.

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
        source = ArraySource(features, feature_types, attributes, attribute_types)
        self._train(source, progress_callback, progress_bar, resume_from)

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
        resume_from: str | os.PathLike | None = None,
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
            progress_callback, progress_bar, resume_from: as in `train_numpy`.

        Example:
            >>> import pandas as pd
            >>> from dgan import DGAN, DGANConfig
            >>> df = pd.DataFrame({"kind": ["a", "b"] * 10, "t0": range(20), "t1": range(20)})
            >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, epochs=1, cuda=False))
            >>> model.train_dataframe(df, attribute_columns=["kind"], progress_bar=False)
            >>> list(model.generate_dataframe(3).columns)
            ['kind', 't0', 't1']
        """
        columns = Columns(
            attribute_columns=attribute_columns,
            feature_columns=feature_columns,
            example_id_column=example_id_column,
            time_column=time_column,
            discrete_columns=discrete_columns,
            df_style=df_style,
        )
        self._train(FrameSource(df, columns), progress_callback, progress_bar, resume_from)

    def plan(
        self,
        data: pd.DataFrame | np.ndarray | list[np.ndarray],
        *,
        warm_up_steps: int = 3,
        **how: Any,
    ) -> TrainingPlan:
        """What training on ``data`` would do, without training: a `dgan.planning.TrainingPlan`.

        ``data`` and ``how`` are what `train_dataframe` takes (a DataFrame and its column
        arguments), what `train_numpy` takes (features, and ``feature_types``, ...), or a
        `dgan.prepare` source (whose check it reuses). The plan lists each column's role and type,
        examples and lengths, batch size, steps per epoch, epochs, the precision in effect
        and why, threads, warnings with their fix, and a time estimate from
        ``warm_up_steps`` steps of a throwaway copy (0: no estimate); this model is not
        changed. Under torchrun, every process calls it (its warm-up trains with all).

        Example:
            >>> import pandas as pd
            >>> from dgan import DGAN, DGANConfig
            >>> df = pd.DataFrame({"kind": ["a", "b"] * 10, "t0": range(20), "t1": range(20)})
            >>> model = DGAN(DGANConfig(max_sequence_len=2, sample_len=1, cuda=False))
            >>> plan = model.plan(df, attribute_columns=["kind"], warm_up_steps=1)
            >>> plan.n_examples, plan.steps_per_epoch, [c.role for c in plan.columns]
            (20, 2, ['attribute', 'feature'])
            >>> model.is_built
            False
        """
        source = source_of(data, **how)
        return make_plan(self.config, source, warm_up_steps=warm_up_steps, device=self.device)

    def preprocess(
        self,
        features: np.ndarray | list[np.ndarray],
        feature_types: list[OutputType] | None = None,
        attributes: np.ndarray | None = None,
        attribute_types: list[OutputType] | None = None,
    ) -> EncodedData:
        """Validate, repair and encode numpy data as training would; build the model first
        if it is not built (fitting the encoders to this data).

        With `train_encoded`, this splits `train_numpy` in two (like SDV's ``preprocess`` /
        ``fit_processed_data``): encode once, then train, time or inspect on the encoded
        arrays. Arguments as in `train_numpy`.

        Example:
            >>> import numpy as np
            >>> from dgan import DGAN, DGANConfig
            >>> model = DGAN(DGANConfig(max_sequence_len=4, sample_len=2, epochs=1, cuda=False))
            >>> encoded = model.preprocess(np.random.default_rng(0).random((8, 4, 1)))
            >>> encoded.features.shape
            (8, 4, 1)
            >>> model.train_encoded(encoded, progress_bar=False)
            >>> len(model.history)
            1
        """
        return self._prepare(ArraySource(features, feature_types, attributes, attribute_types))

    def train_encoded(
        self,
        data: EncodedData,
        progress_callback: Callable[[ProgressInfo], None] | None = None,
        *,
        progress_bar: bool | None = None,
        resume_from: str | os.PathLike | ResumePoint | None = None,
    ) -> None:
        """Train on data encoded by `preprocess` (see there) for the config's budget.

        The data goes to the training device once; batches are drawn there. With
        ``config.checkpoint_dir`` it writes checkpoints; ``resume_from`` as in `train_numpy`.
        Under torchrun, all processes train this one model (see dgan.train.distributed).
        """
        self._require_built()
        trainer = self.trainer
        collective = trainer.join_processes(data, [self.sampler.rng])  # None in one process
        world = 1 if collective is None else collective.world_size
        budget = Budget.of(self.config, len(data.features))
        restored = Restored(0, None, len(self.history), self.history)  # a new training call
        point = None if resume_from is None else resume_point(resume_from)
        if point is not None:
            if self.history or trainer.steps_done:
                raise ParameterError(
                    "resume_from restores a training run into a new model, but this model "
                    "has trained already; create a new DGAN with the same config to resume."
                )
            restored = point.resume(self._parts(), data, world, budget)
        self.history, offset, cut = restored.history, restored.history_offset, restored.cut
        writer = None
        if self.config.checkpoint_dir is not None:  # the folder is this run's from here on
            main = collective is None or collective.is_main
            writer = Checkpointer(
                self._parts(), data, self.history, offset, budget, world, main, self._run_id,
                point, cut,
            )  # fmt: skip
        with writer or contextlib.nullcontext():
            self._run_id = self._run_id if writer is None else writer.run_id
            records = fit(
                trainer,
                Batch.from_encoded(data, self.device),
                budget,
                progress_callback,
                progress_bar,
                start_epoch=restored.start_epoch,
                cut=cut,
                seconds_used=sum(h.get("wall_time_s") or 0.0 for h in self.history[offset:]),
                on_epoch_end=None if writer is None else writer.on_epoch_end,
            )
        trained = [r.renumbered(offset).as_dict() for r in records]
        self.history[:] = continued_history(self.history, trained, cut)

    def _train(
        self,
        source: Source,
        progress_callback: Callable[[ProgressInfo], None] | None,
        progress_bar: bool | None,
        resume_from: str | os.PathLike | None,
    ) -> None:
        """Resume point (if any), then prepare the data, then train on it."""
        point = None if resume_from is None else resume_point(resume_from)
        if point is not None and not self.is_built:
            # Built around the checkpoint's encoders, so the data is encoded exactly as in
            # the interrupted run (whose config decided large_data from its data).
            point.check_config(self.config)
            with inconsistent_file_errors(point.path):
                self.config = point.settled_config(self.config)
                self._build(point.encoder(), point.layout())
        encoded = self._prepare(source, None if point is None else point.path)
        self.train_encoded(encoded, progress_callback, progress_bar=progress_bar, resume_from=point)

    def _prepare(self, source: Source, resuming: Path | None = None) -> EncodedData:
        """Check and encode ``source`` (`dgan.prepare`); the first call builds the model."""
        layout = self.data_frame_layout
        prepared = prepare(source, self.config, self.encoder, layout, resuming, self.device)
        if not self.is_built:
            self.config = prepared.config
            self._build(prepared.encoder, prepared.layout)
        elif self.data_frame_layout is None:  # first trained with train_numpy
            self.data_frame_layout = prepared.layout
        return prepared.encoded

    def _parts(self) -> ModelParts:
        return ModelParts(
            self.config, self.encoder, self.data_frame_layout, self.trainer, self.sampler.rng
        )

    # ----- generation -----------------------------------------------------------------
    def generate_numpy(
        self,
        n: int | None = None,
        attribute_noise: np.ndarray | torch.Tensor | None = None,
        feature_noise: np.ndarray | torch.Tensor | None = None,
        attributes: np.ndarray | None = None,
        precision: str | None = None,
        batch_size: int | None = None,
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
            batch_size: series per generator call (speed and memory, never the values);
                None: up to 4096, fewer for long series (`dgan.sampling.generation_batch_size`).

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
        self._require_built()
        return self.sampler.generate(
            n, attribute_noise, feature_noise, attributes, precision, batch_size, as_numbers=True
        )

    def generate_dataframe(
        self,
        n: int | None = None,
        attribute_noise: np.ndarray | torch.Tensor | None = None,
        feature_noise: np.ndarray | torch.Tensor | None = None,
        attributes: pd.DataFrame | None = None,
        precision: str | None = None,
        batch_size: int | None = None,
    ) -> pd.DataFrame:
        """Generate a DataFrame with the training frame's columns, order and dtypes.

        Args:
            n, attribute_noise, feature_noise, precision, batch_size: as in `generate_numpy`.
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
        generated_attributes, features = self.sampler.generate(
            n, attribute_noise, feature_noise, given, precision, batch_size, as_rows=True
        )
        return generated_frame(generated_attributes, features, self.data_frame_layout)

    def attribute_noise_func(self, n: int) -> torch.Tensor:
        """(n, attribute_noise_dim) noise from the generation RNG (gretel's name): pass it,
        with `feature_noise_func`'s, to `generate_numpy` to reproduce output."""
        self._require_built()
        return self.sampler.attribute_noise(n)

    def feature_noise_func(self, n: int) -> torch.Tensor:
        """(n, max_sequence_len // sample_len, feature_noise_dim) noise (gretel's name)."""
        self._require_built()
        return self.sampler.feature_noise(n)

    def _require_built(self) -> None:
        if not self.is_built:
            raise NotTrainedError(  # gretel's words first, for code that matches them
                "Must build DGAN model prior to generating samples. The model is not trained "
                "yet; call train_numpy() or train_dataframe() first."
            )

    # ----- save / load ----------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Save the trained model (and its training state) to one file; never a pickle.

        Weights, optimizer moments and RNG states go in safetensors; config, encoders,
        DataFrame layout and history as JSON. Continue training or generate after `load`.
        After distributed training only rank 0 writes: call it on every process or rank 0.

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
        collective = self.trainer.collective
        if collective is not None and not collective.is_main:
            return Path(path)  # distributed: every process holds this model; rank 0 writes
        return self._parts().save(path, self.history)

    @classmethod
    def load(cls, path: str | os.PathLike, map_location: str | torch.device | None = None) -> DGAN:
        """Load a model written by `save`; ``map_location`` picks the device (e.g. "cpu").

        Without ``map_location`` the model goes to CUDA when its config asks for it and a
        GPU is present, else to the CPU, so a model trained on a GPU loads anywhere.
        Files that are truncated, corrupt, pickles or from a newer dgan raise
        `SerializationError` without executing anything.
        """
        device = None if map_location is None else loading_device(map_location)
        file = ModelFile.read(path)
        with inconsistent_file_errors(path):
            model = cls(file.config())
            model._build(file.encoder(), file.layout(), device=device)
            file.load_into(model.trainer, model.sampler.rng)
            model.history = file.history
        return model
