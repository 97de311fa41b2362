"""``python -m harness``: the installed ``harness`` console script (``harness.console:main``), found
through the ``console_scripts`` entry points, so that harness/ never imports the layer above it.

While the package is being reinstalled (``scripts/setup.sh``, ``uv sync`` after a merge), its metadata
is briefly absent: the lookup then waits for it (up to :data:`WAIT_S`). Before, such a moment made any
``python -m harness ...`` (a bench's report step on a finished run) exit 1 with a traceback, and the
same command succeed a minute later (issue 25).
"""
import sys
import time
from importlib.metadata import entry_points

WAIT_S = 30.0
"""How long to wait for the package's metadata to settle (a reinstall under load takes seconds)."""


def find_script(lookup=entry_points, wait_s: float = WAIT_S, pause_s: float = 0.2):
    """The one ``harness`` console-script entry point; waits while there is none or several distinct
    ones. SystemExit (one line, exit 2) when the metadata does not settle."""
    deadline = time.monotonic() + wait_s
    while True:
        found = {ep.value: ep for ep in lookup(group="console_scripts", name="harness")}
        if len(found) == 1:
            return next(iter(found.values()))
        if time.monotonic() >= deadline:
            what = "no" if not found else f"{len(found)} different ({', '.join(sorted(found))})"
            print(f"harness: {what} 'harness' console-script entry point in this environment's metadata after "
                  f"{wait_s:.0f} s; reinstall the package (bash scripts/setup.sh)", file=sys.stderr)
            raise SystemExit(2)
        time.sleep(pause_s)


if __name__ == "__main__":
    sys.exit(find_script().load()())
