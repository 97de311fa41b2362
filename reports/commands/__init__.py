"""One module per ``harness`` subcommand that needs reports/ (``report``, ``cards``, ``check``,
``compare``, ``export``): ``add_parser(sub)`` and ``run(args)``; and ``run_report``, the report step
that extends ``harness run``. Composed into the command line by the module ``harness.console`` (harness_cli.py at the top)."""

from harness.core.errors import BadInput

RUN_HELP = "a run directory, a store.sqlite path, or a run id under --out"
"""Help text of a RUN argument (resolved by :func:`harness.reports.analysis.data.load_run`)."""


def add_out_argument(parser) -> None:
    """The ``--out`` option every command that takes a RUN shares."""
    parser.add_argument("--out", default="reports/out", help="where run ids are looked up (default reports/out)")


def run_as_bad_input(body, args) -> int:
    """``body(args)``, with a missing run or a malformed option turned into BadInput (exit 2, one line)."""
    try:
        return body(args)
    except (FileNotFoundError, ValueError) as e:
        raise BadInput(str(e)) from None
