"""MLflow's way into the run's gateway: the process's authenticated loopback face
(:mod:`harness.judge.loopback`), pointed at by MLflow's environment for the length of each cell.

MLflow's ``openai:/<model>`` judges post with ``requests.post`` to the base URL they read from the
process environment (``OPENAI_API_BASE``, else ``OPENAI_BASE_URL``) on every call; they cannot be
handed the run's ``httpx`` client, and a run's gateway answers in-process, with no socket
(:mod:`harness.judge.transport`). So, while a cell runs (:func:`open_cell`):

- ``OPENAI_API_BASE`` is the face's ``http://127.0.0.1:PORT/v1`` (only MLflow reads it: every other
  vendor's client is built with an explicit base URL), ``OPENAI_API_KEY`` a placeholder when unset
  (MLflow refuses to call without one), and loopback is added to ``NO_PROXY``/``no_proxy`` (``requests``
  trusts the environment's proxies). When the last MLflow cell of the process ends, every one of these
  is put back exactly as it was (:func:`harness.judge.loopback.scoped_env`): a caller's later LiteLLM
  or OpenAI call goes where it went before;
- the cell goes in MLflow's own ``extra_headers=`` as the face's ``X-Harness-Token``: a random token for
  this cell alone, so no other local process can use the face (it answers 401, reading nothing);
- the face hands the body to the cell's gateway URL and the gateway's answer back, byte for byte. The
  ``Authorization`` MLflow sends (whatever ``OPENAI_API_KEY`` holds) stops at the face; the gateway
  gets the endpoint's placeholder key as every other vendor's client sends it.
"""
from __future__ import annotations

import contextlib
import os

from harness.judge.loopback import TOKEN_HEADER, face, scoped_env

HEADER = TOKEN_HEADER
LOOPBACK = ("127.0.0.1", "localhost")
"""Added to ``NO_PROXY`` so a user's proxy never carries a call to the face."""
PLACEHOLDER_KEY = "harness-gateway"


def mlflow_env(base_url: str) -> dict[str, str]:
    """The variables MLflow's judge reads, as a cell sets them (from the environment as it is now).

    >>> env = mlflow_env("http://127.0.0.1:9/v1")
    >>> env["OPENAI_API_BASE"], "127.0.0.1" in env["NO_PROXY"].split(",")
    ('http://127.0.0.1:9/v1', True)
    """
    out = {"OPENAI_API_BASE": base_url}
    if not os.environ.get("OPENAI_API_KEY"):
        out["OPENAI_API_KEY"] = PLACEHOLDER_KEY
    for name in ("NO_PROXY", "no_proxy"):
        have = [h for h in os.environ.get(name, "").split(",") if h]
        out[name] = ",".join(have + [h for h in LOOPBACK if h not in have])
    return out


@contextlib.contextmanager
def open_cell(endpoint):
    """MLflow's environment pointed at the face and the cell open there while the block runs; yields
    the headers MLflow must send (``extra_headers=``)."""
    f = face()
    with scoped_env("mlflow", lambda: mlflow_env(f"{f.url}/v1")), f.open(endpoint) as cell:
        yield cell.headers
