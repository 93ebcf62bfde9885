"""Does a trained model's critic read the class? Real series scored with their own class,
then with another series' class swapped in.

    python benchmarks/critic_reads_class.py MODEL.dgan REAL.csv [--shuffles 5] [--seed 0]

The real table (LONG: ``example_id``, ``step``, the model's feature and attribute columns)
goes through the model's fitted encoder, and the trained critic scores each series as it
is and then with the one-hot columns of the class attribute (the class shares' attribute,
else the first discrete one) taken from another series, in ``--shuffles`` random
pairings; only pairs whose classes differ count. A critic that judges the relation of a
series to its class scores the mismatched ones lower: the mean change, against the spread
of scores across series, says how much a generated series pays for another class's
shape (docs/quality.md, "A critic that reads the class"). CPU, fp32, one JSON line out.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import torch

from dgan import DGAN
from dgan.encoding.variables import DiscreteEncoder


def class_swap(model: DGAN, table: pd.DataFrame, shuffles: int, seed: int) -> dict:
    encoder, layout = model.encoder, model.data_frame_layout
    encoders = encoder.attribute_encoders or []
    discrete = [i for i, e in enumerate(encoders) if isinstance(e, DiscreteEncoder)]
    if not discrete:
        raise SystemExit("The model has no discrete attribute: no class to swap.")
    table = table.sort_values([layout.example_id_column, layout.time_column])
    groups = table.groupby(layout.example_id_column, sort=True)
    series = [g[list(layout.feature_columns)].to_numpy(np.float64) for _, g in groups]
    attributes = groups[list(layout.attribute_columns)].first().to_numpy(dtype=object)
    data = encoder.transform(series, attributes)
    parts = [
        None if part is None else torch.from_numpy(part)
        for part in (data.attributes, data.additional_attributes, data.features)
    ]
    shares = encoder.class_shares
    attribute = shares.attribute if shares is not None else discrete[0]
    classes = encoder.class_of(attributes, attribute)
    columns = encoder.attribute_slices[attribute]
    one_hot = slice(columns.start, columns.start + columns.width)
    rng = np.random.default_rng(seed)
    critic = model.critic.eval()
    changes = []
    with torch.no_grad():
        scores = critic(*parts).squeeze(1)
        for _ in range(shuffles):
            pairing = rng.permutation(len(classes))
            swapped = parts[0].clone()
            swapped[:, one_hot] = parts[0][torch.from_numpy(pairing), one_hot]
            moved = torch.from_numpy(classes[pairing] != classes)
            changes.append((critic(swapped, *parts[1:]).squeeze(1) - scores)[moved])
    change = torch.cat(changes)
    return {
        "class_attribute": layout.attribute_columns[attribute],
        "score_std": float(scores.std()),
        "mean_change_when_swapped": float(change.mean()),
        "change_std": float(change.std()),
        "swaps": int(change.numel()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("real")
    parser.add_argument("--shuffles", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    model = DGAN.load(args.model)
    print(json.dumps(class_swap(model, pd.read_csv(args.real), args.shuffles, args.seed)))


if __name__ == "__main__":
    main()
