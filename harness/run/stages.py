"""In which order a run's vendor stacks are imported, and which of them an early worker starts with (``--workers N``).

The forkserver of a run's workers (:mod:`harness.run.preload`) imports the vendor stacks one after another, on
one core, for 7-9 s of CPU with every vendor. The runner scores the cells that need no vendor meanwhile, on the
other core, and those run out first (3 s on the canonical set). So the forkserver imports the cheap stacks
first and, once they are in (:func:`early_stage`), forks an *early worker* that scores their cells while it
imports the rest (:func:`harness.run.workers.early_main`); the workers forked at the end take every other cell.
The runner hands the cells out in the same order (:func:`import_rank`), so the early worker's cells come first.

A metric class states what importing its vendor stack costs (``import_cpu_s``: the CPU seconds it adds,
imported after the engine and the cheaper vendors). Measured on 2 cores, 2026-12-03, the vendor switches on,
in this order: phoenix 0.73, deepeval 0.91, mlflow 1.07, trulens 1.96, ragas 1.43, opik 2.59 (8.9 s in all;
each adapter rounds its own figure). A vendor that states none is imported last and never by the early stage.
"""
from __future__ import annotations

EARLY_CPU_S = 3.0
"""The early worker is forked once the vendors imported so far add up to at most this many CPU seconds: about the
time the runner's own cells take on the canonical set (3.1 s), so the core they leave idle gets the early worker."""



def needs_import(cls) -> bool:
    """Has the metric a vendor stack to import (a ``prepare`` on its class)? Cells of the metrics that have not can
    be scored by any process of the harness at any time.

    >>> from harness.metric import registry
    >>> [needs_import(registry.get(m)) for m in ("inhouse.span", "baseline.similarity", "ragas.faithfulness")]
    [False, False, True]
    """
    return callable(getattr(cls, "prepare", None))


def import_cpu_s(cls) -> float | None:
    """What importing the metric's vendor stack costs, in CPU seconds (the class's ``import_cpu_s``), or None:
    unknown."""
    own = getattr(cls, "import_cpu_s", None)
    return float(own) if own is not None else None


def import_rank(cls) -> tuple[int, float]:
    """The sort key of a metric class: those with no vendor stack first, then the cheapest vendor stacks to import
    (:func:`import_cpu_s`), then those of unknown cost (a stable sort keeps the registry's order within each).

    >>> class Span: vendor = "inhouse"
    >>> class Opik:
    ...     vendor, import_cpu_s = "opik", 2.6
    ...     @classmethod
    ...     def prepare(cls): pass
    >>> class Phoenix(Opik): vendor, import_cpu_s = "phoenix", 0.7
    >>> class Plugin(Opik): vendor, import_cpu_s = "toy", None
    >>> [c.__name__ for c in sorted([Plugin, Opik, Span, Phoenix], key=import_rank)]
    ['Span', 'Phoenix', 'Opik', 'Plugin']
    """
    if not needs_import(cls):
        return (0, 0.0)
    cost = import_cpu_s(cls)
    return (1, float("inf") if cost is None else cost)


def early_stage(classes: dict) -> list[str]:
    """The metrics (of ``classes``, name -> class, in :func:`import_rank` order) whose vendor stacks the
    forkserver imports before it forks the early worker: the cheapest vendors, as many as cost at most
    :data:`EARLY_CPU_S` together (one vendor at least). Empty when no vendor would be left to import after them (the
    workers would then be forked as early) or the first vendor's cost is unknown.

    >>> def metric(vendor, cost=None):
    ...     return type(vendor, (), {"vendor": vendor, "import_cpu_s": cost, "prepare": classmethod(lambda cls: None)})
    >>> span = type("span", (), {"vendor": "inhouse"})
    >>> every = {"inhouse.span": span, "phoenix.f": metric("phoenix", 0.7), "deepeval.f": metric("deepeval", 0.9),
    ...          "deepeval.p": metric("deepeval", 0.9), "mlflow.g": metric("mlflow", 1.1),
    ...          "ragas.f": metric("ragas", 1.4), "opik.h": metric("opik", 2.6)}
    >>> early_stage(every)
    ['phoenix.f', 'deepeval.f', 'deepeval.p', 'mlflow.g']
    >>> early_stage({"ragas.f": every["ragas.f"], "opik.h": every["opik.h"]})
    ['ragas.f']
    >>> early_stage({"ragas.f": every["ragas.f"]}), early_stage({"toy": metric("toy"), "toy.b": metric("toyb")})
    ([], [])
    """
    vendored = sorted((n for n, c in classes.items() if needs_import(c)), key=lambda n: import_rank(classes[n]))
    vendors = {}   # vendor -> its cost, in import order
    for n in vendored:
        vendors.setdefault(getattr(classes[n], "vendor", None), import_cpu_s(classes[n]))
    chosen, total = [], 0.0
    for vendor, cost in list(vendors.items())[:-1]:   # one vendor at least is left to the forkserver's last stage
        if cost is None or (chosen and total + cost > EARLY_CPU_S):
            break
        chosen.append(vendor)
        total += cost
    return [n for n in vendored if getattr(classes[n], "vendor", None) in chosen]
