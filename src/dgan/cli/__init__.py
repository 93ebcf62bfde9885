"""The ``dgan`` command line. Nothing heavy is imported here: `launch` sets OpenMP's wait
policy before torch loads, then `main` parses and `commands` runs each command."""
