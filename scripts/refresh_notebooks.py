"""Execute the notebooks in notebooks/ and store their outputs in place: the one way to refresh them.

    .venv/bin/python scripts/refresh_notebooks.py                  # every notebook
    .venv/bin/python scripts/refresh_notebooks.py choose_a_metric  # some of them (names, .ipynb optional)
    .venv/bin/python scripts/refresh_notebooks.py --run DIR        # reuse DIR, a run of the canonical set
    .venv/bin/python scripts/refresh_notebooks.py --own-runs       # each notebook makes its own run

Each notebook runs top to bottom in a fresh Jupyter kernel started in notebooks/ (where Jupyter starts
when a user opens it), offline, with the reference judge. The notebooks that read a run of the canonical
set (``HARNESS_RUN``: choose_a_metric, trust_each_metric) share one ``harness run`` of it, made here
first, as tests/cli/test_notebooks.py does; their outputs are the same as with a run of their own
(``--own-runs`` makes those, as a user opening them would). The stored notebook keeps the outputs and
execution counts; the per-cell execution timestamps nbclient adds are dropped so that a refresh with the
same results changes nothing but what a run really changes. tests/cli/test_notebooks.py checks that the
stored outputs match a fresh run's (:func:`meaningful`).
"""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")

VOLATILE = [
    (re.compile(r"/(?:tmp|var/folders)/[^\s'\")\]]*"), "<path>"),        # temporary run folders
    (re.compile(re.escape(ROOT)), "<root>"),                              # the clone, wherever it is
    (re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{4,}\b"), "<run-id>"),            # generated run ids
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"), "<time>"),              # timings
    (re.compile(r"0x[0-9a-f]{6,}"), "<address>"),                         # object addresses in reprs
]
"""What may differ between two runs with the same results, and what it is replaced by for comparing."""


def names(args: list[str]) -> list[str]:
    """The notebooks to execute: the given names (``.ipynb`` optional), or all of notebooks/."""
    every = sorted(f for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb"))
    if not args:
        return every
    chosen = [a if a.endswith(".ipynb") else f"{a}.ipynb" for a in args]
    unknown = [c for c in chosen if c not in every]
    if unknown:
        raise SystemExit(f"refresh_notebooks: no notebook {', '.join(unknown)}; known: {', '.join(every)}")
    return chosen


def execute(name: str, env: dict | None = None, timeout: int = 900):
    """Run notebooks/NAME in a new kernel started in notebooks/; the executed notebook (not written).
    ``env``: extra environment variables for the kernel (the tests pass ``HARNESS_RUN`` to share a run)."""
    import nbformat  # noqa: PLC0415 - lazy: dev group
    from nbclient import NotebookClient  # noqa: PLC0415 - lazy: dev group

    nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})      # the kernel inherits this process's environment
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": NOTEBOOKS}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for cell in nb.cells:
        cell.metadata.pop("execution", None)   # nbclient's timestamps: they change on every run
    return nb


def normalise(text: str) -> str:
    """``text`` with paths, run ids, timings and addresses replaced by placeholders.

    >>> normalise("run 20261201-190301-ab12cd in /tmp/choose-x1/canonical took 3.2 s")
    'run <run-id> in <path> took <time>'
    """
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


def meaningful(nb) -> list[list[str]]:
    """Per code cell, its outputs a reader reads, normalised: stdout, the plain-text form of results and
    displays, and errors. Left out: stderr (vendor warnings), images and HTML (the plain text says the same)."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "stream" and o.get("name") == "stdout":
                texts.append(o.get("text", ""))
            elif kind in ("execute_result", "display_data") and "text/plain" in o.get("data", {}):
                if not any(k.startswith("image/") for k in o["data"]):
                    texts.append(o["data"]["text/plain"])
            elif kind == "error":
                texts.append(f"{o.get('ename')}: {o.get('evalue')}")
        out.append([normalise(t) for t in texts])
    return out


def canonical_run(out: str) -> str:
    """``harness run`` of the canonical set, every metric, the reference judge, into ``out``; its run folder."""
    import subprocess  # noqa: PLC0415

    cmd = [sys.executable, "-m", "harness", "run", "--run-id", "canonical", "--out", out, "--no-progress",
           "--no-report"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    run = os.path.join(out, "canonical")
    if r.returncode not in (0, 1) or not os.path.isfile(os.path.join(run, "store.sqlite")):
        raise SystemExit(f"refresh_notebooks: the canonical run failed ({r.returncode}): {r.stderr[-2000:]}")
    return run


def main(argv: list[str]) -> int:
    import argparse  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    import nbformat  # noqa: PLC0415 - lazy: dev group

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="notebooks to refresh (default: all)")
    ap.add_argument("--run", help="an existing run folder of the canonical set to share (default: one made here)")
    ap.add_argument("--own-runs", action="store_true", help="each notebook makes its own run, as a user's would")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds a cell may take (default 1800)")
    a = ap.parse_args(argv)
    chosen = names(a.names)
    env = {}
    if not a.own_runs:
        run = a.run or canonical_run(tempfile.mkdtemp(prefix="refresh-notebooks-"))
        env = {"HARNESS_RUN": os.path.abspath(run)}
    for name in chosen:
        print(f"refresh_notebooks: executing {name} ...", flush=True)
        nb = execute(name, env, a.timeout)
        nbformat.write(nb, os.path.join(NOTEBOOKS, name))
        print(f"refresh_notebooks: {name}: outputs stored", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
