"""DoppelGANger's networks: the generator (`generator`: attribute MLPs and an LSTM that
emits ``sample_len`` steps at a time, and the carrier it draws steady waves on:
`carrier`) and the Wasserstein critics (`critics`), the layers
they share (`layers`), and the networks of a model built from its config (`build`)."""

from dgan.networks.build import build_model_networks, build_networks
from dgan.networks.critics import Critic, EnvelopeCritic, TemporalCritic
from dgan.networks.generator import Generator, even_input_lstm
from dgan.networks.layers import OutputActivation

__all__ = [
    "Critic",
    "EnvelopeCritic",
    "Generator",
    "OutputActivation",
    "TemporalCritic",
    "build_model_networks",
    "build_networks",
    "even_input_lstm",
]
