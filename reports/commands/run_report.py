"""The report step of ``harness run``: an extension of the ``run`` command (``EXTENDS``) that adds
``--divergence-threshold`` and ``--labels``, checks them before the run starts, and builds the report
afterwards."""
from __future__ import annotations

import sys

from harness.cases.load import CaseFileError, load_cases
from harness.core.errors import BadInput
from harness.reports.analysis.divergence import DEFAULT_THRESHOLD
from harness.reports.commands.report import check_threshold, print_labels, print_top, reviewer_list

EXTENDS = "run"


def add_arguments(parser) -> None:
    """Add the report's options to ``harness run``."""
    parser.add_argument("--divergence-threshold", type=float, default=DEFAULT_THRESHOLD,
                        help=f"report: smallest score spread that counts as a divergence (default {DEFAULT_THRESHOLD})")
    parser.add_argument("--labels", metavar="L",
                        help="report: the team's labels (a labels file of harness review, or annotated cases) "
                             "for agreement and the decision table, in place of the cases' own annotations")
    parser.add_argument("--reviewers", help="report, with a labels file: whose labels count, first finished wins")
    parser.add_argument("--no-report", action="store_true",
                        help="do not build the report now ('harness report RUN' builds it from the store later)")


def check(args) -> None:
    """Before the run: a threshold outside [0, 1] is bad input."""
    try:
        check_threshold(args.divergence_threshold)
        if getattr(args, "labels", None):
            check_labels(args)
    except ValueError as e:
        raise BadInput(str(e)) from None


def check_labels(args) -> None:
    """``--labels`` usable, and about the answers of ``--cases`` (when that file loads; the run says why not)."""
    from harness.reports.review import team  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    if args.no_report:
        raise ValueError("--labels goes into the report: leave out --no-report (or pass it to harness report later)")
    team.check_file(args.labels, reviewer_list(args))
    try:
        cases = {c.id: c for c in load_cases(args.cases)}
    except CaseFileError:
        return
    team.load(args.labels, cases, args.cases, reviewer_list(args))


def after(args, outcome) -> int:
    """After the run: build its report (unless ``--no-report``); 1 if it could not be built."""
    if getattr(args, "no_report", False):
        return 0
    return report_after_run(outcome.run_dir, args.divergence_threshold, getattr(args, "labels", None),
                            reviewer_list(args))


def report_after_run(run_dir: str, threshold: float, labels: str | None = None,
                     reviewers: list[str] | None = None) -> int:
    """Build the report at the end of ``harness run``; print its path and the top divergences."""
    from harness.reports.build import build  # noqa: PLC0415 - lazy: keeps --help from importing the report build
    try:
        built = build(run_dir, run_dir, check_threshold(threshold), labels=labels, reviewers=reviewers)
    except Exception as e:  # noqa: BLE001 - the run is kept; say why the report is missing
        print(f"report: not built ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    print(f"report: {built.html_path}")
    print_labels(built)
    print_top(built)
    return 0
