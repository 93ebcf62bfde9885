"""Training: the `trainer` (step and epoch loop), its `batch` and `losses`, the divergence
`guard`, `memory` checks and training with several processes (`distributed`)."""
