"""Differential privacy: DP-SGD on the critics, with Opacus's accounting (docs/privacy.md).

- `accounting`: the noise a planned run needs and the epsilon a run spent (Opacus's RDP
  accountant), kept as JSON in saved models and checkpoints;
- `sampling`: Poisson-sampled batches from secret generators;
- `gradients`: per-example gradients (`torch.func`), clipping, Gaussian noise;
- `critics`: `PrivateTraining`, the critics' private update, which the trainer calls;
- `public`: what a private run takes from the user instead of the data (value ranges,
  categories, the time grid) and the checks that refuse the data's own.
"""
