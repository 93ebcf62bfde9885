"""Mutation testing: does the fast test suite notice when the code's behaviour changes?

Each mutant is one small, meaningful change to the source (a flipped sign, a dropped
setting, a check that never fires). The script applies one mutant at a time to a copy of
the tree, runs the fast tests that should notice it, and reports the mutant as "killed"
(some test failed) or "SURVIVED" (every test passed: a regression there would land
silently). docs/testing.md lists the current score and explains each kept survivor.

Usage (from the repository root, with the project's Python):

    python scripts/mutants.py                  # every mutant, each against its tests
    python scripts/mutants.py --full           # each against the whole fast suite (slow)
    python scripts/mutants.py --only guard.nonfinite-loss-ignored training.rounds-ignored
    python scripts/mutants.py --module train.guard --module train.losses
    python scripts/mutants.py --list           # names, files and tests; runs nothing

The real files are never edited: src/, tests/ and pyproject.toml are copied to a
temporary folder, each mutant is applied there and undone after its run (also on Ctrl-C),
and the folder is removed at the end. Every mutant must apply exactly once; one whose
text is gone from the source (the code changed) is reported as "stale" and the run fails,
so the list is kept in step with the code. Before the mutants run, the same tests run on
the unmutated copy: a mutant "killed" by an already failing test would mean nothing.

Exit status: 0 when every mutant applied, the core modules' score reaches --min-score
and every survivor is explained as equivalent; 1 otherwise; 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The modules issue 14 names; variables.py holds the per-variable encoders that were
# part of encoding.py.
CORE = (
    "precision",
    "networks",
    "train.guard",
    "train.losses",
    "train.trainer",
    "train.loop",
    "encoding.encoder",
    "encoding.variables",
)
FAST = ("-m", "not slow")


@dataclass(frozen=True)
class Mutant:
    """One change: replace ``old`` (which must occur exactly once) by ``new`` in
    src/dgan/``module``.py; ``tests`` are the test files (or node ids) expected to notice.

    ``equivalent`` explains why a mutant cannot be told apart by any test (it is kept in
    the list, and in the score, so the explanation is checked on every run).
    """

    name: str
    module: str
    old: str
    new: str
    tests: tuple[str, ...]
    what: str
    equivalent: str | None = None

    @property
    def path(self) -> str:
        return f"src/dgan/{self.module.replace('.', '/')}.py"


def m(module, name, old, new, tests, what, equivalent=None) -> Mutant:
    return Mutant(f"{module}.{name}", module, old, new, tuple(tests), what, equivalent)


# Test files by topic (paths relative to the repository root).
GUARD = ("tests/test_guard.py", "tests/test_precision.py")
PRECISION = ("tests/test_precision.py", "tests/test_guard.py")
LOSSES = ("tests/test_losses.py", "tests/test_precision.py")
TRAINING = ("tests/test_training.py", "tests/test_losses.py", "tests/test_guard.py")
NETWORKS = ("tests/test_networks.py", "tests/test_conditional.py", "tests/test_model.py")
ENCODING = ("tests/test_encoding.py", "tests/test_model.py")
SAVING = ("tests/test_precision.py", "tests/test_serialization.py")
GENERATION = ("tests/test_conditional.py", "tests/test_precision.py", "tests/test_model.py")
LEVERS = ("tests/test_levers.py",)
CLI_PRECISION = ("tests/test_cli.py::test_precision_flag_reaches_the_config_and_the_history",)

# fmt: off
MUTANTS: tuple[Mutant, ...] = (
    # ----- precision.py ------------------------------------------------------------------
    m("precision", "from-config-drops-max-grad-norm",
      "            max_grad_norm=config.max_grad_norm,\n", "",
      PRECISION, "PrecisionPolicy.from_config drops max_grad_norm (no clipping)"),
    m("precision", "default-init-scale-2**16",
      "        init_scale: float = 2.0**14,", "        init_scale: float = 2.0**16,",
      PRECISION, "the policy's default initial loss scale is GradScaler's 2**16"),
    m("precision", "no-fp16-to-bf16-fallback",
      "if current == Precision.FP16 and bf16_is_native(device):",
      "if False and bf16_is_native(device):",
      GUARD, "fp16 falls back to fp32 even where bf16 is native"),
    m("precision", "bf16-never-falls-back",
      "if current in (Precision.FP16, Precision.BF16):", "if current == Precision.FP16:",
      GUARD, "a bf16 run that diverges stops instead of continuing in fp32"),
    m("precision", "auto-is-fp16-on-cpu",
      "            return Precision.FP32\n        return Precision.BF16",
      "            return Precision.FP16\n        return Precision.BF16",
      PRECISION, "precision='auto' picks fp16 on a CPU"),
    m("precision", "no-unscale-before-clipping",
      "scaler.unscale_(opt)  # true gradients", "None  # true gradients",
      PRECISION, "gradients are clipped while still multiplied by the loss scale"),
    m("precision", "clip-limit-ignored",
      'limit = float("inf") if self.max_grad_norm is None else self.max_grad_norm',
      'limit = float("inf")',
      PRECISION, "max_grad_norm never clips"),
    m("precision", "overflow-not-counted-as-skipped",
      "skipped = skipped | ~torch.isfinite(norm)", "skipped = skipped",
      PRECISION, "steps skipped for inf gradients are not counted"),
    m("precision", "static-scale-updated-dynamically",
      "if self.static_scale is not None and scaler.is_enabled():", "if False:",
      PRECISION, "a static loss scale backs off like a dynamic one"),
    m("precision", "lstm-fp32-choice-ignored",
      "generator.lstm_in_fp32 = self.lstm_in_fp32", "generator.lstm_in_fp32 = False",
      PRECISION, "the LSTM runs in a dtype the device cannot run safely"),
    # ----- guard.py ----------------------------------------------------------------------
    m("train.guard", "nonfinite-loss-ignored",
      "        if bad_loss:\n", "        if False:\n",
      GUARD, "a NaN/inf loss with finite weights is not divergence"),
    m("train.guard", "nonfinite-weights-ignored",
      "        if bad_weights:\n", "        if False:\n",
      GUARD, "NaN/inf weights are not divergence"),
    m("train.guard", "scale-collapse-unchecked",
      "scaler.get_scale() < MIN_LOSS_SCALE", "scaler.get_scale() < 0",
      GUARD, "a loss scale that collapsed below 1 goes unnoticed"),
    m("train.guard", "no-rollback",
      "        trainer.load_state_dict(copy.deepcopy(self._snapshot))\n",
      "        pass\n",
      GUARD, "recovery continues from the diverged state"),
    m("train.guard", "fp32-divergence-does-not-stop",
      "        return event, new is None", "        return event, False",
      GUARD, "divergence in fp32 (nothing safer left) does not stop training"),
    m("train.guard", "snapshot-without-precision",
      '("modules", "optimizers", "precision")', '("modules", "optimizers")',
      GUARD, "a rollback keeps the diverged run's precision and loss scales"),
    m("train.guard", "snapshot-shares-live-tensors",
      "        self._snapshot = copy.deepcopy(\n            {k: state[k] for k",
      "        self._snapshot = (\n            {k: state[k] for k",
      GUARD, "the snapshot holds the live tensors, so training changes it"),
    m("train.guard", "recovery-hands-over-the-snapshot",
      "trainer.load_state_dict(copy.deepcopy(self._snapshot))",
      "trainer.load_state_dict(self._snapshot)",
      GUARD, "optimizers adopt the snapshot's tensors and change it as they step"),
    # ----- losses.py ---------------------------------------------------------------------
    m("train.losses", "critic-loss-swapped",
      "(fake_scores.mean() - real_scores.mean())", "(real_scores.mean() - fake_scores.mean())",
      LOSSES, "the critic learns to score fakes above real data"),
    m("train.losses", "paired-scores-returned-swapped",
      "return scores[:n], scores[n:]", "return scores[n:], scores[:n]",
      LOSSES, "one-pass scoring hands back the fakes' scores as the real ones"),
    m("train.losses", "generator-loss-sign",
      "(-fake_scores.mean()).float()", "(fake_scores.mean()).float()",
      LOSSES, "the generator learns to lower the critic's score of its fakes"),
    m("train.losses", "whole-batch-norm-by-default",
      '        if norm == "batch":\n', '        if norm != "batch":\n',
      LOSSES, "the penalty's default norm is taken over the whole batch"),
    m("train.losses", "penalty-not-centred-on-1",
      "((length - 1.0) ** 2).mean()", "(length**2).mean()",
      LOSSES, "the penalty pushes gradient norms to 0 instead of 1"),
    m("train.losses", "interpolation-ignores-alpha",
      "(a * r.float() + (1 - a) * f.float())", "(a * r.float() + a * f.float())",
      LOSSES, "the penalty's interpolates are not between real and fake"),
    m("train.losses", "fp32-penalty-runs-in-autocast",
      'full_precision = policy.gradient_penalty_precision == "fp32"', "full_precision = False",
      LOSSES, "gradient_penalty_precision='fp32' is ignored"),
    m("train.losses", "penalty-has-no-second-order-graph",
      "grads = torch.autograd.grad(scores.float().sum(), inputs, create_graph=True)",
      "grads = torch.autograd.grad(scores.float().sum(), inputs, create_graph=False)",
      LOSSES, "the penalty does not train the critic (no graph through the gradient)"),
    m("train.losses", "scaled-penalty-gradients-not-unscaled",
      "inv_scale = 1.0 / scaler.scale(torch.ones((), device=policy.device))",
      "inv_scale = 1.0",
      LOSSES, "the fp16 penalty uses gradients still multiplied by the loss scale"),
    # ----- training.py -------------------------------------------------------------------
    m("train.trainer", "discriminator-rounds-ignored",
      "for _ in range(c.discriminator_rounds):", "for _ in range(1):",
      TRAINING, "discriminator_rounds is ignored"),
    m("train.trainer", "generator-rounds-ignored",
      "for round_ in range(c.generator_rounds):", "for round_ in range(1):",
      TRAINING, "generator_rounds is ignored"),
    m("train.trainer", "critic-scores-swapped",
      "critic_loss(real_scores, fake_scores) + coef * penalty",
      "critic_loss(fake_scores, real_scores) + coef * penalty",
      TRAINING, "the training step gives every critic real and fake swapped"),
    m("train.trainer", "paired-scores-swapped",
      "paired_scores(critic, real, fake)", "paired_scores(critic, fake, real)",
      TRAINING, "the critics score real and fake the wrong way round"),
    m("train.trainer", "attribute-critic-scores-swapped",
      "                real_all[:2],\n                fake_all[:2],\n",
      "                fake_all[:2],\n                real_all[:2],\n",
      TRAINING, "the attribute critic gets real and fake swapped"),
    m("train.trainer", "penalty-coef-ignored",
      "self.critic, real_all, fake_all, alpha, c.gradient_penalty_coef",
      "self.critic, real_all, fake_all, alpha, 1.0",
      TRAINING, "gradient_penalty_coef is ignored"),
    m("train.trainer", "attribute-penalty-coef-ignored",
      "                c.attribute_gradient_penalty_coef,\n", "                1.0,\n",
      TRAINING, "attribute_gradient_penalty_coef is ignored"),
    m("train.trainer", "penalty-norm-setting-ignored",
      "norm, collective = self.config.gradient_penalty_norm,", 'norm, collective = "batch",',
      TRAINING, "gradient_penalty_norm is ignored (always the whole-batch norm)"),
    m("train.trainer", "attribute-loss-coef-ignored",
      "loss = loss + c.attribute_loss_coef * losses.generator_loss(attribute_scores)",
      "loss = loss + losses.generator_loss(attribute_scores)",
      TRAINING, "attribute_loss_coef is ignored"),
    m("train.trainer", "generator-blind-to-attribute-critic",
      "loss = loss + c.attribute_loss_coef * losses.generator_loss(attribute_scores)",
      "loss = loss",
      TRAINING, "the attribute critic does not steer the generator"),
    m("train.trainer", "critic-nonfinite-not-counted",
      "acc.nonfinite_losses += policy.diverged(total, skipped, policy.critic_scaler)", "pass",
      TRAINING, "a NaN critic loss is not counted for the guard"),
    m("train.trainer", "generator-nonfinite-not-counted",
      "acc.nonfinite_losses += policy.diverged(loss, skipped, policy.generator_scaler)",
      "pass",
      TRAINING, "a NaN generator loss is not counted for the guard"),
    m("train.loop", "guard-switch-ignored",
      "    if not trainer.config.divergence_guard:\n        return None, False\n", "",
      TRAINING, "divergence_guard=False still rolls back"),
    m("train.loop", "snapshot-never-refreshed",
      "    if problem is None:\n        trainer.guard.snapshot()\n",
      "    if problem is None:\n        pass\n",
      TRAINING, "rollback goes to the first state, not the last healthy one"),
    m("train.loop", "no-check-at-epoch-end",
      "if trainer.steps_done % trainer.config.log_every == 0 or b == n_batches - 1:",
      "if trainer.steps_done % trainer.config.log_every == 0:",
      TRAINING, "the guard checks only every log_every steps, not at epoch ends"),
    m("train.loop", "nonfinite-count-kept-after-rollback",
      "                acc.nonfinite_losses.zero_()\n", "",
      TRAINING, "one divergence triggers a rollback at every later check"),
    m("train.loop", "losses-kept-after-rollback",
      "                acc.losses.zero_()\n", "",
      TRAINING, "an epoch's losses include the steps that were rolled back"),
    m("train.trainer", "losses-not-weighted",
      "acc.losses[GENERATOR_LOSS] += loss.detach() * weight",
      "acc.losses[GENERATOR_LOSS] += loss.detach()",
      TRAINING, "the epoch's generator loss is not a mean over examples"),
    m("train.trainer", "critics-stay-frozen",
      "            p.requires_grad_(True)", "            p.requires_grad_(False)",
      TRAINING, "the critics stay frozen after the first generator step"),
    m("train.trainer", "batch-of-one-reaches-batchnorm",
      "draw_noise(self.config, max(n, 2), self.rng, self.device)",
      "draw_noise(self.config, n, self.rng, self.device)",
      TRAINING, "a last batch of one example breaks BatchNorm"),
    m("train.trainer", "steps-not-counted",
      "        self.steps_done += 1\n", "",
      TRAINING, "training steps are not counted"),
    m("train.trainer", "loaded-precision-not-restored",
      "            self.set_precision(in_effect)\n", "",
      SAVING, "a load continues in the configured precision, not the one in effect"),
    m("train.trainer", "loaded-scalers-not-restored",
      "            self.policy.critic_scaler.load_state_dict(saved[\"critic_scaler\"])\n",
      "",
      SAVING, "a load starts the critic's loss scale afresh"),
    m("train.trainer", "loaded-rng-not-restored",
      '            self.rng.set_state(state["rng"])\n', "            pass\n",
      SAVING, "a loaded model's training draws differ from the saved one's"),
    m("train.trainer", "temporal-critic-scores-swapped",
      "self.temporal_critic, real_all, fake_all, alpha",
      "self.temporal_critic, fake_all, real_all, alpha",
      LEVERS + TRAINING, "the temporal critic gets real and fake swapped"),
    m("train.trainer", "temporal-coef-ignored",
      "loss = loss + c.temporal_critic_loss_coef * losses.generator_loss(temporal_scores)",
      "loss = loss + losses.generator_loss(temporal_scores)",
      LEVERS + TRAINING, "temporal_critic_loss_coef is ignored"),
    m("train.trainer", "generator-blind-to-temporal-critic",
      "loss = loss + c.temporal_critic_loss_coef * losses.generator_loss(temporal_scores)",
      "loss = loss",
      LEVERS + TRAINING, "the temporal critic does not steer the generator"),
    m("train.trainer", "generation-ignores-the-average",
      "return self.generator if self.generator_ema is None else self.generator_ema",
      "return self.generator",
      LEVERS, "generator_ema_decay is set but generation uses the live weights"),
    m("train.trainer", "average-keeps-stale-batchnorm-statistics",
      "mine.copy_(theirs)  # BatchNorm statistics: the live ones", "pass",
      (*LEVERS, "tests/test_training.py"),
      "the weight average generates with BatchNorm statistics of step 0"),
    m("train.trainer", "ema-decay-does-not-ramp",
      "decay = min(self.config.generator_ema_decay, (1 + t) / (10 + t))",
      "decay = self.config.generator_ema_decay",
      LEVERS, "the weight average keeps the untrained weights for long"),
    # ----- networks.py -------------------------------------------------------------------
    m("networks", "lstm-ignores-attributes",
      "conditioning = [t.detach() for t in (attributes, additional) if t is not None]",
      "conditioning = [t.detach() for t in (additional,) if t is not None]",
      NETWORKS, "given (or generated) attributes do not reach the LSTM"),
    m("networks", "conditioning-not-detached",
      "conditioning = [t.detach() for t in (attributes, additional) if t is not None]",
      "conditioning = [t for t in (attributes, additional) if t is not None]",
      NETWORKS, "the series' loss trains the attribute generator"),
    m("networks", "minmax-ignores-attributes",
      "[attributes.detach(), attribute_noise]", "[torch.zeros_like(attributes), attribute_noise]",
      NETWORKS, "the min/max generator does not see the attributes"),
    m("networks", "end-step-zeroed",
      "mask = torch.cat([torch.ones_like(alive[:, :1]), alive[:, :-1]], dim=1)",
      "mask = alive",
      NETWORKS, "the step that ends a series is zeroed too"),
    m("networks", "nothing-zeroed-after-end",
      "features = features * self._alive_mask(features)", "features = features",
      NETWORKS, "steps after a series' end are not zeroed"),
    m("networks", "softmax-over-wrong-axis",
      "torch.softmax(x.unflatten(-1, (-1, width)), dim=-1)",
      "torch.softmax(x.unflatten(-1, (-1, width)), dim=-2)",
      NETWORKS, "one-hot groups are normalised across groups"),
    m("networks", "tanh-as-sigmoid",
      "if kind in (SIGMOID, BITS):", "if kind in (SIGMOID, BITS, TANH):",
      NETWORKS, "[-1, 1] variables get a sigmoid"),
    m("networks", "forget-bias-on-input-gate",
      "param[feature_num_units : 2 * feature_num_units].fill_(1.0)",
      "param[:feature_num_units].fill_(1.0)",
      NETWORKS, "forget_bias sets the input gate's bias"),
    m("networks", "lstm-fp32-flag-ignored",
      "        if not self.lstm_in_fp32:\n", "        if True:\n",
      NETWORKS + PRECISION, "the LSTM runs in low precision where it is unsafe"),
    # ----- encoding.py -------------------------------------------------------------------
    m("encoding.encoder", "tie-does-not-end",
      "return ends >= continues", "return ends > continues",
      ENCODING, "a tie between the flags does not end the series"),
    m("encoding.encoder", "lengths-off-by-one",
      "return ends.argmax(axis=1).astype(np.int64) + 1",
      "return ends.argmax(axis=1).astype(np.int64)",
      ENCODING, "decoded series lose their last step"),
    m("encoding.encoder", "never-ending-series-length-1",
      "        ends[:, -1] = True\n", "",
      ENCODING, "a series whose flag never says 'ends' decodes to one step"),
    m("encoding.encoder", "flags-swapped-in-encoding",
      "encoded[k, : length - 1, flag] = 1.0  # continues",
      "encoded[k, : length - 1, flag + 1] = 1.0  # continues",
      ENCODING, "the training data's generation flags say 'ends' at every step"),
    m("encoding.variables", "minus-one-one-range-wrong",
      "unit * 2.0 - 1.0", "unit * 2.0",
      ENCODING, "MINUSONE_ONE scales to [0, 2]"),
    m("encoding.encoder", "overshoot-not-clipped",
      "feats[:, :, starts[i]] = np.clip(z, low, 1.0)", "feats[:, :, starts[i]] = z",
      ENCODING, "generated values outside the training range are not clipped"),
    m("encoding.encoder", "variable-length-missed",
      "bool((lengths != config.max_sequence_len).any())",
      "bool((lengths != config.max_sequence_len).all())",
      ENCODING, "data with some full-length series is taken as fixed-length"),
    m("encoding.encoder", "half-range-doubled",
      "return (hi + lo) / 2.0, (hi - lo) / 2.0", "return (hi + lo) / 2.0, hi - lo",
      ENCODING, "per-example scaling learns twice the half-range"),
    m("encoding.variables", "binary-code-too-narrow",
      "math.ceil(math.log2(len(self.categories)))",
      "math.floor(math.log2(len(self.categories)))",
      ENCODING, "binary codes have too few bits for all categories"),
    m("encoding.encoder", "negative-half-range-kept",
      "half = np.maximum(half, 0.0)", "half = half",
      ENCODING, "a negative generated half-range flips the series",
      equivalent="the generator's half-range outputs come from sigmoid/tanh and lie in the "
      "encoded range, whose inverse is at least the smallest training half-range (>= 0): "
      "no generated output is negative; the clamp guards hand-edited encodings only"),
    # ----- generation.py, config.py, cli.py -------------------------------------------------
    m("sampling", "precision-ignored",
      'resolve_precision(precision or "fp32", self.device)',
      'resolve_precision("fp32", self.device)',
      GENERATION, "generate_numpy(precision=...) is ignored"),
    m("sampling", "condition-not-copied-back",
      "                    generated_attributes[:, j] = requested[:, j]\n",
      "                    pass\n",
      GENERATION, "requested continuous attributes come back as their float32 round trip"),
    m("sampling", "generates-in-train-mode",
      "        generator.eval()\n", "",
      (*GENERATION, "tests/test_reproducibility.py"),
      "generation runs BatchNorm in training mode"),
    m("noise", "one-rng-stream",
      "rng.manual_seed(seed * 2 + stream + 1)", "rng.manual_seed(seed * 2 + 1)",
      ("tests/test_reproducibility.py",), "training and generation share one random stream"),
    m("config.fields", "default-init-scale-2**16",
      "    init_scale: float = 2.0**14", "    init_scale: float = 2.0**16",
      PRECISION, "DGANConfig's default initial loss scale is 2**16"),
    m("config.fields", "gretel-mixed-precision-ignored",
      'return "fp16" if self.mixed_precision_training else "fp32"', 'return "fp32"',
      PRECISION, "mixed_precision_training=True trains in fp32"),
    m("cli.commands", "precision-flag-dropped",
      '_CONFIG_FLAGS = (\n    "precision",\n', "_CONFIG_FLAGS = (\n",
      CLI_PRECISION, "dgan train --precision is ignored"),
)
# fmt: on


# ----- running ------------------------------------------------------------------------------
@dataclass
class Result:
    mutant: Mutant
    outcome: str  # "killed", "SURVIVED", "timeout" (counts as killed), "error"
    seconds: float
    detail: str = ""

    @property
    def killed(self) -> bool:
        return self.outcome in ("killed", "timeout")


def copy_tree(destination: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "*.egg-info")
    for folder in ("src", "tests"):
        shutil.copytree(ROOT / folder, destination / folder, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", destination / "pyproject.toml")


@contextmanager
def applied(tree: Path, mutant: Mutant) -> Iterator[None]:
    """Apply ``mutant`` to the copy in ``tree``; always put the original text back."""
    path = tree / mutant.path
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace(mutant.old, mutant.new, 1), encoding="utf-8")
    try:
        yield
    finally:
        path.write_text(original, encoding="utf-8")


def stale(mutants: Sequence[Mutant]) -> list[str]:
    """Mutants whose text does not occur exactly once in the current source."""
    problems = []
    for mutant in mutants:
        count = (ROOT / mutant.path).read_text(encoding="utf-8").count(mutant.old)
        if count != 1:
            problems.append(f"{mutant.name}: its text occurs {count} times in {mutant.path}")
    return problems


def pytest_command(tests: Sequence[str], doctest_module: str | None) -> list[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *FAST]
    command += list(tests)
    if doctest_module is not None:
        command.append(doctest_module)  # the module's doctests are part of the fast suite
    return command


def run_tests(tree: Path, command: list[str], timeout: float) -> tuple[int | None, str]:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree / 'tests'}"}
    env["OMP_NUM_THREADS"] = "1"
    try:
        done = subprocess.run(
            command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return None, ""
    output = done.stdout + done.stderr
    if "KeyboardInterrupt" in output:  # Ctrl-C reached pytest first: not a kill
        raise KeyboardInterrupt
    lines = output.strip().splitlines()
    return done.returncode, lines[-1] if lines else ""


def run_mutant(
    tree: Path, mutant: Mutant, full: bool, timeout: float, doctests: bool = True
) -> Result:
    tests = ("tests", "src/dgan") if full else mutant.tests
    doctest_module = mutant.path if doctests and not full else None
    start = time.perf_counter()
    with applied(tree, mutant):
        code, last = run_tests(tree, pytest_command(tests, doctest_module), timeout)
    seconds = time.perf_counter() - start
    if code is None:
        return Result(mutant, "timeout", seconds, f"no result in {timeout:.0f} s")
    if code == 0:
        return Result(mutant, "SURVIVED", seconds, last)
    if code in (1, 2):  # test failures, or errors while collecting (an import broke)
        return Result(mutant, "killed", seconds, last)
    return Result(mutant, "error", seconds, f"pytest exit {code}: {last}")


def summary(results: Sequence[Result]) -> tuple[str, float]:
    """Per-module and core scores, and the core score as a fraction."""
    lines = []
    modules = sorted({r.mutant.module for r in results}, key=lambda x: (x not in CORE, x))
    for module in modules:
        mine = [r for r in results if r.mutant.module == module]
        killed = sum(r.killed for r in mine)
        lines.append(f"  {module:<11} {killed:>3}/{len(mine):<3} killed")
    core = [r for r in results if r.mutant.module in CORE]
    core_score = sum(r.killed for r in core) / len(core) if core else 1.0
    total = sum(r.killed for r in results)
    lines.append(
        f"score: {total}/{len(results)} killed ({total / max(len(results), 1):.0%}); core "
        f"modules ({', '.join(CORE)}): {sum(r.killed for r in core)}/{len(core)} "
        f"({core_score:.0%})"
    )
    return "\n".join(lines), core_score


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants only")
    parser.add_argument("--module", action="append", help="run this module's mutants only")
    parser.add_argument("--full", action="store_true", help="run the whole fast suite each")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mutant run")
    parser.add_argument("--min-score", type=float, default=0.9, help="core score to pass")
    parser.add_argument(
        "--no-doctests", action="store_true", help="tests only: leave out the module's doctests"
    )
    parser.add_argument("--skip-baseline", action="store_true", help="trust the clean run")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    mutants = list(MUTANTS)
    names = {mutant.name for mutant in MUTANTS}
    if len(names) != len(MUTANTS):
        parser.error("two mutants share a name")
    if args.only:
        unknown = sorted(set(args.only) - names)
        if unknown:
            parser.error(f"unknown mutant(s) {unknown}; see --list")
        mutants = [mutant for mutant in mutants if mutant.name in args.only]
    if args.module:
        mutants = [mutant for mutant in mutants if mutant.module in args.module]
    if args.list:
        for mutant in mutants:
            print(f"{mutant.name:<52} {mutant.what}\n{'':<52} tests: {' '.join(mutant.tests)}")
        return 0
    problems = stale(mutants)
    if problems:
        print("stale mutants (update them to the current code):", *problems, sep="\n  ")
        return 1

    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="dgan-mutants-") as folder:
        tree = Path(folder)
        copy_tree(tree)
        try:
            if not args.skip_baseline:
                tests = (
                    ["tests", "src/dgan"]
                    if args.full
                    else sorted(
                        {t for mutant in mutants for t in mutant.tests}
                        | {mutant.path for mutant in mutants}
                    )
                )
                start = time.perf_counter()
                code, last = run_tests(tree, pytest_command(tests, None), args.timeout * 3)
                print(f"baseline (no mutant): {last} [{time.perf_counter() - start:.0f} s]")
                if code != 0:
                    print("the tests fail without any mutant; fix them first")
                    return 1
            for k, mutant in enumerate(mutants, 1):
                result = run_mutant(
                    tree, mutant, args.full, args.timeout, doctests=not args.no_doctests
                )
                results.append(result)
                note = f"  (equivalent: {mutant.equivalent})" if mutant.equivalent else ""
                print(
                    f"[{k:>2}/{len(mutants)}] {result.outcome:<8} {result.seconds:5.0f} s  "
                    f"{mutant.name}: {mutant.what}{note}",
                    flush=True,
                )
                if result.outcome == "error":
                    print(f"        {result.detail}")
        except KeyboardInterrupt:
            print("\ninterrupted: the source is untouched; partial results follow")
            if results:
                print(summary(results)[0])
            return 130

    text, core_score = summary(results)
    print(text)
    survivors = [r for r in results if r.outcome == "SURVIVED"]
    for r in survivors:
        reason = r.mutant.equivalent or "NOT EXPLAINED: add a test that kills it"
        print(f"survivor {r.mutant.name}: {reason}")
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "name": r.mutant.name,
                        "module": r.mutant.module,
                        "outcome": r.outcome,
                        "seconds": round(r.seconds, 1),
                        "detail": r.detail,
                    }
                    for r in results
                ],
                indent=2,
            )
        )
    errors = any(r.outcome == "error" for r in results)
    unexplained = any(r.mutant.equivalent is None for r in survivors)
    return 0 if core_score >= args.min_score and not errors and not unexplained else 1


if __name__ == "__main__":
    sys.exit(main())
