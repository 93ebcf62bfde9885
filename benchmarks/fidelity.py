"""Synthetic-data quality benchmark: dgan (and gretel-synthetics' DGAN) on public datasets.

For each dataset, system and seed, trains a fresh model on the same data with the same
config and epochs, generates as many series as the real data has, and scores them with

* the TimeGAN protocol (`dgan.metrics.protocol`): discriminative score (mean of
  ``--disc-runs`` post-hoc GRU classifiers) and predictive score (train on synthetic, test
  on real), with the train-on-real reference beside it; both on windows min-max scaled
  with the real data's ranges;
* dgan's own `dgan.metrics.evaluate` headline scores (unless ``--no-own-metrics``).

Writes mean ± sd over seeds of every metric, the training time, the config, machine info
and the git commit to ``benchmarks/results/fidelity-<tag>-<date>.json`` (rewritten after
every run, so an interrupted benchmark keeps what it finished). Datasets are described in
``benchmarks/fidelity_data.py``. Quality numbers, not speed: the training time is what one
run took on this machine, recorded so an epoch budget can be chosen.

The base config is gretel-synthetics' default DGANConfig with the dataset's
``max_sequence_len``, ``--sample-len``, ``--epochs`` and ``cuda=False``. Without
``--epochs`` each system trains for its own default length: gretel's 400 epochs, and for
dgan the settings and budget of steps its default ``large_data="auto"`` picks from the
number of series (``large_data=False`` runs dgan at gretel's settings); ``key=value``
arguments override any field for both systems (a field gretel lacks, e.g. ``precision``,
is applied to dgan only and listed under ``not_applied_to_gretel``), so levers can be
screened without code changes::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fidelity.py \\
        --datasets stocks,sines --seeds 3 --epochs 100 --systems dgan,gretel
    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fidelity.py --datasets stocks \\
        --seeds 2 --epochs 100 --tag no-example-scaling apply_example_scaling=False

To include gretel, run with the scratch environment's python (built as in the docstring
of benchmarks/speed.py); dgan is then imported from this checkout's ``src/``. Both run in
one process on one torch thread.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import enum
import importlib.metadata
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
if (REPO / "src" / "dgan").is_dir():
    sys.path.insert(0, str(REPO / "src"))  # measure this checkout, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dgan.metrics import (  # noqa: E402
    SeriesData,
    attribute_feature_relation,
    evaluate,
    marginal_distances,
    memorisation,
)
from dgan.metrics.protocol import (  # noqa: E402
    timegan_discriminative_runs,
    timegan_predictive_score,
)
from fidelity_data import LOADERS, Dataset, load, parse_name  # noqa: E402
from harness import json_safe, machine_info  # noqa: E402

PUBLISHED = {
    "stocks": {
        "TimeGAN (NeurIPS 2019)": {"discriminative": 0.102, "predictive": 0.038},
        "Diffusion-TS (ICLR 2024)": {"discriminative": 0.067},
    },
    "sines": {
        "TimeGAN (NeurIPS 2019)": {"discriminative": 0.011, "predictive": 0.093},
        "Diffusion-TS (ICLR 2024)": {"discriminative": 0.006},
    },
}


def load_systems(names: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """name -> (DGAN class, DGANConfig class, OutputType, version); and skipped reasons."""
    systems, skipped = {}, {}
    if "dgan" in names:
        import dgan

        systems["dgan"] = (dgan.DGAN, dgan.DGANConfig, dgan.OutputType, dgan.__version__)
    if "gretel" in names:
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", message="CUDA is not available or torch_xla")
        warnings.filterwarnings("ignore", message="'pin_memory' argument is set as true")
        try:
            from gretel_synthetics.timeseries_dgan import config as gconfig
            from gretel_synthetics.timeseries_dgan import dgan as gdgan
        except ImportError as exc:
            skipped["gretel"] = f"not importable: {exc}"
        else:
            version = importlib.metadata.version("gretel-synthetics")
            systems["gretel"] = (gdgan.DGAN, gconfig.DGANConfig, gconfig.OutputType, version)
    return systems, skipped


def parse_override(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise SystemExit(f"config override {text!r} is not key=value")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value  # a bare string such as precision=bf16


def make_config(config_cls, base: dict[str, Any], overrides: dict[str, Any]):
    """The system's config from gretel-default ``base`` + ``overrides``; and what it lacks."""
    fields = set(getattr(config_cls, "__dataclass_fields__", {}))
    kwargs = {k: v for k, v in {**base, **overrides}.items() if k in fields}
    return config_cls(**kwargs), sorted((set(base) | set(overrides)) - fields)


def column_types(system, data: Dataset) -> dict[str, Any]:
    """The arguments beside the features that ``train_numpy`` takes for ``data``: every
    feature continuous, the attributes (if any) discrete or continuous as the data says."""
    output_type = system[2]
    n_features = np.shape(data.features[0])[-1]
    kwargs: dict[str, Any] = {"feature_types": [output_type.CONTINUOUS] * n_features}
    if data.attributes is not None:
        kind = output_type.DISCRETE if data.discrete_attributes else output_type.CONTINUOUS
        kwargs["attributes"] = data.attributes
        kwargs["attribute_types"] = [kind] * data.attributes.shape[1]
    return kwargs


def train_and_generate(
    system, config, data: Dataset, seed: int, curve: Curve | None = None
) -> tuple[Any, float, Any]:
    """Train a fresh model, then generate as many series as the real data has. With a
    ``curve``, the model is scored every ``curve.every`` steps while it trains (the time
    that takes is not counted as training time)."""
    dgan_cls = system[0]
    torch.manual_seed(seed)
    np.random.seed(seed)  # noqa: NPY002  (a library may draw from the global RNG)
    model = dgan_cls(config)
    kwargs: dict[str, Any] = {"features": data.features, **column_types(system, data)}
    if "progress_bar" in model.train_numpy.__code__.co_varnames:
        kwargs["progress_bar"] = False
    if curve is not None:
        kwargs["progress_callback"] = curve.callback(model, data, seed)
    start, start_cpu = time.perf_counter(), time.process_time()
    model.train_numpy(**kwargs)
    seconds = time.perf_counter() - start - (0.0 if curve is None else curve.paused)
    if curve is not None:
        curve.train_cpu_seconds = time.process_time() - start_cpu - curve.paused_cpu
    torch.manual_seed(seed + 10_000)
    attributes, features = model.generate_numpy(len(data.real))
    return (attributes, features), seconds, model


class Curve:
    """Quality over training time: every ``every`` optimizer steps, generate as many series
    as the real data has and record the protocol's discriminative score (``disc_runs``
    classifiers) beside the training seconds and steps so far. The clock stops while it
    scores; the model's random streams are restored afterwards, so training goes on as if
    nothing happened (dgan's generation uses its own stream; gretel's draws from torch's
    global one, which is forked)."""

    def __init__(self, every: int, disc_runs: int):
        self.every, self.disc_runs = every, disc_runs
        self.points: list[dict[str, float]] = []
        self.paused = 0.0
        self.paused_cpu = 0.0
        self.train_cpu_seconds: float | None = None  # set when training ends

    def callback(self, model, data: Dataset, seed: int):
        start, start_cpu = time.perf_counter(), time.process_time()
        steps = [0]

        def on_batch(info) -> None:
            steps[0] += 1
            if steps[0] % self.every:
                return
            paused_at, paused_at_cpu = time.perf_counter(), time.process_time()
            self.points.append(
                {
                    "steps": steps[0],
                    "train_seconds": paused_at - start - self.paused,
                    # CPU time of this process: what other jobs on the machine stretch
                    # least (one torch thread), so runs made side by side compare
                    "train_cpu_seconds": paused_at_cpu - start_cpu - self.paused_cpu,
                    **self._score(model, data, seed),
                }
            )
            print(f"  curve: {self.points[-1]}", flush=True)
            self.paused += time.perf_counter() - paused_at
            self.paused_cpu += time.process_time() - paused_at_cpu

        return on_batch

    def _score(self, model, data: Dataset, seed: int) -> dict[str, float]:
        sampler = getattr(model, "sampler", None)  # dgan: keep its generation stream as is
        state = None if sampler is None else sampler.rng.get_state()
        with torch.random.fork_rng(devices=[]):
            _, features = model.generate_numpy(len(data.real))
        if sampler is not None:
            sampler.rng.set_state(state)
        else:  # gretel generates in eval mode and trains on without switching back
            model._set_mode(True)
        synthetic = protocol_windows(data, features)
        runs = timegan_discriminative_runs(
            data.scaled(data.real), synthetic, runs=self.disc_runs, seed=seed
        )
        return {"discriminative": float(np.mean(runs))}


def protocol_windows(data: Dataset, features) -> np.ndarray | list[np.ndarray]:
    """Synthetic series scaled as the protocol scores them: one array when the real windows
    are one (fixed length), else a list."""
    synthetic = data.scaled([np.asarray(f, dtype=np.float64) for f in features])
    fixed = isinstance(data.real, np.ndarray) and data.real.dtype != object
    return np.stack(synthetic) if fixed else synthetic


def score(
    data: Dataset, generated, synthetic, args, seed: int
) -> tuple[dict[str, Any], list[float]]:
    """The protocol (and optionally dgan's own) metrics of ``synthetic`` (`protocol_windows`
    of ``generated``); and each classifier's discriminative score (they are often bimodal:
    worth keeping beside the mean)."""
    attributes, features = generated
    real = data.scaled(data.real)
    runs = timegan_discriminative_runs(
        real, synthetic, runs=args.disc_runs, iterations=args.disc_iterations, seed=seed
    )
    metrics: dict[str, Any] = {"discriminative": float(np.mean(runs))}
    if args.predictive:
        metrics["predictive"] = timegan_predictive_score(
            real, synthetic, iterations=args.predictive_iterations, seed=seed
        )
    metrics.update(copying_and_attributes(data, attributes, features, seed))
    if args.own_metrics:
        own = evaluate(
            SeriesData.from_arrays(data.real, data.attributes if data.reference is None else None),
            SeriesData.from_arrays(features, attributes),
            seed=seed,
        )
        for name, result in own.items():
            if name != "info" and result.get("score") is not None:
                metrics[f"own_{name}"] = result["score"]
    return metrics, runs


def train_at_defaults(dataset: str, seed: int) -> tuple[Dataset, argparse.Namespace, float, Any]:
    """One dgan training at the defaults on benchmark ``dataset`` (one thread): the data,
    the options `score` takes (protocol metrics only), the training seconds and the model.
    For benchmarks that decode one trained model in several ways (`score_sides`)."""
    torch.set_num_threads(1)
    flags = ["--systems", "dgan", "--no-own-metrics", "--no-train-on-real"]
    options = parse_args([*flags, "--datasets", dataset])
    system = load_systems(["dgan"])[0]["dgan"]
    data = load(dataset)
    base = {
        "max_sequence_len": data.max_sequence_len,
        "sample_len": DEFAULT_SAMPLE_LEN[parse_name(dataset)[0]],
        "cuda": False,
        "seed": seed,
    }
    config, _ = make_config(system[1], base, {})
    _, seconds, model = train_and_generate(system, config, data, seed)
    return data, options, seconds, model


def score_sides(data: Dataset, options, seed: int, generated: dict[str, Any]) -> dict[str, Any]:
    """`score` of each side's generated (attributes, features), printed as it comes:
    ``{side: {"metrics": ..., "discriminative_runs": ...}}``."""
    out = {}
    for side, pair in generated.items():
        synthetic = protocol_windows(data, pair[1])
        metrics, runs = score(data, pair, synthetic, options, seed)
        out[side] = {"metrics": metrics, "discriminative_runs": runs}
        print(f"{data.name} seed {seed} {side}: discriminative {metrics['discriminative']:.4f}, "
              f"predictive {metrics['predictive']:.4f}", flush=True)  # fmt: skip
    return out


def report_sides(
    data: Dataset, options, seed: int, seconds: float, generated: dict[str, Any], json_path, **extra
) -> dict[str, Any]:
    """The decoding-pair benchmarks' report: ``extra`` (e.g. the dataset), the seed, the
    training seconds, the machine and `score_sides`; written as JSON to ``json_path``
    unless it is None."""
    report = {
        **extra,
        "seed": seed,
        "train_seconds": seconds,
        "machine": machine_info(REPO),
        **score_sides(data, options, seed, generated),
    }
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=1))
    return report


def copying_and_attributes(data: Dataset, attributes, features, seed: int) -> dict[str, float]:
    """Memorisation of the training series (`dgan.metrics.memorisation`: the fraction of
    synthetic series that are near-copies of one, and the same for real series held out
    from training where the dataset has them), and, for data with attributes, the
    attribute marginals (total variation) and the attribute/feature relation."""
    train = SeriesData.from_arrays(data.features, data.attributes)
    fake = SeriesData.from_arrays(features, attributes if data.attributes is not None else None)
    out: dict[str, float] = {}
    copied = memorisation(train, fake, seed=seed)
    out["memorisation"] = copied["score"]
    out["memorisation_near_fraction"] = copied["near_fraction"]
    out["memorisation_distance_ratio"] = copied["median_distance_ratio"]
    if data.reference is not None and len(data.reference) > len(data.features):
        held_out = SeriesData.from_arrays(list(data.reference[len(data.features) :]))
        out["memorisation_held_out_real"] = memorisation(train, held_out, seed=seed)["score"]
    if data.attributes is not None:
        marginals = marginal_distances(train, fake)["attributes"]
        out["attribute_marginals"] = float(np.mean([v["value"] for v in marginals.values()]))
        relation = attribute_feature_relation(train, fake)["score"]
        if relation is not None:
            out["attribute_feature_relation"] = relation
    return out


def save_samples(synthetic, folder: Path, name: str) -> None:
    """Write fixed-length protocol windows to ``folder/name.npy`` (variable-length: none)."""
    if not isinstance(synthetic, np.ndarray):
        print(f"{name}: samples not saved (variable-length series do not stack)", flush=True)
        return
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{name}.npy", synthetic)


def plain_config(config) -> dict[str, Any]:
    """A config's fields as JSON values (enums by name: gretel's are not JSON-safe), without
    private attributes (dgan's record of the fields set)."""
    return {
        k: v.name if isinstance(v, enum.Enum) else json_safe(v)
        for k, v in vars(config).items()
        if not k.startswith("_")
    }


def summarize(values: list[float]) -> dict[str, float]:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": mean, "sd": sd, "n": len(values), "values": values}


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted({k for r in runs for k in r["metrics"]}):
        out[key] = summarize([r["metrics"][key] for r in runs if key in r["metrics"]])
    out["train_seconds"] = summarize([r["train_seconds"] for r in runs])
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--datasets",
        default="stocks,sines",
        help=f"comma list of {sorted(LOADERS)} or stocks-N (N training windows)",
    )
    p.add_argument("--seeds", default="3", help="a count k (seeds 0..k-1) or a comma list")
    p.add_argument(
        "--epochs", type=int, default=None, help="default: each system's own default length"
    )
    p.add_argument("--sample-len", type=int, default=None, help="default: per dataset (4; 7)")
    p.add_argument("--precision", default=None, help="dgan precision (fp32, bf16, fp16)")
    p.add_argument("--systems", default="dgan,gretel")
    p.add_argument("--disc-runs", type=int, default=10, help="classifiers averaged (10)")
    p.add_argument(
        "--disc-iterations", type=int, default=2000, help="steps per classifier (protocol: 2000)"
    )
    p.add_argument(
        "--predictive-iterations", type=int, default=5000, help="predictor steps (protocol: 5000)"
    )
    p.add_argument("--no-own-metrics", dest="own_metrics", action="store_false")
    p.add_argument("--no-predictive", dest="predictive", action="store_false")
    p.add_argument("--no-train-on-real", dest="train_on_real", action="store_false")
    p.add_argument("--tag", default="baseline", help="goes into the result file name")
    p.add_argument(
        "--save-samples",
        action="store_true",
        help="also write each seed's synthetic windows (protocol scaling) to "
        "OUT/samples/TAG-DATASET-SYSTEM-seedN.npy, for benchmarks/window_probe.py",
    )
    p.add_argument(
        "--curve-every",
        type=int,
        default=0,
        help="score the model every N optimizer steps while it trains (quality over time)",
    )
    p.add_argument("--curve-disc-runs", type=int, default=3, help="classifiers per curve point")
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    p.add_argument("overrides", nargs="*", help="DGANConfig field=value, for both systems")
    return p.parse_args(argv)


DEFAULT_SAMPLE_LEN = {"stocks": 4, "sines": 4, "weather": 7, "weather-var": 1}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    torch.set_num_threads(1)
    seeds = (
        list(range(int(args.seeds)))
        if "," not in args.seeds
        else [int(s) for s in args.seeds.split(",") if s.strip()]
    )
    if not seeds:  # "--seeds 0" is a count of none, never seed 0
        raise SystemExit(f"--seeds {args.seeds!r} runs no seed: give a count >= 1 or a list ('0,')")
    overrides = dict(parse_override(o) for o in args.overrides)
    if args.precision:
        overrides["precision"] = args.precision
    systems, skipped = load_systems(args.systems.split(","))
    path = Path(args.out) / f"fidelity-{args.tag}-{dt.date.today().isoformat()}.json"
    report: dict[str, Any] = {
        "benchmark": "fidelity",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine_info(REPO),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "systems": {name: {"version": s[3]} for name, s in systems.items()},
        "skipped": skipped,
        "seeds": seeds,
        "epochs": args.epochs,
        "disc_runs": args.disc_runs,
        "disc_iterations": args.disc_iterations,
        "predictive_iterations": args.predictive_iterations,
        "overrides": overrides,
        "datasets": {},
    }
    for name in args.datasets.split(","):
        try:
            data = load(name)
        except FileNotFoundError as exc:
            report["skipped"][name] = str(exc)
            print(f"skip {name}: {exc}", flush=True)
            continue
        sample_len = args.sample_len or DEFAULT_SAMPLE_LEN[parse_name(name)[0]]
        base = {
            "max_sequence_len": data.max_sequence_len,
            "sample_len": sample_len,
            "cuda": False,
        }
        if args.epochs is not None:
            base["epochs"] = args.epochs
        entry: dict[str, Any] = {
            "n_series": len(data.features),
            "n_reference": len(data.real),
            "published": PUBLISHED.get(name, {}),
            "systems": {},
        }
        report["datasets"][name] = entry
        if args.train_on_real:
            real = data.scaled(data.real)
            tor = [timegan_predictive_score(real, None, seed=s) for s in seeds]
            entry["train_on_real_predictive"] = summarize(tor)
            print(f"{name}: train-on-real predictive {statistics.fmean(tor):.4f}", flush=True)
            write(report, path)
        for sys_name, system in systems.items():
            seed_field = {"seed": None} if sys_name == "dgan" else {}
            config, missing = make_config(system[1], {**base, **seed_field}, overrides)
            runs = []
            result = {"config": plain_config(config), "runs": runs}
            if missing and sys_name == "gretel":
                result["not_applied_to_gretel"] = missing
            entry["systems"][sys_name] = result
            for seed in seeds:
                if sys_name == "dgan":
                    config, _ = make_config(system[1], {**base, "seed": seed}, overrides)
                curve = None
                if args.curve_every > 0:
                    curve = Curve(args.curve_every, args.curve_disc_runs)
                try:
                    generated, seconds, model = train_and_generate(
                        system, config, data, seed, curve
                    )
                except Exception as exc:  # a system that cannot handle the data: record it
                    result["error"] = f"{type(exc).__name__}: {exc}"
                    print(f"{name} {sys_name}: {result['error']}", flush=True)
                    break
                synthetic = protocol_windows(data, generated[1])
                metrics, disc_runs = score(data, generated, synthetic, args, seed)
                if args.save_samples:
                    sample_name = f"{args.tag}-{name}-{sys_name}-seed{seed}"
                    save_samples(synthetic, Path(args.out) / "samples", sample_name)
                run = {
                    "seed": seed,
                    "train_seconds": seconds,
                    "metrics": metrics,
                    "discriminative_runs": disc_runs,
                }
                if curve is not None:
                    run["curve"] = curve.points
                    run["train_cpu_seconds"] = curve.train_cpu_seconds
                if hasattr(model, "trainer"):  # dgan: the optimizer steps it trained
                    run["train_steps"] = model.trainer.steps_done
                    spent = [h["epsilon"] for h in model.history if h.get("epsilon") is not None]
                    if spent:  # differential privacy: the epsilon the run spent
                        run["epsilon_spent"] = spent[-1]
                # What training used where it differs from the config passed (dgan decides
                # large_data from the data).
                passed, used = plain_config(config), plain_config(model.config)
                changed = {k: v for k, v in used.items() if passed.get(k) != v}
                if changed:
                    run["config_used"] = changed
                runs.append(run)
                shown = " ".join(f"{k}={v:.4f}" for k, v in metrics.items())
                print(f"{name} {sys_name} seed {seed}: {seconds:.0f}s {shown}", flush=True)
                result["summary"] = aggregate(runs)
                write(report, path)
    report["finished_utc"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    write(report, path)
    print(f"wrote {path}", flush=True)
    return report


def write(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json_safe(report), indent=1, allow_nan=False) + "\n")


if __name__ == "__main__":
    main()
