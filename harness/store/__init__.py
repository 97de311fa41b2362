"""The store layer: one SQLite run store per run, and the score table read from it."""
from harness.store.runstore import RunStore, StoreWriteError

__all__ = ["RunStore", "StoreWriteError"]
