"""A calibrated cascade: its file, and each stage's verdict and confidence on an answer, read from the
stage metric's own cell in a run store.

A stage is a registered metric. Its verdict on an answer: grounded when the score (turned round on its range
when lower is better) reaches the stage's verdict threshold (default: the top of the range, the rule of
``harness agree``: anything found ungrounded makes the answer ungrounded). Its confidence, in [0, 1], comes
from its own output only:

- the distance of the score from the verdict threshold, as a share of the room on that side of it (a score at
  the top, for a top threshold: 1);
- when the units carry a support probability (``nli.minicheck``'s ``prob``): for a grounded answer, how far
  its weakest sentence is above 0.5 (``2 p - 1``); for an ungrounded one, how far its least supported sentence
  is below it (``1 - 2 p``);
- when the run has repeats of the cell (``--repeats``): at most the share of repeats that reach the same verdict;
- a cell that is not a score: 0 (the stage passes it on).

The file (JSON, written by ``harness calibrate``, read by ``harness run --cascade``)::

    {"kind": "groundedness-harness cascade", "version": 1, "target": 0.9, "delta": 0.1, "method": "...",
     "label_target": "hallucinated",
     "stages": [{"metric": "baseline.similarity", "verdict_threshold": 1.0, "confidence": 0.62}, ...]}

``confidence`` null: the stage decides nothing (calibration could not certify any level).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

KIND = "groundedness-harness cascade"
PERSON = "person"
"""The stage name of an answer no stage was confident on: a person decides (the review app's queue)."""


class CascadeFileError(ValueError):
    """A cascade file that cannot be used (one line: the file, the field, what is wrong)."""


@dataclass(frozen=True)
class Stage:
    metric: str
    """A registered metric name."""
    verdict_threshold: float
    """Grounded when the (higher-is-better) score reaches this."""
    confidence: float | None
    """The stage decides an answer when its confidence reaches this; None: it decides nothing."""


@dataclass(frozen=True)
class Cascade:
    stages: tuple[Stage, ...]
    target: float
    """The agreement with the labels the kept verdicts keep, with probability at least 1 - delta."""
    delta: float
    method: str
    label_target: str = "hallucinated"
    """Which human target the verdicts were calibrated against (``harness.reports.analysis.agreement.TARGETS``)."""

    def to_json(self) -> dict:
        return {"kind": KIND, "version": 1, "target": self.target, "delta": self.delta, "method": self.method,
                "label_target": self.label_target, "stages": [asdict(s) for s in self.stages]}


def _num(path: str, where: str, v, lo: float, hi: float, open_ends: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        raise CascadeFileError(f"{path}: {where}: expected a number, got {json.dumps(v)[:40]}")
    if (open_ends and not lo < v < hi) or not lo <= v <= hi:
        raise CascadeFileError(f"{path}: {where}: {v} is outside {'(' if open_ends else '['}{lo}, {hi}"
                               f"{')' if open_ends else ']'}")
    return float(v)


def load(path: str, known=None) -> Cascade:
    """Read and check a cascade file; ``known(name)`` raises ValueError for a metric not registered."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except OSError as e:
        raise CascadeFileError(f"{path}: cannot read: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CascadeFileError(f"{path}: not JSON ({str(e).splitlines()[0][:80]})") from None
    if not isinstance(raw, dict) or raw.get("kind") != KIND:
        raise CascadeFileError(f"{path}: field kind: expected {KIND!r} (write the file with harness calibrate)")
    if raw.get("version") != 1:
        raise CascadeFileError(f"{path}: field version: expected 1, got {json.dumps(raw.get('version'))[:20]}")
    target = _num(path, "field target", raw.get("target"), 0.0, 1.0, open_ends=True)
    delta = _num(path, "field delta", raw.get("delta"), 0.0, 1.0, open_ends=True)
    stages = raw.get("stages")
    if not isinstance(stages, list) or not stages:
        raise CascadeFileError(f"{path}: field stages: expected a non-empty list")
    out = []
    for i, s in enumerate(stages):
        where = f"stages[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("metric"), str):
            raise CascadeFileError(f"{path}: {where}.metric: expected a metric name")
        if known is not None:
            try:
                known(s["metric"])
            except ValueError as e:
                raise CascadeFileError(f"{path}: {where}.metric: {str(e).splitlines()[0][:160]}") from None
        if s["metric"] in [x.metric for x in out]:
            raise CascadeFileError(f"{path}: {where}.metric: {s['metric']} is already a stage")
        thr = _num(path, f"{where}.verdict_threshold", s.get("verdict_threshold"), -1e12, 1e12)
        conf = s.get("confidence")
        conf = None if conf is None else _num(path, f"{where}.confidence", conf, 0.0, 1.0)
        out.append(Stage(s["metric"], thr, conf))
    label_target = raw.get("label_target", "hallucinated")
    if label_target not in ("hallucinated", "not_attributable"):
        raise CascadeFileError(f"{path}: field label_target: expected hallucinated or not_attributable")
    return Cascade(tuple(out), target, delta, str(raw.get("method", "")), label_target)


def dump(cascade: Cascade, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cascade.to_json(), fh, indent=2)
        fh.write("\n")


@dataclass(frozen=True)
class Decision:
    """One stage's reading of one answer."""

    grounded: bool | None
    """The stage's verdict (None: the cell is not a score)."""
    confidence: float
    calls: int
    tokens: int


def oriented(cls, score: float) -> float:
    lo, hi = getattr(cls, "score_range", (0.0, 1.0))
    return score if getattr(cls, "higher_is_better", True) else lo + hi - score


def default_threshold(cls) -> float:
    """The top of the metric's range (oriented): grounded only when nothing was found ungrounded."""
    return float(getattr(cls, "score_range", (0.0, 1.0))[1])


def read(cls, threshold: float, status: str, score, probs: list, repeats: list) -> tuple[bool | None, float]:
    """(verdict, confidence) of a stage from its cell (module docstring). ``probs``: the units' support
    probabilities (empty when the metric gives none); ``repeats``: the scores of the cell's other repeats.

    >>> class M: score_range, higher_is_better = (0.0, 1.0), True
    >>> read(M, 1.0, "scored", 1.0, [], [])
    (True, 1.0)
    >>> read(M, 1.0, "scored", 0.75, [], [])
    (False, 0.25)
    >>> g, c = read(M, 1.0, "scored", 1.0, [0.9, 0.7], [])   # the weakest sentence: 2 * 0.7 - 1
    >>> g, round(c, 6)
    (True, 0.4)
    >>> read(M, 1.0, "scored", 1.0, [], [1.0, 0.5, 1.0])   # 3 of the 4 repeats say grounded
    (True, 0.75)
    >>> read(M, 1.0, "unscored", None, [], [])
    (None, 0.0)
    """
    if status != "scored" or score is None or score != score:
        return None, 0.0
    lo, hi = getattr(cls, "score_range", (0.0, 1.0))
    s = oriented(cls, float(score))
    grounded = s >= threshold - 1e-12
    if grounded:
        conf = 1.0 if hi <= threshold else (s - threshold) / (hi - threshold)
    else:
        conf = (threshold - s) / (threshold - lo) if threshold > lo else 1.0
    ps = [float(p) for p in probs if p is not None]
    if ps:
        conf = min(2 * p - 1 for p in ps) if grounded else max(1 - 2 * p for p in ps)
    reps = [oriented(cls, float(r)) for r in repeats if r is not None and r == r]
    if reps:
        same = sum((r >= threshold - 1e-12) == grounded for r in reps) + 1
        conf = min(conf, same / (len(reps) + 1))
    return bool(grounded), float(min(1.0, max(0.0, conf)))


def decisions(store, cls, threshold: float) -> dict[str, Decision]:
    """case id -> the stage's decision, from its cells in a run store (its repeats included, when kept)."""
    name = cls.name
    probs: dict[str, list] = {}
    for cid, detail in store.rows("SELECT case_id, detail FROM units WHERE metric = ?", (name,)):
        try:
            d = json.loads(detail) if isinstance(detail, str) else {}
        except json.JSONDecodeError:
            d = {}
        if isinstance(d, dict) and "prob" in d:
            probs.setdefault(cid, []).append(d["prob"])
    reps: dict[str, list] = {}
    try:
        for cid, score in store.rows("SELECT case_id, score FROM repeat_cells WHERE metric = ? AND status = "
                                     "'scored'", (name,)):
            reps.setdefault(cid, []).append(score)
    except Exception:  # noqa: BLE001 - a store with no repeats has no such table
        pass
    out = {}
    for cid, status, score, calls, pt, ct in store.rows(
            "SELECT case_id, status, score, calls, prompt_tokens, completion_tokens FROM cells WHERE metric = ?",
            (name,)):
        g, c = read(cls, threshold, status, score, probs.get(cid, []), reps.get(cid, []))
        out[cid] = Decision(g, c, int(calls or 0), int(pt or 0) + int(ct or 0))
    return out
