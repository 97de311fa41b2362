"""One module per ``harness`` subcommand that needs reports/ (``report``, ``cards``, ``check``,
``compare``, ``export``): ``add_parser(sub)`` and ``run(args)``; and ``run_report``, the report step
that extends ``harness run``. Composed into the command line by the top-level module ``harness_cli``."""
