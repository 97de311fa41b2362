"""The one shim of ``opik.hallucination``: LiteLLM's post-call logging runs as its own task, not in
LiteLLM's long-lived logging worker (so a run's event loop can close).

The trap (LiteLLM 1.80.0 on Python 3.11): after every ``litellm.acompletion`` LiteLLM queues its
success handler on ``GLOBAL_LOGGING_WORKER``, one task per process that takes the handlers from an
``asyncio.Queue`` and awaits each in ``asyncio.wait_for``. When ``asyncio.run`` ends it cancels every
task left; if that cancellation reaches the worker while it waits on a handler that finishes in the
same loop step, Python 3.11's ``wait_for`` returns the handler's result and drops the cancellation
(CPython gh-86296, fixed by the rewrite of ``wait_for`` in 3.12; LiteLLM issue #16518). The worker then
waits in ``queue.get()`` for ever and ``asyncio.run`` never returns: a harness run finishes every cell
and hangs. A run hits it because its last cells end just before the loop closes; a script making one
call rarely does.

The change: :data:`GLOBAL_LOGGING_WORKER` is swapped for :class:`TaskPerHandler`, which starts each
handler as a task of its own (in the caller's context, as the worker does) instead of queueing it.
Nothing waits in ``wait_for`` any more, so nothing can lose a cancellation; a handler still pending
when the loop closes is cancelled like any other task. The handler itself is LiteLLM's, unchanged:
with Opik's tracking off and no LiteLLM callback set it logs nowhere. Requests, replies, retries,
Opik's parsing and the score are untouched.
"""
from __future__ import annotations

import asyncio

SHIM_TEXT = ("LiteLLM 1.80.0 runs its post-call success handlers in one long-lived task per process "
             "(`GLOBAL_LOGGING_WORKER`, an `asyncio.Queue` drained with `asyncio.wait_for`). On Python 3.11 "
             "`wait_for` drops a cancellation that arrives as the handler finishes (CPython gh-86296, LiteLLM "
             "issue #16518), so when `asyncio.run` closes a run's loop the worker can miss its cancellation and "
             "wait on its queue for ever: the run finishes every cell and never exits. The shim swaps that "
             "worker for one that starts each handler as its own task (same handler, same context), so a "
             "pending handler is cancelled with the loop like any other task. LiteLLM's requests, replies, "
             "Opik's parsing and the score are unchanged; with Opik's tracking off and no LiteLLM callback set "
             "the handler logs nowhere.")


def task_per_handler_class():
    """The :class:`LoggingWorker` subclass (built lazily: importing LiteLLM costs seconds)."""
    from litellm.litellm_core_utils.logging_worker import LoggingWorker

    class TaskPerHandler(LoggingWorker):
        """LiteLLM's logging worker, minus the worker: each handler is a task of its own."""

        harness_shim = True

        def __init__(self) -> None:
            super().__init__()
            self._tasks: set = set()

        def ensure_initialized_and_enqueue(self, async_coroutine) -> None:
            task = asyncio.get_running_loop().create_task(async_coroutine)
            self._tasks.add(task)   # a strong reference until it ends (the loop keeps only a weak one)
            task.add_done_callback(self._done)

        def _done(self, task) -> None:
            self._tasks.discard(task)
            if not task.cancelled():
                task.exception()   # read, as the worker's own ``except Exception`` does

    return TaskPerHandler


def install() -> None:
    """Swap LiteLLM's global logging worker for :class:`TaskPerHandler` (once per process). LiteLLM
    looks the worker up in its module at each call, so the swap reaches every later call."""
    from litellm.litellm_core_utils import logging_worker

    if getattr(logging_worker.GLOBAL_LOGGING_WORKER, "harness_shim", False):
        return
    logging_worker.GLOBAL_LOGGING_WORKER = task_per_handler_class()()
