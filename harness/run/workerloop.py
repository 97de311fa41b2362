"""What every worker process runs, whichever way it was started (:mod:`harness.run.workers`: forked by the run's
forkserver; :mod:`harness.run.early`: the early worker): the loop that takes cells and gives back finished ones,
and the watch that ends the process with its runner."""
from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import select
import time
from multiprocessing.connection import wait

from harness.core.threads import plain_thread_pool


async def serve(worker, tasks_q, results_q) -> None:
    """Score the cells ``tasks_q.get()`` hands out (None: no more) with ``worker`` (a started-here
    :class:`~harness.run.cellwork.CellWorker`), up to its ``concurrency`` at once, putting ``("done", CellDone)`` on
    ``results_q`` for each; then close the worker."""

    await worker.start()
    loop = asyncio.get_running_loop()
    reader = plain_thread_pool(1, "harness-cells-in")
    slots = asyncio.Semaphore(max(1, worker.spec.concurrency))
    running: set = set()

    async def one(task):
        try:
            results_q.put(("done", await worker.score(task)))
        finally:
            slots.release()

    try:
        while True:
            await slots.acquire()
            try:      # a task already waiting is taken here; only an empty queue costs a thread hop
                task = tasks_q.get_nowait()
            except queue.Empty:
                task = await loop.run_in_executor(reader, tasks_q.get)
            if task is None:
                break
            t = asyncio.create_task(one(task))
            running.add(t)
            t.add_done_callback(running.discard)
        if running:
            await asyncio.gather(*running)
    finally:
        reader.shutdown(wait=False)
        await worker.close()


def exit_with_parent(parent_pid: int) -> None:
    """End this worker the moment its runner is gone (killed, or ended by Ctrl-C): the runner's
    process sentinel becomes ready then; the parent id is checked too, as a fallback."""

    parent = multiprocessing.parent_process()
    first = os.getppid()   # the runner (spawned) or the forkserver (which ends with the runner)
    while True:
        if parent is not None:
            wait([parent.sentinel], timeout=1.0)
        else:  # pragma: no cover - a spawned or forkserver worker always has one
            time.sleep(1.0)
        if os.getppid() != first or (parent is not None and not parent.is_alive()) or not alive(parent_pid):
            os._exit(3)


def alive(pid: int) -> bool:
    """Is there a process ``pid`` (a zombie counts)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # it exists, owned by another user
        return True
    return True


def exit_with_runner(pid: int) -> None:
    """End this process the moment the runner is gone (the early worker is not the runner's child: it watches the
    runner's process id, through a pidfd where the kernel has them)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):   # pragma: no cover - Linux before 5.3, macOS
        fd = None
    if fd is not None:
        if alive(pid):
            select.select([fd], [], [])
        os._exit(3)
    while alive(pid):   # pragma: no cover - as above
        time.sleep(1.0)
    os._exit(3)
