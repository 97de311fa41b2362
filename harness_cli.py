"""The ``harness`` command line, composed at the top (the console script ``harness``).

This is the one module that sees every layer: it lists the subcommands (one module each, with
``NAME``, ``add_parser(sub)`` and ``run(args) -> int``) and the extensions of a command (``EXTENDS``,
``add_arguments(parser)``, ``check(args)``, ``after(args, outcome)``), so that harness/ imports
neither reports/ nor adapters/. It also gives ``harness.evaluate`` (the package's public name) its report
builder: :func:`harness.api.evaluate` with reports/' build registered. Only argparse and the command modules (which import nothing heavy at
module level) are imported at start-up: ``--help`` stays instant.

Exit codes: 0 done; 1 the run finished but some cells errored (or the run itself failed);
2 bad input (a case file, a metric name, an option).
"""
from __future__ import annotations

import argparse
import sys
from importlib import metadata

from harness import api
from harness.cases.importers import cli as import_
from harness.cli import judge, metrics, perturb, run, validate
from harness.core.errors import BadInput
from harness.core.redact import ScrubbingStream
from harness.metric.vendor_env import quiet_vendors
from harness.reports.commands import agree, calibrate, cards, check, compare, export, report, review, run_report

COMMANDS = (run, metrics, report, review, agree, calibrate, cards, check, compare, export, import_, validate, perturb,
            judge)
"""Subcommands, in the order ``--help`` lists them (each module's ``NAME``, else its module name).
Adding one: a module, and an entry here."""
EXTENSIONS = (run_report,)
"""Modules that extend another command (``EXTENDS`` names it)."""


def build_report(run_dir: str, threshold: float | None = None) -> str:
    """``harness.evaluate``'s report (``report=True``): reports/' build of the run, in place; its HTML path."""
    from harness.reports.build import report_for_run  # noqa: PLC0415 - lazy: keeps --help from importing the report build

    return report_for_run(run_dir, threshold)


api.use_report_builder(build_report)
evaluate = api.evaluate
"""``harness.evaluate``: the engine's :func:`harness.api.evaluate`, with the report builder above registered."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="harness",
        description="Run Ragas, DeepEval and TruLens groundedness metrics and an in-house span scorer "
                    "on the same annotated cases, through one judge, and show where they diverge.")
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    parsers = {}
    for command in COMMANDS:
        name = getattr(command, "NAME", command.__name__.rpartition(".")[2])
        parsers[name] = command.add_parser(sub)
        parsers[name].set_defaults(handler=command.run, extensions=())
    for ext in EXTENSIONS:
        ext.add_arguments(parsers[ext.EXTENDS])
    for name in parsers:
        exts = tuple(e for e in EXTENSIONS if e.EXTENDS == name)
        if exts:
            parsers[name].set_defaults(extensions=exts)
    return p


def version() -> str:
    """The installed package's version (the source tree's when it is not installed)."""

    try:
        return metadata.version("groundedness-harness")
    except metadata.PackageNotFoundError:
        from harness import __version__  # noqa: PLC0415 - lazy: read only when the package is not installed

        return __version__


def main(argv: list[str] | None = None) -> int:
    """The CLI; everything it prints (and every library it drives prints) passes the secret scrubber."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(sys.stdout), ScrubbingStream(sys.stderr)
    try:
        # the command's process is the harness's own: the vendor switches hold to its very end (a vendor's exit
        # hook, such as DeepEval's telemetry flush, reads them after main returns), and its workers inherit them
        quiet_vendors()
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = saved


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.handler(args)
    except BadInput as e:
        print(f"harness: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("harness: interrupted; finished cells are kept, rerun with the same --run-id to resume",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
