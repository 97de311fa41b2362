"""What the worker processes' forkserver imports before it forks any worker (``--workers N``, :mod:`harness.run.workers`).

This module is never imported by the harness itself: :func:`harness.run.workers.run_in_processes` names it as the
forkserver's only preload module, so importing it is the first thing the forkserver does. In order, it

1. ignores SIGINT (Ctrl-C is the runner's to handle; a forkserver stopped mid-import would print a traceback),
2. forces the vendor switches (:func:`harness.metric.vendor_env.quiet_vendors`: telemetry off, no dotenv) for
   this process's life, before any vendor is imported,
3. imports the engine modules every worker uses, then the vendor stack of each metric named in the
   :data:`ENV` variable (JSON: ``metrics``, in that order, ``log_dir``) and nothing else, each under the same guard
   a worker uses: a metric whose vendor fails to import is noted and left to the worker, whose cells of that metric
   then say why. Meanwhile a thread ends this process if the runner that started it is gone (the imports take
   seconds of CPU).
4. once the metric named ``early.after`` is imported (the cheap vendor stacks, :mod:`harness.run.stages`), forks
   the early worker, connected to the runner at ``early.address``, and goes on with the other imports.

The runner scores the cells that need no vendor while this runs (:func:`harness.run.workers.run_in_processes`).
Every worker is then a fork of this process: it pays no vendor import of its own. :data:`FACTS` (wall and CPU
seconds of the imports, done once here) is inherited by each worker, which reports it with its start-up facts.
"""
from __future__ import annotations

import json
import os
import signal
import threading
import time
import warnings

ENV = "HARNESS_FORKSERVER_PRELOAD"
"""Set (by the runner) only in the environment the forkserver starts with; removed here at once."""

FACTS: dict | None = None
"""Once the imports are done: ``metrics`` (those whose vendor was imported here), ``failed`` (metric -> why),
``began`` and ``ready`` (epoch seconds: when the imports began and ended; a worker is forked after ``ready``),
``import_s`` and ``import_cpu_s`` (wall and CPU seconds, paid once for every worker), ``pid``."""


def _preload(raw: str) -> dict:
    began, cpu0 = time.time(), time.process_time()
    want = json.loads(raw)
    # the engine modules every worker imports anyway (the gateway, the cell worker, the aligner's rapidfuzz)
    from harness.metric import registry  # noqa: PLC0415 - lazy: after quiet_vendors
    from harness.metric.vendor_env import IMPORT_LOCK  # noqa: PLC0415 - lazy: after quiet_vendors
    from harness.run import workers  # noqa: F401, PLC0415 - lazy: after quiet_vendors
    from harness.run.stages import needs_import  # noqa: PLC0415 - lazy: after quiet_vendors
    from harness.run.vendorlog import VendorLog, log_path  # noqa: PLC0415 - lazy: after quiet_vendors

    import rapidfuzz.fuzz  # noqa: F401, PLC0415 - lazy: this module's whole job is importing

    done, failed = [], {}
    # import-time log records and warnings go to the first worker's vendor log, as a worker's own imports did
    log = VendorLog(log_path(want["log_dir"], 0)) if want.get("log_dir") else None
    if log is not None:
        log.__enter__()
    try:
        early = want.get("early") or {}
        for name in want.get("metrics", ()):
            try:
                cls = registry.get(name)
                if needs_import(cls):
                    with IMPORT_LOCK:
                        cls.prepare()
                    done.append(name)
            except BaseException as e:  # noqa: BLE001 - the worker imports it again and its cells say why
                failed[name] = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
            if name == early.get("after"):
                _fork_early(early["address"], log)
    finally:
        if log is not None:
            log.__exit__(None, None, None)
    # each worker finds the metrics again with its own sys.path (the runner's): a metric registered there but not
    # here (a plugin on a path the runner added) is not hidden by what this process found
    registry.refresh()
    return {"metrics": done, "failed": failed, "began": began, "ready": time.time(),
            "import_s": round(time.time() - began, 3), "import_cpu_s": round(time.process_time() - cpu0, 3),
            "pid": os.getpid()}


def _fork_early(address: str, log) -> None:
    """Fork the early worker (:mod:`harness.run.stages`): a process with the vendor stacks imported so far that
    scores their cells while this one imports the rest (:func:`harness.run.early.early_main`).

    Its connection to the runner is made here, before this process goes on: by the time the forkserver serves the
    runner (its imports done) the runner has it or knows none is coming. ``log``: the vendor log this process
    writes to, left in the worker for a log of its own. The forkserver reaps the worker when it ends (it warns of
    a child it did not fork for a request: that warning is silenced in :func:`_main`)."""
    from multiprocessing.connection import Client  # noqa: PLC0415 - lazy: this module's imports are its work

    runner = os.getppid()
    try:
        conn = Client(address, family="AF_UNIX")
    except OSError:   # the runner is gone or no longer waits: the workers forked at the end do the work
        return
    if os.fork() == 0:
        code = 1
        try:
            if log is not None:
                log.__exit__(None, None, None)
            from harness.run.early import early_main  # noqa: PLC0415 - imported already, in _preload

            early_main(conn, runner)
            code = 0
        finally:
            os._exit(code)
    conn.close()


def _main() -> None:
    global FACTS
    raw = os.environ.pop(ENV, None)
    if raw is None:     # imported some other way (a doctest run): it changes nothing
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The imports leave a few threads here, idle, that a fork does not copy (measured with every vendor: Ragas's
    # analytics batcher, asleep with telemetry off; OpenBLAS's pool under numpy and jemalloc's background thread
    # under pyarrow, both of which handle a fork themselves). Python 3.12 warns at each fork of a
    # multi-threaded process; the warning would reach the terminal from here.
    warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning)
    # the early worker is this process's child, not forked for a request: the forkserver reaps it all the same
    warnings.filterwarnings("ignore", message=r"forkserver: waitpid returned unexpected pid")
    from harness.metric.vendor_env import quiet_vendors  # noqa: PLC0415 - imports nothing of a vendor

    quiet_vendors()
    done = threading.Event()
    watch = threading.Thread(target=_end_with_runner, args=(os.getppid(), done), name="harness-preload-watch",
                             daemon=True)
    watch.start()
    try:
        FACTS = _preload(raw)
    except BaseException as e:  # noqa: BLE001 - a forkserver that fails here would fail every worker's start
        FACTS = {"metrics": [], "failed": {"*": f"{type(e).__name__}: {e}"[:200]}, "import_s": None,
                 "import_cpu_s": None, "pid": os.getpid()}
    finally:
        done.set()
        watch.join()


def _end_with_runner(runner: int, done: threading.Event) -> None:
    """While the imports run, end this process the moment the runner that started it is gone (Ctrl-C, a kill):
    the imports would otherwise go on for seconds of CPU for no run. Once they are done the forkserver's own
    loop notices the runner's end (its "alive" pipe closes) and this thread has ended (none is left to fork)."""
    while not done.wait(0.2):
        if os.getppid() != runner:
            os._exit(0)


_main()
