"""Bridges from other tuning libraries to xbo (each imports its library
lazily: ``import xbo`` never needs them)."""
