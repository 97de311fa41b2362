"""Vendor switches set before any vendor import: telemetry off, no dotenv, no hub downloads.

They are in force wherever the harness works and nowhere else: a process the harness owns (the ``harness``
command, its workers, its Ray actors, the test suite) sets them for its whole life with
:func:`quiet_vendors`; inside a team's own process (a notebook, a pytest session with the plugin),
:func:`switches` sets them for the length of one harness call (``harness.evaluate``) and puts the caller's
values back after. Importing ``harness`` or loading its pytest plugin changes no environment variable.
Values are forced, not defaulted: a user's environment cannot turn telemetry back on in a run.
"""
from __future__ import annotations

import contextlib
import os
import threading

from harness.metric import registry

COMMON = {
    # Libraries under several vendors. LangChain / LangSmith tracing.
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING": "false",
    # No model or data hubs (the vendors' and the harness's own embedded model).
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
"""The switches no one vendor owns; each vendor's own are ``SWITCHES`` in its folder's ``switches.py``."""


def forced() -> dict[str, str]:
    """Every switch: :data:`COMMON` and each installed vendor's ``switches.py`` (``SWITCHES``, a dict of
    variable -> value), found from the metrics' entry points (:func:`harness.metric.registry.folders`) without
    importing any vendor code. Two vendors forcing one variable to different values is an error.

    >>> forced()["RAGAS_DO_NOT_TRACK"], forced()["HF_HUB_OFFLINE"]
    ('true', '1')
    """
    out, owner = dict(COMMON), dict.fromkeys(COMMON, "harness.metric.vendor_env")
    for folder in registry.folders():
        mod = registry.folder_part(folder, "switches")
        for k, v in (getattr(mod, "SWITCHES", None) or {}).items():
            if out.get(k, v) != v:
                raise ValueError(f"vendor switch {k}: {owner[k]} forces {out[k]!r}, {folder}.switches {v!r}")
            out[k], owner[k] = v, f"{folder}.switches"
    return out


def quiet_vendors() -> None:
    """Force the switches (:func:`forced`) into ``os.environ`` for the rest of this process (a process the harness owns)."""
    os.environ.update(forced())


_held = 0
_saved: dict[str, str] = {}
_held_lock = threading.Lock()
_on_leave: list = []


def on_leave(hook) -> None:
    """Call ``hook()`` when the outermost :func:`switches` block ends, before the caller's environment comes back:
    a vendor that reads a switch later (an exit hook) is put in a state that needs none (a named shim)."""
    if hook not in _on_leave:
        _on_leave.append(hook)


@contextlib.contextmanager
def switches():
    """The switches in ``os.environ`` while the block runs (a harness call inside a team's own process);
    on leaving the outermost block the environment is the caller's again, whole: the switches, and whatever a
    vendor's import or the harness's own relays set meanwhile (grpc's GRPC_VERBOSITY at DeepEval's import,
    MLflow's OPENAI_API_BASE), are put back to the caller's value or unset.
    Nested and concurrent blocks share one saved copy: the last to leave restores it."""
    global _held
    with _held_lock:
        if _held == 0:
            _saved.clear()
            _saved.update(os.environ)
            os.environ.update(forced())
        _held += 1
    try:
        yield
    finally:
        with _held_lock:
            _held -= 1
            if _held == 0:
                for hook in list(_on_leave):
                    hook()
                for k in [k for k in os.environ if k not in _saved]:
                    del os.environ[k]
                for k, v in _saved.items():
                    if os.environ.get(k) != v:
                        os.environ[k] = v


IMPORT_LOCK = threading.RLock()
"""Held while a process imports a vendor stack (the worker's import thread) or the embedded model's
packages: two threads importing the same C extension at once (numpy, under a vendor stack and under
the embedded model, whose cells run while the vendors import) can leave it half initialised, and
every later import of it fails ("cannot import name ... from partially initialized module")."""
