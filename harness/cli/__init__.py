"""The engine's subcommands, one module each: ``NAME``, ``add_parser(sub) -> parser`` and
``run(args) -> int``. The command line is composed from them (and from ``harness.reports.commands``) by the
module ``harness.console`` (harness_cli.py at the top); nothing here imports reports/ or adapters/."""
