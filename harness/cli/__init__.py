"""The engine's subcommands, one module each: ``NAME``, ``add_parser(sub) -> parser`` and
``run(args) -> int``. The command line is composed from them (and from ``reports.commands``) by the
top-level module ``harness_cli``; nothing here imports reports/ or adapters/."""
