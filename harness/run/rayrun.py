"""``--ray auto|ADDRESS``: the run's workers as Ray actors on an existing Ray cluster.

The same :class:`~harness.run.cellwork.CellWorker` a local worker process runs, inside an async Ray actor
(one per CPU of the cluster, placed by Ray). Cells go out through Ray's own
``ray.util.ActorPool`` (no scheduler of ours): each actor is listed once per cell it may hold in
flight, cells are submitted as slots free up (streamed, never all at once), and finished cells come
back to the driver, the ``harness`` process, which stays the single writer of the run store and the
judge cache exactly as with ``--workers``. So the stores are the same as a local run's.

``auto`` connects to the cluster running on this machine (``ray start --head``); anything else is a Ray
address (``HOST:PORT`` of the head, or ``ray://HOST:PORT``). The ``ray`` extra installs Ray.

Offline and loopback by default:

- usage statistics are off (``RAY_USAGE_STATS_ENABLED=0``) in the driver and, through the job's
  runtime environment, in every actor, together with the harness's vendor switches;
- the driver's own ports bind to 127.0.0.1 (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: Ray's single-machine
  mode, in which it uses the loopback address instead of the machine's). To reach actors on other
  machines, say otherwise: ``HARNESS_RAY_NODE_IP=<this machine's cluster IP>``. Start a local cluster the
  same way: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head --node-ip-address 127.0.0.1
  --include-dashboard=false --disable-usage-stats``;
- a keyed judge's key is never sent: an actor reads it from its node's environment (the variable
  named by ``--judge-key-env``), as a local worker does.

Workers on other machines see the judge cache only where its path is shared; elsewhere every lookup
misses (record mode: the judge is asked again, and the driver still records the answer).
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
import socket

from harness.judge.pace import for_workers
from harness.metric.vendor_env import forced
from harness.run.cellwork import CellWorker, WorkerFailed

RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_USAGE_STATS_PROMPT_ENABLED": "0"}
"""Ray's own switches, forced in the driver and the actors."""
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
"""Ray's single-machine mode: its processes use and bind the loopback address."""


class RayUnavailable(RuntimeError):
    """``--ray`` without the ``ray`` extra, or no cluster at the address."""


def _ray():
    os.environ.update(RAY_ENV)
    if not os.environ.get("HARNESS_RAY_NODE_IP"):
        os.environ.update(LOOPBACK_ENV)
    try:
        import ray  # noqa: PLC0415 - lazy: Ray is an optional extra
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'groundedness-harness[ray]' "
                             "(bash scripts/setup.sh installs it)") from None
    return ray


def connect(address: str):
    """Connect this process to the cluster at ``address`` (``auto``: the one on this machine)."""
    ray = _ray()

    _reachable(address)
    node_ip = os.environ.get("HARNESS_RAY_NODE_IP") or "127.0.0.1"
    env = {**forced(), **RAY_ENV, **({} if os.environ.get("HARNESS_RAY_NODE_IP") else LOOPBACK_ENV)}
    try:
        ray.init(address=address, _node_ip_address=None if address.startswith("ray://") else node_ip,
                 runtime_env={"env_vars": env}, logging_level="WARNING",
                 log_to_driver=False, ignore_reinit_error=True)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise RayUnavailable(f"--ray {address}: no Ray cluster to connect to ({_cause(e)}); "
                             "start one with 'ray start --head' (see harness/run/rayrun.py)") from None
    return ray


def _cause(e: BaseException, limit: int = 400) -> str:
    """Ray's error on one line, whole when short; a long one keeps its start and its end (where Ray says why).

    >>> _cause(RuntimeError("Failed to connect. " + "x" * 500 + " Cause: version mismatch.")).endswith("Cause: version mismatch.")
    True
    """
    text = " ".join(str(e).split()) or type(e).__name__
    if len(text) <= limit:
        return text
    return f"{text[:limit // 3]} ... {text[-(limit - limit // 3):]}"


def _reachable(address: str) -> None:
    """A HOST:PORT that refuses connections is an error now (Ray itself retries for minutes)."""

    if address == "auto" or "://" in address or ":" not in address:
        return
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except (OSError, ValueError) as e:
        raise RayUnavailable(f"--ray {address}: no Ray cluster to connect to ({e}); start one with "
                             "'ray start --head' (see harness/run/rayrun.py)") from None


def _actor_class(ray):
    @ray.remote(num_cpus=1)
    class CellActor:
        """One worker: imports the vendors once, scores cells in its event loop (async actor)."""

        def __init__(self, spec, metrics):

            self.worker = CellWorker(spec, remote=True)
            self.worker.prepare(metrics)
            self._started = None

        async def score(self, task):

            if self._started is None:
                self._started = asyncio.ensure_future(self.worker.start())
            await self._started
            return await self.worker.score(task)

        async def close(self):
            if self._started is not None:
                await self.worker.close()

    return CellActor


def run_on_ray(address: str, spec, tasks, metrics, on_done, *, concurrency: int, cells: int) -> None:
    """Score every task on the cluster at ``address``, ``concurrency`` cells in flight in all, with at
    most one actor per cell; ``on_done(CellDone)`` runs here, in order of finishing."""


    ray = connect(address)
    from ray.util import ActorPool  # noqa: PLC0415 - lazy: Ray is an optional extra

    actors = []
    try:
        n = max(1, min(cells, int(ray.cluster_resources().get("CPU", 1))))
        rpm, tpm = for_workers(spec.judge_rpm, spec.judge_tpm, n)   # each actor paces its share of the judge's limits
        spec = dataclasses.replace(spec, concurrency=max(1, -(-concurrency // n)), judge_rpm=rpm, judge_tpm=tpm)
        actor_cls = _actor_class(ray).options(max_concurrency=max(2, spec.concurrency * 2))
        actors = [actor_cls.remote(spec, list(metrics)) for _ in range(n)]
        pool = ActorPool([a for a in actors for _ in range(spec.concurrency)])
        try:
            for task in tasks:
                while not pool.has_free():
                    on_done(pool.get_next_unordered())
                pool.submit(lambda actor, t: actor.score.remote(t), task)
            while pool.has_next():
                on_done(pool.get_next_unordered())
        except ray.exceptions.RayActorError as e:
            raise WorkerFailed(f"a Ray actor died ({_cause(e)}); finished cells are stored, "
                               "rerun with the same --run-id to compute the rest") from None
        except ray.exceptions.RayTaskError as e:
            raise WorkerFailed(f"a Ray worker failed: {' '.join(str(e).split())[:300]}") from None
        ray.get([a.close.remote() for a in actors], timeout=30)
    finally:
        for a in actors:
            ray.kill(a)
        ray.shutdown()
