"""``harness metrics``: the registered metrics, in display order, each marked when its vendor is not
installed (found on the path or not: no vendor is imported). ``--probe`` imports the vendors too, each in a
subprocess of its own with the vendor switches forced first, and marks a metric whose vendor is installed but
fails to import, with the reason (a missing dependency, a broken install, an incompatible version)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from harness.metric import registry
from harness.metric.vendor_env import forced

NAME = "metrics"

PROBE_TIMEOUT_S = 600.0
"""The longest one vendor's import may take in a probe (they take 1-8 s of CPU each, alone)."""

PROBE = """
import json, sys
from harness.metric import registry
name = sys.argv[1]
try:
    registry.get(name).prepare()
except BaseException as e:
    msg = " ".join(str(e).split())
    print(json.dumps(f"{type(e).__name__}: {msg}"[:300]))
else:
    print(json.dumps(None))
"""
"""Run in each probe's subprocess: the metric's own ``prepare`` (the vendor imports a run's worker makes)."""


def add_parser(sub):
    """Register ``metrics`` on the ``harness`` subparsers; return its parser."""
    p = sub.add_parser("metrics", help="list the registered metrics")
    p.add_argument("--probe", nargs="?", const="all", metavar="METRICS",
                   help="also import each metric's vendor (every metric, or those named: names or vendor prefixes, "
                        "comma-separated), each in a subprocess with telemetry off, and mark one whose import fails, "
                        "with the reason; without it nothing is imported, only whether the package is installed")
    return p


def run(args) -> int:
    """One line per metric: name, version, display name and unit; why it is unavailable, if it is."""
    from harness.metric.extras import missing_vendor  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    names = registry.names()
    missing = {name: missing_vendor(registry.get(name)) for name in names}
    probe = getattr(args, "probe", None)
    failed = probe_imports([n for n in registry.resolve(probe) if not missing[n]]) if probe else {}
    for name in names:
        cls = registry.get(name)
        why = missing[name] or (f"importing its vendor failed: {failed[name]}" if failed.get(name) else None)
        state = f"  [unavailable: {why}]" if why else ""
        print(f"{name:36} v{cls.version:4} {cls.display_name} (unit: {cls.unit}){state}")
    for name, how in registry.apart().items():   # vendors that install in an environment of their own
        print(f"{name:36} [installs alone, not in this environment: {how}]")
    if probe:
        print(f"probe: imported the vendor of {len(failed)} metric(s), {sum(1 for v in failed.values() if v)} failed; "
              "the others were checked for being installed only")
    return 0


def probe_imports(names: list[str]) -> dict[str, str | None]:
    """Import the vendor of each metric in ``names`` that has one (its class's ``prepare``), each metric in a fresh
    subprocess with the vendor switches forced (telemetry off, no dotenv) and ``sys.path`` this process's, a few at a
    time: metric -> None when it imported, else the reason (the exception, or how the subprocess ended)."""
    todo = [n for n in names if callable(getattr(registry.get(n), "prepare", None))]
    env = {**os.environ, **forced(), "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}

    def one(name: str) -> str | None:
        try:
            p = subprocess.run([sys.executable, "-c", PROBE, name], env=env, capture_output=True, text=True,
                               timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"the import did not finish in {PROBE_TIMEOUT_S:g} s"
        lines = p.stdout.strip().splitlines()
        try:
            got = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError:
            got = lines[-1][:300]
        if p.returncode != 0 or not lines:   # the interpreter itself went down (a crash in a C extension)
            tail = " ".join(p.stderr.strip().splitlines()[-1:])[:200]
            return got or f"the importing process ended with exit code {p.returncode}" + (f": {tail}" if tail else "")
        return got

    with ThreadPoolExecutor(max_workers=max(1, min(len(todo), os.cpu_count() or 1))) as pool:
        return dict(zip(todo, pool.map(one, todo)))
