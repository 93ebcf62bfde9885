"""What envelope a "series" carrier draws: per class, the median level L, start over level
A / L and decay time tau (steps) that each generated series' first LSTM step sets
(`dgan.networks.carrier`), with their 5-95% spread, and the centre over the level where the
model sets one. No training: the probe generates from a saved model with that seed and
reads the carrier's layers on the way.

    python benchmarks/envelope_probe.py MODEL.dgan --class-column appliance --seed 0

On the oscillating simulation (`oscillating_data.py`) every real series has A / L = 2 and
tau = 40 steps, and rests at 0.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from dgan import DGAN
from dgan.networks.carrier import Carrier


def envelope_table(model: DGAN, n: int, seed: int, class_column: str | None) -> dict:
    """Per class (or "all") the 5%, median and 95% of the first carried feature's L,
    A / L, tau and, where the model has one, centre over L, for ``n`` series generated
    with ``seed``."""
    carrier = next((m for m in model.sampler.generator.modules() if isinstance(m, Carrier)), None)
    if carrier is None or carrier.loudness is None:
        raise SystemExit("the model has no 'series' carrier: nothing to probe")
    model.sampler.calibration()  # drawn first, so that the hooks read the n series alone
    read: dict[str, list[torch.Tensor]] = {"loudness": [], "centre": []}
    layers = {"loudness": carrier.loudness, "centre": getattr(carrier, "centre", None)}
    hooks = [
        layer.register_forward_hook(lambda m, i, o, name=name: read[name].append(o.float()))
        for name, layer in layers.items()
        if layer is not None
    ]
    model.sampler.reseed(seed)
    with torch.no_grad():
        attributes, _ = model.generate_numpy(n)
    for hook in hooks:
        hook.remove()
    raw = torch.cat(read["loudness"]).view(n, -1, 3)[:, 0]
    level, start = (carrier.bound * torch.sigmoid(raw[:, :2])).unbind(-1)
    tau = carrier.sample_len * torch.exp(raw[:, 2].clamp(min=-20.0))
    columns = {"level": level, "start_over_level": start / level, "tau_steps": tau}
    if read["centre"]:
        centre = carrier.half_range * torch.tanh(torch.cat(read["centre"])[:, 0])
        columns["centre_over_level"] = centre / level
    classes = np.full(n, "all", dtype=object)
    if class_column is not None:
        names = list(model.data_frame_layout.attribute_columns)
        classes = np.asarray(attributes)[:, names.index(class_column)]
    table = {}
    for c in np.unique(classes):
        kept = classes == c
        table[str(c)] = {
            name: [round(float(v), 3) for v in np.quantile(values.numpy()[kept], [0.05, 0.5, 0.95])]
            for name, values in columns.items()
        }
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="a saved model with a 'series' carrier")
    parser.add_argument("--class-column", help="a discrete attribute to read per class")
    parser.add_argument("-n", type=int, default=240, help="series to generate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = envelope_table(DGAN.load(args.model), args.n, args.seed, args.class_column)
    print("per class: [5%, median, 95%]")
    for c, row in table.items():
        print(c, row)


if __name__ == "__main__":
    main()
