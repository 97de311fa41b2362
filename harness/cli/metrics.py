"""``harness metrics``: the registered metrics, in display order, each marked when its vendor is not
installed (no vendor is imported)."""
from __future__ import annotations

NAME = "metrics"


def add_parser(sub):
    """Register ``metrics`` on the ``harness`` subparsers; return its parser."""
    return sub.add_parser("metrics", help="list the registered metrics")


def run(args) -> int:
    """One line per metric: name, version, display name and unit."""
    from harness.metric import registry  # noqa: PLC0415 - lazy: keeps --help from importing the engine
    from harness.metric.extras import missing_vendor  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    for name in registry.names():
        cls = registry.get(name)
        missing = missing_vendor(cls)
        state = f"  [unavailable: {missing}]" if missing else ""
        print(f"{name:36} v{cls.version:4} {cls.display_name} (unit: {cls.unit}){state}")
    for name, how in registry.apart().items():   # vendors that install in an environment of their own
        print(f"{name:36} [installs alone, not in this environment: {how}]")
    return 0
