"""One module per ``harness`` subcommand that reads run stores: ``add_parser(sub)`` and ``run(args)``."""
