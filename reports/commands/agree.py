"""``harness agree RUN [--json]``: agreement of every metric with the human labels of a run's cases
(reads the store, never re-scores; see :mod:`harness.reports.analysis.agreement`)."""
from __future__ import annotations

import json

from harness.core.errors import BadInput
from harness.reports.commands import add_out_argument

NAME = "agree"


def add_parser(sub):
    """Register ``agree`` on the ``harness`` subparsers; return its parser."""
    a = sub.add_parser("agree", help="agreement of every metric with the human labels of a run's cases",
                       description="Per metric: Cohen's kappa, balanced accuracy, precision and recall of "
                                   "'ungrounded' and AUROC against the human labels, with bootstrap 95% intervals "
                                   "and a threshold sweep (reads the store, never re-scores).")
    a.add_argument("run", metavar="RUN", help="a run directory, a store.sqlite path, or a run id under --out")
    add_out_argument(a)
    a.add_argument("--cases", help="the case file to read labels from (default: the cases stored with the run)")
    a.add_argument("--json", action="store_true", help='print {"metrics": {name: {"n", "kappa", "kappa_ci", ...}}}')
    a.add_argument("--labels", help="a labels file of harness review: agreement with the team's own labels, "
                                    "also weighted by each answer's inclusion probability")
    a.add_argument("--reviewers", help="with --labels: the raters whose agreed labels are gold (default: everyone "
                                       "who labelled but the adjudicators)")
    a.add_argument("--adjudicator", help="with --labels: whose labels settle the raters' disagreements (default: "
                                         "those recorded in the labels file by harness review --adjudicator)")
    return a


def run(args) -> int:
    """Print the figures (exit 2 for a run that does not exist)."""
    from harness.reports.analysis import agreement  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.analysis.data import load_run  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.model import agreement_section  # noqa: PLC0415 - lazy: keeps --help from importing the report model

    if args.labels:
        from harness.reports.review import agree as with_labels  # noqa: PLC0415 - lazy: keeps --help from importing the review code

        try:
            return with_labels.run(args)
        except (FileNotFoundError, ValueError) as e:
            raise BadInput(str(e)) from None
    try:
        data = load_run(args.run, args.out, args.cases)
    except (FileNotFoundError, ValueError) as e:
        raise BadInput(str(e)) from None
    results = agreement.compute(data)
    if args.json:
        print(json.dumps(agreement.as_json(data, results), indent=2, sort_keys=True, allow_nan=False))
    else:
        print(agreement_section.terminal(data, results, {m: data.info[m].short_name for m in data.metrics}))
    return 0
