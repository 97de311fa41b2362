"""``harness export RUN --format jsonl|parquet|mlflow``: a run's tables for other tools (see :mod:`harness.reports.export`).

Only argparse at import time: ``harness --help`` stays instant.
"""
from __future__ import annotations

import os
import sys

from harness.reports.commands import RUN_HELP, add_out_argument, run_as_bad_input


def add_parser(sub):
    """Register the command on the ``harness`` subparsers."""
    x = sub.add_parser("export", help="export a run's tables: jsonl, parquet or an MLflow run",
                       description="Export a run. jsonl/parquet: cells, units and calls tables into --dest. "
                                   "mlflow: one MLflow run (spec as params, per-metric means as metrics, "
                                   "cells table and HTML report as artifacts) into --tracking-dir, unless "
                                   "MLFLOW_TRACKING_URI is set.")
    x.add_argument("run", metavar="RUN", help=RUN_HELP)
    x.add_argument("--format", required=True, choices=["jsonl", "parquet", "mlflow"])
    add_out_argument(x)
    x.add_argument("--dest", help="jsonl/parquet: output directory (default RUN_DIR/export)")
    x.add_argument("--tracking-dir",
                   help="mlflow: local tracking folder when MLFLOW_TRACKING_URI is not set (default OUT/mlruns)")
    x.add_argument("--experiment", default="groundedness-harness", help="mlflow: experiment name")
    return x


def run(args) -> int:
    """Run the command; bad input (no such run, a malformed option) raises BadInput (exit 2)."""
    return run_as_bad_input(_run, args)


def _run(args) -> int:
    from harness.reports import export  # noqa: PLC0415 - lazy: keeps --help from importing the exports
    from harness.reports.analysis import mlflow_rows  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.analysis.data import resolve_store  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis

    if args.dest and os.path.exists(args.dest) and not os.path.isdir(args.dest):
        raise ValueError(f"--dest {args.dest}: is a file; give a directory to write the tables into")
    store = resolve_store(args.run, args.out)
    run_dir = os.path.dirname(os.path.abspath(store))
    try:
        if args.format == "mlflow":
            if not os.path.isfile(os.path.join(run_dir, "index.html")):
                from harness.reports.build import build  # noqa: PLC0415 - lazy: keeps --help from importing the report build

                build(run_dir, run_dir)
            uri, rid, state = export.to_mlflow(run_dir, store, args.tracking_dir or os.path.join(args.out, "mlruns"),
                                       args.experiment)
            print(f"mlflow: run {rid} ({state}) in experiment {args.experiment!r} at {uri}: one row per case and "
                  f"metric in {mlflow_rows.ROWS_FILE} (the run's Evaluation / table view)")
            return 0
        dest = args.dest or os.path.join(run_dir, "export")
        write = export.to_jsonl if args.format == "jsonl" else export.to_parquet
        for path in write(store, dest):
            print(f"{args.format}: {path}")
    except RuntimeError as e:   # a missing optional extra
        print(f"harness: {e}", file=sys.stderr)
        return 2
    except OSError as e:        # a run directory (or --dest) that cannot be written
        where = e.filename or args.dest or run_dir
        raise ValueError(f"cannot write the export to {where}: {e.strerror or e}; "
                         "pass --dest DIR (or --tracking-dir for mlflow) to write it elsewhere") from None
    return 0
