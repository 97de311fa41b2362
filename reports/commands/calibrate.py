"""``harness calibrate RUN --labels L --target 0.9 --delta 0.1 --stages a,b,c --out FILE``: choose each
cascade stage's confidence threshold on labelled answers with a finite-sample guarantee, write the cascade
(for ``harness run --cascade FILE``) and its card (``FILE.md``), and report it on held-out labels (reads the
store, never re-scores; see :mod:`harness.reports.analysis.cascade_calibration`)."""
from __future__ import annotations

from harness.cases.load import CaseFileError, load_cases
from harness.core.errors import BadInput
from harness.reports.commands import RUN_HELP, run_as_bad_input

NAME = "calibrate"


def add_parser(sub):
    """Register ``calibrate`` on the ``harness`` subparsers; return its parser."""
    p = sub.add_parser("calibrate", help="calibrate a cascade of metrics on labelled answers (a guaranteed agreement)",
                       description="Choose each stage's confidence threshold on the labelled answers of a run so "
                                   "that, with probability >= 1 - delta, the verdicts the stages keep agree with the "
                                   "labels at least at the target (fixed-sequence testing, exact binomial tests); "
                                   "write the cascade file and its card; report coverage, held-out agreement, cost "
                                   "saved against the strongest stage, and the share left to a person.")
    p.add_argument("run", metavar="RUN", help=RUN_HELP + "; it must have scored every stage on the labelled cases")
    p.add_argument("--runs-out", default="reports/out", help="where run ids are looked up (default reports/out)")
    p.add_argument("--labels", required=True, help="a case file with human labels (annotated cases; the RAGTruth "
                                                   "and FaithBench imports carry them)")
    p.add_argument("--stages", required=True,
                   help="metrics in order, cheapest first, e.g. baseline.similarity,nli.minicheck,inhouse.span; "
                        "METRIC@T sets the verdict threshold (grounded at score >= T; default the top of its range)")
    p.add_argument("--target", type=float, default=0.9, help="agreement to keep (default 0.9)")
    p.add_argument("--delta", type=float, default=0.1, help="allowed chance of missing it (default 0.1)")
    p.add_argument("--holdout", type=float, default=0.5,
                   help="share of the labelled answers held out for the report, not calibrated on (default 0.5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the calibration / held-out split (default 0)")
    p.add_argument("--label-target", default="hallucinated", choices=["hallucinated", "not_attributable"],
                   help="what a label of 'ungrounded' means (default hallucinated: some claim not_found or "
                        "contradicted)")
    p.add_argument("--out", required=True, metavar="FILE", help="the cascade file to write (its card: FILE.md)")
    return p


def run(args) -> int:
    return run_as_bad_input(_run, args)


def _run(args) -> int:
    from harness.reports.analysis.cascade_calibration import calibrate_run, labels_of, parse_stages  # noqa: PLC0415 - lazy
    from harness.reports.analysis.data import resolve_store  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.cards.cascade import card, report_lines  # noqa: PLC0415 - lazy
    from harness.run.cascade_file import dump  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    for flag, v in (("--target", args.target), ("--delta", args.delta)):
        if not 0.0 < v < 1.0:
            raise BadInput(f"{flag} must be between 0 and 1 (exclusive), got {v}")
    if not 0.0 <= args.holdout < 1.0:
        raise BadInput(f"--holdout must be in [0, 1), got {args.holdout}")
    stages = parse_stages(args.stages)   # each a metric of the run: calibrate_run checks it against the store
    store = resolve_store(args.run, args.runs_out)
    try:
        cases = load_cases(args.labels)
    except CaseFileError as e:
        raise BadInput(f"--labels: {str(e).splitlines()[0]}") from None
    labels = labels_of(cases, args.label_target)
    if not labels:
        raise BadInput(f"--labels {args.labels}: no case carries human labels (an annotation)")
    result = calibrate_run(store, labels, stages, args.target, args.delta, args.holdout, args.seed, args.label_target)
    try:
        dump(result.cascade, args.out)
        with open(args.out + ".md", "w", encoding="utf-8") as fh:
            fh.write(card(result, args.out))
    except OSError as e:
        raise BadInput(f"{args.out}: cannot write: {e.strerror or e}") from None
    print("\n".join(report_lines(result)))
    print(f"cascade: {args.out}   card: {args.out}.md   use: harness run --cascade {args.out} --cases NEW_CASES")
    return 0
