"""Encoding: per-variable encoders (`variables`) and the whole dataset's `encoder`."""
