"""``harness judge serve``: the reference judge as a standalone OpenAI-compatible server."""
from __future__ import annotations

import errno

from harness.cli.run import DEFAULT_CASES, _load
from harness.core.errors import BadInput

NAME = "judge"


def add_parser(sub):
    """Register ``judge`` (and ``judge serve``) on the ``harness`` subparsers; return its parser."""
    jd = sub.add_parser("judge", help="the reference judge as a standalone server")
    jsub = jd.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")
    s = jsub.add_parser("serve", help="serve the reference judge, OpenAI-compatible, on 127.0.0.1")
    s.add_argument("--cases", default=DEFAULT_CASES, help="the case file whose annotations it answers from")
    s.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    s.add_argument("--latency-ms", type=float, default=0.0, help="injected latency per call")
    jd.set_defaults(judge_parser=jd)
    return jd


def run(args) -> int:
    """Serve until interrupted (without a subcommand: the help of ``judge``)."""
    if args.judge_command != "serve":
        args.judge_parser.parse_args(["--help"])
    return cmd_judge_serve(args)


def cmd_judge_serve(args) -> int:

    from harness.judge.gateway import serve_reference  # noqa: PLC0415 - lazy: keeps --help from importing the engine
    from harness.run.checks import port  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    try:
        port(args.port)
    except ValueError as e:
        raise BadInput(str(e)) from None
    cases = _load(args.cases)
    try:
        serve_reference(cases.path, args.port, args.latency_ms)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise BadInput(f"judge serve: port {args.port} on 127.0.0.1 is already in use; "
                           "pick another --port (0: any free port)") from None
        raise BadInput(f"judge serve: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}") from None
    return 0
