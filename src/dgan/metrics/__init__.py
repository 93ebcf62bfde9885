"""Fidelity metrics: how closely synthetic time series match the real ones.

Everything takes two `SeriesData` (real and synthetic, same columns) and returns plain,
JSON-serializable dicts. `evaluate` runs them all; each metric is also public on its own.
Each metric's result carries a headline ``score`` and ``better`` ("lower"/"higher"), and
`METRIC_DESCRIPTIONS` reads each one in a sentence, for reports.

Conventions shared by all metrics:

* Continuous values are compared in units of the *real* data's standard deviation, so
  numbers are comparable across features (a constant real column uses raw units).
* Discrete values may be strings or numbers. Categories are encoded once over both sides
  together, so a category that only one side has is a category like any other; missing
  values (None/NaN) in a discrete column form their own category, ``"<missing>"``.
* A metric that cannot be computed for the data at hand (no continuous feature, series
  of length 1, too few examples) reports ``score: None`` and a ``reason``, never NaN.

Modules, one job each: `dgan.metrics.data` (the `SeriesData` container and adapters),
`dgan.metrics.distances` (distribution metrics), `dgan.metrics.learned` (classifier-based
metrics), `dgan.metrics.evaluate` (all of them at once, with baselines), `dgan.metrics.verdict`
(what the scores say against the baselines), `dgan.metrics.standard_error` (a score's
noise where one seed has no spread) and `dgan.metrics.protocol` (the
TimeGAN protocol's discriminative and predictive scores, to compare with published
tables). Every public name is importable from `dgan.metrics`.
"""

from dgan.metrics.data import (
    Columns,
    SeriesData,
    check_same_columns,
    columns_of_layout,
    frames_to_series,
)
from dgan.metrics.distances import (
    MISSING_CATEGORY,
    attribute_feature_relation,
    autocorrelation_distance,
    factorize_pair,
    feature_correlation_distance,
    marginal_distances,
    mean_autocorrelation,
    total_variation_distance,
    wasserstein_1d,
)
from dgan.metrics.evaluate import METRIC_DESCRIPTIONS, evaluate
from dgan.metrics.learned import discriminative_score, train_synthetic_test_real
from dgan.metrics.memorisation import judge_memorisation, memorisation
from dgan.metrics.protocol import (
    timegan_discriminative_runs,
    timegan_discriminative_score,
    timegan_predictive_score,
)
from dgan.metrics.standard_error import (
    accuracy_standard_error,
    auc_standard_error,
    ratio_standard_error,
    seed_spread,
    shows_sampling_error,
)
from dgan.metrics.verdict import THRESHOLDS, VERDICTS, judge, overall_verdict

__all__ = [
    "METRIC_DESCRIPTIONS",
    "MISSING_CATEGORY",
    "THRESHOLDS",
    "VERDICTS",
    "Columns",
    "SeriesData",
    "accuracy_standard_error",
    "attribute_feature_relation",
    "auc_standard_error",
    "autocorrelation_distance",
    "check_same_columns",
    "columns_of_layout",
    "discriminative_score",
    "evaluate",
    "factorize_pair",
    "feature_correlation_distance",
    "frames_to_series",
    "judge",
    "judge_memorisation",
    "marginal_distances",
    "mean_autocorrelation",
    "memorisation",
    "overall_verdict",
    "ratio_standard_error",
    "seed_spread",
    "shows_sampling_error",
    "timegan_discriminative_runs",
    "timegan_discriminative_score",
    "timegan_predictive_score",
    "total_variation_distance",
    "train_synthetic_test_real",
    "wasserstein_1d",
]
