"""The run layer: the runner, cell scoring, the cell cache, workers and Ray, the run spec and directory.

Imports every lower layer (core, metric, cases, judge, store); imported only by the CLI and the API."""
