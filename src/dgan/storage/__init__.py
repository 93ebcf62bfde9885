"""Files: the model file `format` (safetensors + JSON, never pickle), its `schema`, what a
saved model holds (`model_file`) and training checkpoints (`checkpoint`)."""
