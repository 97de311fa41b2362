"""``harness check RUN [--min M=V] [--max M=V] [--min-case M=V] [--max-case M=V] [--baseline RUN --max-drop D] [--max-errors N] [--junit PATH]``:
a CI gate on a finished run (per metric, per case, against a baseline run).

Exit codes: 0 every criterion holds; 1 a criterion fails; 2 bad input. See :mod:`harness.reports.analysis.gate`.
Only argparse at import time: ``harness --help`` stays instant.
"""
from __future__ import annotations

import os

from harness.reports.commands import RUN_HELP, add_out_argument, run_as_bad_input


def add_parser(sub):
    """Register the command on the ``harness`` subparsers."""
    c = sub.add_parser("check", help="CI gate: fail (exit 1) when a run is below a threshold",
                       description="Check a finished run against thresholds. Exit codes: 0 every criterion "
                                   "holds; 1 a criterion fails; 2 bad input (no such run, a malformed "
                                   "criterion, a metric the run does not have, --min on a metric whose "
                                   "lower score is better or --max on one whose higher score is).")
    c.add_argument("run", metavar="RUN", help=RUN_HELP)
    c.add_argument("--min", action="append", default=[], metavar="METRIC=VALUE",
                   help="the metric's mean over its scored cells must be at least VALUE (repeatable)")
    c.add_argument("--max", action="append", default=[], metavar="METRIC=VALUE",
                   help="for a metric whose lower score is better (opik.hallucination): its mean over its scored "
                        "cells must be at most VALUE (repeatable)")
    c.add_argument("--min-case", action="append", default=[], metavar="METRIC=VALUE",
                   help="every case's score on the metric must be at least VALUE; an errored cell fails, a cell "
                        "that is not a score is skipped (repeatable; one JUnit test case per case and metric)")
    c.add_argument("--max-case", action="append", default=[], metavar="METRIC=VALUE",
                   help="as --min-case, for a metric whose lower score is better: every case's score at most VALUE")
    c.add_argument("--baseline", metavar="RUN",
                   help="fail a metric whose mean fell against this run by more than --max-drop, with the paired "
                        "bootstrap 95%% interval of the change below zero (cases both runs scored, paired; a rise of a "
                        "lower-is-better score is a drop)")
    c.add_argument("--max-drop", type=float, default=0.05, metavar="D",
                   help="with --baseline: the largest mean drop allowed, as a share of the metric's range "
                        "(default 0.05)")
    c.add_argument("--allow-setup-change", action="store_true",
                   help="with --baseline: compare even when the baseline ran with another judge, metric version, "
                        "metric argument, vendor version or with injected faults (refused by default: a score "
                        "change from the setup alone is not a regression)")
    c.add_argument("--max-errors", type=int, metavar="N", help="at most N cells may have errored")
    c.add_argument("--junit", metavar="PATH", help="also write the result as JUnit XML to PATH")
    add_out_argument(c)
    return c


def run(args) -> int:
    """Run the command; bad input (no such run, a malformed option) raises BadInput (exit 2)."""
    return run_as_bad_input(_run, args)


def _run(args) -> int:
    from harness.reports.analysis.data import load_run  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.analysis.gate import check, junit_xml, lines, parse_min  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.analysis.gate_cases import against_baseline, parse_min_case, per_case, setup_changes  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis

    minimums = [parse_min(item) for item in args.min]
    maximums = [parse_min(item, "--max") for item in args.max]
    case_minimums = [parse_min_case(item) for item in args.min_case]
    case_maximums = [parse_min(item, "--max-case") for item in args.max_case]
    if args.max_errors is not None and args.max_errors < 0:
        raise ValueError("--max-errors must be 0 or more")
    if not (minimums or maximums or case_minimums or case_maximums) and args.baseline is None \
            and args.max_errors is None:
        raise ValueError("nothing to check: give --min/--max METRIC=VALUE, --min-case/--max-case METRIC=VALUE, "
                         "--baseline RUN and/or --max-errors N")
    if args.junit and os.path.isdir(args.junit):
        raise ValueError(f"--junit {args.junit}: is a directory; give the path of the XML file to write")
    data = load_run(args.run, args.out)
    baseline = load_run(args.baseline, args.out) if args.baseline is not None else None
    outcomes = check(data, minimums, args.max_errors, maximums) + per_case(data, case_minimums, case_maximums)
    if baseline is not None:
        changes = setup_changes(data, baseline)
        if changes and not args.allow_setup_change:
            raise ValueError(f"--baseline {baseline.run_id} ran with another setup than {data.run_id}: "
                             + "; ".join(changes) + " (a score change from these alone is not a regression; "
                             "--allow-setup-change compares anyway)")
        for change in changes:
            print(f"baseline setup differs (--allow-setup-change): {change}")
        outcomes += against_baseline(data, baseline, args.max_drop)
    print("\n".join(lines(outcomes)))
    if args.junit:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(args.junit)), exist_ok=True)
            with open(args.junit, "w", encoding="utf-8") as fh:
                fh.write(junit_xml(data.run_id, outcomes))
        except OSError as e:
            raise ValueError(f"--junit {args.junit}: cannot write it ({e.strerror or e})") from None
        print(f"junit: {args.junit}")
    failed = sum(not o.ok for o in outcomes)
    skipped = sum(o.skipped for o in outcomes)
    print(f"check: {'FAILED' if failed else 'passed'} ({len(outcomes) - failed - skipped}/{len(outcomes)} criteria "
          f"hold" + (f", {skipped} skipped: not a score" if skipped else "") + ")")
    return 1 if failed else 0
