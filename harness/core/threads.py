"""Threads of the harness's own."""
from __future__ import annotations

import concurrent.futures
import concurrent.futures.thread as cft


def plain_thread_pool(max_workers: int | None = None, prefix: str = "harness"):
    """A standard-library ``ThreadPoolExecutor``, even after a vendor has swapped the class.

    TruLens replaces ``concurrent.futures.ThreadPoolExecutor`` at import with a subclass whose
    ``submit`` records the caller's ``inspect.stack()`` (for its app tracing). Used as the event loop's
    default executor, that costs every ``asyncio.to_thread`` hop a walk of the loop thread's stack,
    and in a spawned worker (whose bottom frame is ``<string>``, from ``python -c``) a scan of all of
    ``sys.modules`` per frame lookup: about 1 ms per cell, every metric's. The harness's own hops into
    threads (TruLens's sync call, the embedded model, the judge client's name lookups, a worker's task reader) use the class it
    replaced (its ``submit``); TruLens's own pools inside its code stay TruLens's. The pool is an
    instance of whatever class ``concurrent.futures.ThreadPoolExecutor`` is now, as asyncio's
    ``set_default_executor`` insists."""

    std = next(c for c in cft.ThreadPoolExecutor.__mro__ if c.__module__ == "concurrent.futures.thread")
    cls = type("PlainThreadPoolExecutor", (concurrent.futures.ThreadPoolExecutor,), {"submit": std.submit})
    return cls(max_workers=max_workers, thread_name_prefix=prefix)
