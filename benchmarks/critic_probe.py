"""What a trained model's critic reads: its scores on real series altered one way at a time.

A GAN's generator only fixes what its critic penalises. This loads a model (``dgan
train``'s file keeps the critic), encodes the training table as training did, and scores
with the critic, on the same scale as its loss:

* the real series and as many generated ones (the generator's raw output, before
  decoding): their gap is the distance the critic sees;
* the real series altered in one way each, on every continuous feature in the
  generator's own units: each LSTM step's amplitude (about the step's mean) scaled by
  1 + 0.25 z; the first step at 0.6 of its amplitude; every amplitude at 0.6; noise of
  5% of the range; a 3-value moving average; and each series' whole LSTM steps after
  the first shuffled among themselves (each step as real, but the series jumping where
  steps meet). A drop from the real score is what that alteration costs in the
  critic's eyes; the gap to generated ones is the scale;
* the real critic input with one part (attributes, values, and each summary the critic
  reads: spectrum, sorted changes) taken from the generated series instead: which part
  carries the gap (the values bring the generated series' ends, their flags, along);
* generated series with every LSTM step after the first rescaled to the series' median
  step spread: whether the critic cares that each step holds an amplitude of its own.

Scores are means over the series. A research tool for the long-series work
(docs/quality.md); it reads the model's internals and may change with them::

    python benchmarks/critic_probe.py DIR/model.dgan runs/osc.csv --json probe.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import torch

from dgan import DGAN
from dgan.encoding.encoder import SIGMOID, TANH
from dgan.prepare import FrameSource
from dgan.tabular.columns import columns_of_layout

AMPLITUDE_JITTER = 0.25
QUIETER = 0.6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("csv", type=Path, help="the training table (the model's roles)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = probe(DGAN.load(args.model), pd.read_csv(args.csv), args.seed)
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


def probe(model: DGAN, table: pd.DataFrame, seed: int) -> dict:
    """The scores described in the module doc, rounded, as a dict."""
    torch.manual_seed(seed)
    model.sampler.reseed(seed)
    critic, generator = model.critic, model.generator
    critic.eval(), generator.eval()
    encoded = model._prepare(FrameSource(table, columns_of_layout(model.data_frame_layout)))
    real = tuple(
        None if a is None else torch.as_tensor(a, dtype=torch.float32)
        for a in (encoded.attributes, encoded.additional_attributes, encoded.features)
    )
    n, length, _ = real[2].shape
    with torch.no_grad():
        fake = generator(model.attribute_noise_func(n), model.feature_noise_func(n))
    steps, width = length // generator.sample_len, generator.sample_len
    continuous = [
        i
        for s in model.encoder.feature_slices
        if s.activation in (SIGMOID, TANH)
        for i in range(s.start, s.start + s.width)
    ]
    alive = real[2].abs().sum(dim=2, keepdim=True) > 0  # (N, T, 1): inside each series
    rng = torch.Generator().manual_seed(seed)

    def score(parts) -> float:
        with torch.no_grad():
            return round(float(critic(*parts).mean()), 3)

    def altered(change) -> float:
        """The real series' score with ``change`` applied to their continuous values,
        (N, K, S, C) -> (N, K, S, C), padding left at zero."""
        features = real[2].clone()
        values = features[..., continuous].reshape(n, steps, width, len(continuous))
        new = change(values).reshape(n, length, len(continuous))
        low, high = real[2][..., continuous].amin((0, 1)), real[2][..., continuous].amax((0, 1))
        features[..., continuous] = torch.where(
            alive, new.clamp(low, high), features[..., continuous]
        )
        return score((real[0], real[1], features))

    def scaled(factors):  # (N, K) per step -> scale each step about its own mean
        def change(values):
            mean = values.mean(dim=2, keepdim=True)
            return mean + (values - mean) * factors[:, :, None, None]

        return change

    jitter = 1 + AMPLITUDE_JITTER * torch.randn(n, steps, generator=rng)
    jitter[:, 0] = 1
    first = torch.ones(n, steps)
    first[:, 0] = QUIETER
    whole = alive.reshape(n, steps, width).all(dim=2)  # (N, K): steps wholly inside

    def shuffled(values):
        out = values.clone()
        for i in range(n):
            inside = torch.nonzero(whole[i, 1:]).squeeze(1) + 1
            out[i, inside] = values[i, inside[torch.randperm(len(inside), generator=rng)]]
        return out

    def smoothed(values):
        flat = values.reshape(n, length, -1)
        out = flat.clone()
        out[:, 1:-1] = (flat[:, :-2] + flat[:, 1:-1] + flat[:, 2:]) / 3
        return out.reshape(values.shape)

    def noisy(values):
        return values + 0.05 * torch.randn(values.shape, generator=rng)

    result = {
        "series": n,
        "lstm_steps": steps,
        "real": score(real),
        "generated": score(fake),
        "real_altered": {
            f"each step's amplitude x (1 + {AMPLITUDE_JITTER} z)": altered(scaled(jitter)),
            f"the first step at {QUIETER} of its amplitude": altered(scaled(first)),
            f"every amplitude at {QUIETER}": altered(scaled(torch.full((n, steps), QUIETER))),
            "noise of 5% of the range": altered(noisy),
            "a 3-value moving average": altered(smoothed),
            "whole steps after the first shuffled": altered(shuffled),
        },
        "real_with_the_generated": _hybrids(critic, real, fake),
    }
    values = fake[2][..., continuous].reshape(n, steps, width, len(continuous))
    spread = values.std(dim=2)  # (N, K, C)
    fake_alive = fake[2].abs().sum(dim=2).reshape(n, steps, width).all(dim=2)
    target = torch.stack(
        [spread[i, fake_alive[i]].median(dim=0).values if fake_alive[i].any() else spread[i, 0]
         for i in range(n)]
    )  # fmt: skip
    factor = torch.where(fake_alive[..., None], target[:, None] / spread.clamp(min=1e-4), 1.0)
    factor[:, 0] = 1
    mean = values.mean(dim=2, keepdim=True)
    steady = fake[2].clone()
    steady[..., continuous] = (mean + (values - mean) * factor[:, :, None]).reshape(
        n, length, len(continuous)
    )
    result["generated_with_every_step_at_one_spread"] = score((fake[0], fake[1], steady))
    return result


def _hybrids(critic, real, fake) -> dict:
    """The critic's score on the real input with each part in turn the generated one."""
    real_parts, fake_parts = critic._inputs(real), critic._inputs(fake)
    names = [
        name
        for name, part in zip(("attributes", "additional"), real[:2], strict=True)
        if part is not None
    ]
    names += ["values"] + [f.__name__ for f, _ in critic.summaries]
    out = {}
    for k, name in enumerate(names):
        parts = list(real_parts)
        parts[k] = fake_parts[k]
        with torch.no_grad():
            scores = critic.score_inputs(torch.cat(parts, dim=1))
        out[name] = round(float(scores.mean()), 3)
    return out


if __name__ == "__main__":
    main()
