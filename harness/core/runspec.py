"""The run spec as a typed record: what was run, with what, by which code.

The run writes its spec as JSON (``meta/spec`` in the store and ``spec.json`` beside it,
:func:`harness.run.spec.build_spec`); :meth:`RunSpec.from_json` reads that object into this record and
:meth:`RunSpec.to_json` gives the same object back (a key this version does not know is kept in ``other``).
A spec written by an older version may lack fields: they read as their defaults here.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CasesRef:
    """The case file a run scored."""

    path: str | None = None
    """As given to ``--cases`` (the store keeps the cases themselves too)."""
    sha256: str | None = None
    """Digest of the file's bytes."""
    n: int | None = None
    """Number of cases."""


@dataclass(frozen=True)
class JudgeRef:
    """Who judged: the reference judge or a model behind a URL (never a key, only the name of its variable)."""

    kind: str = "reference"
    """``reference`` | ``http``."""
    url: str | None = None
    """The judge's URL, credentials removed."""
    model: str | None = None
    """The model id."""
    key_env: str | None = None
    """The NAME of the environment variable that held the key."""
    reference_version: str | None = None
    """The reference judge's label table version (reference runs)."""
    description: str | None = None
    """One line for people."""


@dataclass(frozen=True)
class MetricEntry:
    """One metric of the run as the spec names it (its full facts: :class:`harness.metric.facts.MetricFacts`)."""

    name: str
    """Registered name, e.g. ``ragas.faithfulness``."""
    version: str = "?"
    """The adapter's version."""
    vendor: str = ""
    display_name: str = ""
    unit: str = "?"
    """What one unit of judgement is."""
    higher_is_better: bool = True
    packages: tuple[str, ...] = ()
    """The vendor distributions that compute it."""


_KNOWN = ("run_id", "created", "cases", "metrics", "judge", "cache", "embeddings", "metric_args", "faults",
          "concurrency", "repeats", "prices", "judge_batch", "workers", "packages", "git", "python")


@dataclass(frozen=True)
class RunSpec:
    """A run's spec (see the module docstring).

    >>> s = RunSpec.from_json({"run_id": "r1", "judge": {"kind": "http", "model": "m"}, "metrics": [{"name": "a.b"}],
    ...                        "cases": {"path": "c.jsonl", "n": 2}, "new_key": 1})
    >>> s.run_id, s.is_reference, s.judge.model, s.metric_names, s.cases.n, s.other
    ('r1', False, 'm', ('a.b',), 2, {'new_key': 1})
    >>> RunSpec.from_json(s.to_json()) == s
    True
    """

    run_id: str | None = None
    """The run's id (its directory's name under the runs folder)."""
    created: str | None = None
    """When the run started (``%Y-%m-%dT%H:%M:%S%z``)."""
    cases: CasesRef = CasesRef()
    metrics: tuple[MetricEntry, ...] = ()
    """The selected metrics, in the order the run named them."""
    judge: JudgeRef = JudgeRef()
    cache: dict = field(default_factory=dict)
    """``{"mode": ...}``: the judge cache's mode."""
    embeddings: dict = field(default_factory=dict)
    """Which model served the gateway's embeddings route."""
    metric_args: dict = field(default_factory=dict)
    """metric -> its constructor's arguments from run options."""
    faults: dict | None = None
    """The injected-fault spec and seed (None: no faults)."""
    concurrency: int | None = None
    repeats: int = 1
    prices: dict | None = None
    """The run's price table (None: none given)."""
    judge_batch: dict | None = None
    """Batch mode's settings (None: live calls)."""
    workers: dict = field(default_factory=dict)
    """``{"processes": n, "ray": address or None}``."""
    packages: dict = field(default_factory=dict)
    """distribution -> installed version (None: not installed), the engine's and the metrics' vendors'."""
    git: str | None = None
    """The code's commit (``-dirty`` when it had changes)."""
    python: str | None = None
    other: dict = field(default_factory=dict)
    """Keys of the spec this version does not know."""

    @property
    def is_reference(self) -> bool:
        """Did the reference judge answer?"""
        return self.judge.kind == "reference"

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.metrics)

    @classmethod
    def from_json(cls, obj: dict) -> "RunSpec":
        """The record of a spec object as the store keeps it (fields it lacks take their defaults)."""
        obj = obj or {}
        kw = {k: obj[k] for k in _KNOWN if k in obj}
        kw["cases"] = _typed(CasesRef, obj.get("cases"))
        kw["judge"] = _typed(JudgeRef, obj.get("judge"))
        kw["metrics"] = tuple(_typed(MetricEntry, {**m, "packages": tuple(m.get("packages") or ())})
                              for m in obj.get("metrics") or ())
        kw["other"] = {k: v for k, v in obj.items() if k not in _KNOWN}
        return cls(**kw)

    def to_json(self) -> dict:
        """The spec object (the keys :func:`harness.run.spec.build_spec` writes, and ``other``'s)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "other"}
        out["cases"] = dataclasses.asdict(self.cases)
        out["judge"] = dataclasses.asdict(self.judge)
        out["metrics"] = [{**dataclasses.asdict(m), "packages": list(m.packages)} for m in self.metrics]
        return {**out, **self.other}


def _typed(kind, obj):
    """``kind`` from the fields of ``obj`` it has (others ignored)."""
    names = {f.name for f in dataclasses.fields(kind)}
    return kind(**{k: v for k, v in (obj or {}).items() if k in names})
