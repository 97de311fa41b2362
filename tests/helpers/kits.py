"""The vendors' test kits: each vendor's folder (``adapters/<vendor>/``, or a third party's package) keeps what
the test suite needs of it in ``kit/``, found through the metrics' entry points, so adding a vendor touches its
folder only:

- ``kit/realistic.py``: the realistic test judge's handler (``ORDER``, ``answer(messages, rng, quotes)``, and
  optionally ``logprobs(messages, body)``), found by :mod:`tests.helpers.judges.realistic`;
- ``kit/parity.py``: ``RULES``, the allowed differences of the strict stock-parity test
  (:class:`tests.helpers.parity.Allowed`), collected into :data:`tests.vendors.test_stock_parity.ALLOWED`;
- ``kit/stock.py``: the vendor's own documented usage, a standalone script run by ``tests/helpers/stock_common.py``
  (``MODULE``, ``METRICS``, ``score(url, model, cases)``), found by ``tests/vendors/test_stock_parity_more.py``;
- ``kit/test_*.py``: its offline tests, collected by pytest under ``harness/adapters/<vendor>/kit/``.

The vendor's switches (``switches.py``, beside its modules) are the harness's own business
(:mod:`harness.metric.vendor_env`). Kits are test code: the wheel does not ship them (``pyproject.toml``).
"""
from __future__ import annotations

import os
import shutil
import sys

from harness.metric import registry

HERE = os.path.dirname(os.path.abspath(__file__))


def parts(name: str) -> dict:
    """vendor folder (e.g. ``harness.adapters.ragas``) -> its module ``kit.<name>``, for each vendor that has one."""
    out = {}
    for folder in registry.folders():
        mod = registry.folder_part(folder, f"kit.{name}")
        if mod is not None:
            out[folder] = mod
    return out


def stock_argv(vendor: str, work) -> list[str]:
    """The command that runs ``vendor``'s stock script (its folder's ``kit/stock.py``; ``MODEL CASES.json
    [METRIC=]BASE_URL ...`` follow), the script and its runner (``tests/helpers/stock_common.py``) copied into the folder
    ``work`` first: they run there as a user's scripts would, importing nothing of the project."""
    script = next(m for f, m in parts("stock").items() if f.rpartition(".")[2] == vendor)
    runner = shutil.copy(os.path.join(HERE, "stock_common.py"), work)
    return [sys.executable, runner, shutil.copy(script.__file__, os.path.join(work, "stock.py"))]
