"""A team's labels for a run, wherever they live: the labels file of ``harness review`` (SQLite) or a case
file of annotated cases (JSONL, e.g. ``harness review --export``). ``harness report RUN --labels L``,
``harness run ... --labels L`` and ``harness agree RUN --labels L`` read them here, on the run's stored
cells: no judge call is made again.

The labelled answers take the labels as their annotation; every other case of the run keeps its text but
loses any annotation it carried, so every agreement figure of the report is about the team's labels only.
A label is only about the text it was given for: an answer whose question, contexts or answer differ from
the run's is bad input, named by file, line (or answer) and field.

Where the labels came from is said beside every figure (:class:`Provenance`): the file, who labelled,
when, how many answers were drawn and how many of them are not labelled (and why).
"""
from __future__ import annotations

import dataclasses
import os
import sqlite3
from dataclasses import dataclass, field

from harness.cases.load import CaseFileError, load_cases
from harness.core.records import Case

TEXT_FIELDS = ("question", "answer", "contexts")
SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Provenance:
    """Where a run's labels came from (shown beside the figures)."""

    path: str
    """The labels file or case file, as given."""
    kind: str
    """``labels file`` (harness review's SQLite) or ``case file`` (annotated JSONL)."""
    labelled: int
    """Answers of the run whose labels are used."""
    drawn: int
    """Answers drawn for labelling (the review's sample, or the case file's cases)."""
    left_out: dict[str, int]
    """reason -> drawn answers without usable labels."""
    chosen: dict[str, int] = field(default_factory=dict)
    """reviewer -> labelled answers whose labels were taken from them (a labels file only)."""
    reviewers: tuple[str, ...] = ()
    """Everyone who saved a label (a labels file only)."""
    first: str | None = None
    """Date (UTC, YYYY-MM-DD) of the earliest save used; None for a case file."""
    last: str | None = None
    """Date of the latest save used."""
    sample_of: str = ""
    """What the sample was drawn from (a labels file: 'run R, seed S, N of M answers')."""
    stripped: int = 0
    """Other cases of the run whose own annotation is not used (the team's labels replace it)."""
    gold: dict[str, int] = field(default_factory=dict)
    """How the labelled answers' gold labels were reached: ``adjudicated``, ``agreed``, ``one reviewer`` -> count."""

    @property
    def unlabelled(self) -> int:
        """Drawn but not labelled."""
        return self.drawn - self.labelled

    def text(self) -> str:
        """One sentence for the report and the terminal.

        >>> Provenance("team.sqlite", "labels file", 8, 10, {"not finished": 2}, {"alice": 8},
        ...            ("alice", "bob"), "2026-12-01", "2026-12-02").text()
        'Labels: team.sqlite (labels file of harness review): 8 labelled answers of 10 drawn; 2 drawn but not labelled (2 not finished); labels taken from alice 8 (reviewers: alice, bob); saved 2026-12-01 to 2026-12-02.'
        """
        what = "labels file of harness review" if self.kind == "labels file" else "annotated case file"
        why = ", ".join(f"{n} {w}" for w, n in self.left_out.items())
        out = (f"Labels: {self.path} ({what}{', ' + self.sample_of if self.sample_of else ''}): "
               f"{self.labelled} labelled answers of {self.drawn} drawn; {self.unlabelled} drawn but not labelled"
               + (f" ({why})" if why else ""))
        if self.chosen:
            out += ("; labels taken from " + ", ".join(f"{r} {n}" for r, n in sorted(self.chosen.items()))
                    + f" (reviewers: {', '.join(self.reviewers)})")
        if self.gold:
            out += "; gold labels " + ", ".join(f"{n} {k}" for k, n in sorted(self.gold.items()))
        if self.first:
            out += f"; saved {self.first}" + (f" to {self.last}" if self.last != self.first else "")
        if self.stripped:
            out += (f"; the run's own annotations on {self.stripped} other case(s) are not used "
                    "(the figures are about these labels only)")
        return out + "."


@dataclass(frozen=True)
class TeamLabels:
    """A run's labels, ready to put on its cases."""

    cases: dict[str, Case]
    """case id -> the run's case annotated with the team's labels."""
    weights: dict[str, float] | None
    """case id -> 1 / inclusion probability (a labels file); None for a case file (no sample design known)."""
    provenance: Provenance


def kind_of(path: str) -> str:
    """``labels file`` or ``case file`` by content (ValueError for a missing or unreadable file)."""
    if not os.path.exists(path):
        raise ValueError(f"--labels {path}: no such file (a labels file of harness review, or a case file "
                         "of annotated cases)")
    if os.path.isdir(path):
        raise ValueError(f"--labels {path}: is a directory (expected a labels file or a case file)")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise ValueError(f"--labels {path}: cannot be read ({e.strerror or e})") from None
    return "labels file" if head == SQLITE_MAGIC else "case file"


def load(path: str, run_cases: dict[str, Case], run_id: str, reviewers: list[str] | None = None,
         adjudicators: list[str] | None = None) -> TeamLabels:
    """The labels in ``path`` for the run whose cases are ``run_cases`` (ValueError, one line, naming file,
    line or answer, and field, for anything unusable); ``run_id`` names the run in those messages."""
    run_id = f"the cases of {run_id}" if run_id.endswith(".jsonl") else f"run {run_id!r}"
    if kind_of(path) == "labels file":
        return _from_store(path, run_cases, run_id, reviewers, adjudicators)
    if reviewers:
        raise ValueError(f"--reviewers: {path} is a case file; it holds one label per answer, not reviewers' labels")
    return _from_cases(path, run_cases, run_id)


def check_file(path: str, reviewers: list[str] | None = None) -> str:
    """Check that ``path`` is a usable labels source before anything runs; its kind."""
    kind = kind_of(path)
    if kind == "labels file":
        store = _open_store(path)
        try:
            from harness.reports.review.labelled import collect  # noqa: PLC0415 - lazy: only for a labels file

            collect(store, reviewers)
        finally:
            store.close()
    else:
        _load_case_file(path)
    return kind


def _same_text(path: str, where: str, case: Case, run_cases: dict[str, Case], run_id: str) -> Case:
    run_case = run_cases.get(case.id)
    if run_case is None:
        raise ValueError(f"{where}, field id: answer {case.id!r} is not a case of {run_id} "
                         "(were the labels made for another run?)")
    for f in TEXT_FIELDS:
        if getattr(run_case, f) != getattr(case, f):
            raise ValueError(f"{where}, field {f}: answer {case.id!r} has another {f} than in {run_id}; "
                             "a label is only about the text it was given for")
    return dataclasses.replace(run_case, annotation=case.annotation)


def _open_store(path: str):
    from harness.reports.review.store import LabelStore  # noqa: PLC0415 - lazy: only for a labels file

    try:   # read-only first: a foreign SQLite file (a run store given by mistake) is never written to
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
    except sqlite3.Error as e:
        raise ValueError(f"--labels {path}: not a readable SQLite file ({e})") from None
    if not {"sample", "labels", "meta"} <= tables:
        raise ValueError(f"--labels {path}: a SQLite file but not a labels file of harness review "
                         f"(tables {', '.join(sorted(tables)) or 'none'}; expected meta, sample, labels)")
    return LabelStore.open_existing(path)


def _from_store(path, run_cases, run_id, reviewers, adjudicators) -> TeamLabels:
    from harness.reports.review.labelled import collect  # noqa: PLC0415 - lazy: only for a labels file
    from harness.reports.review.waves import design_weights  # noqa: PLC0415 - lazy: only for a labels file

    store = _open_store(path)
    try:
        lab = collect(store, reviewers, adjudicators)
        latest, meta, everyone = store.latest(), store.meta(), tuple(store.reviewers())
    finally:
        store.close()
    cases = {cid: _same_text(path, f"{path} answer {cid!r}", c, run_cases, run_id) for cid, c in lab.cases.items()}
    dates = sorted(latest[who][cid]["saved_at"][:10] for cid, who in lab.chosen.items())
    chosen: dict[str, int] = {}
    for who in lab.chosen.values():
        chosen[who] = chosen.get(who, 0) + 1
    sample_of = (f"{meta.get('size')} of {meta.get('population')} answers drawn from {meta.get('source')} "
                 f"{meta.get('name')} with seed {meta.get('seed')}") if meta.get("size") else ""
    weights = design_weights(lab.picks, meta.get("waves"), set(cases))   # every wave of the sample combined
    gold: dict[str, int] = {}
    for kind in getattr(lab, "gold", {}).values():
        gold[kind] = gold.get(kind, 0) + 1
    prov = Provenance(path, "labels file", len(cases), len(lab.picks), dict(lab.left_out), chosen, everyone,
                      dates[0] if dates else None, dates[-1] if dates else None, sample_of, gold=gold)
    return TeamLabels(cases, weights, prov)


def _load_case_file(path: str):
    try:
        cs = load_cases(path)
    except CaseFileError as e:
        first = str(e).splitlines()[0]
        more = len(e.problems) - 1
        raise ValueError(first + (f" (and {more} more problem(s))" if more > 0 else "")) from None
    if not any(c.annotation is not None for c in cs):
        raise ValueError(f"{path} line 1, field annotation: no case of the file carries labels (an annotated "
                         "case file, or the labels file of harness review, is expected)")
    return cs


def _from_cases(path, run_cases, run_id) -> TeamLabels:
    cs = _load_case_file(path)
    cases, left = {}, {}
    for c in cs:
        where = (c.source.replace(f"{path}:", f"{path} line ", 1) if c.source.startswith(f"{path}:")
                 else f"{path} answer {c.id!r}")
        annotated = _same_text(path, where, c, run_cases, run_id)
        if c.annotation is None:
            left["without an annotation"] = left.get("without an annotation", 0) + 1
            continue
        cases[c.id] = annotated
    return TeamLabels(cases, None, Provenance(path, "case file", len(cases), len(cs), left))


def apply(data, labels: TeamLabels):
    """The run's data with the team's labels on their cases, and no other annotation (every case stays in
    the report: the labelled ones carry labels, the rest are shown without)."""
    cases, stripped = {}, 0
    for cid, case in data.cases.items():
        if cid in labels.cases:
            cases[cid] = labels.cases[cid]
        elif case.annotation is not None:
            cases[cid] = dataclasses.replace(case, annotation=None)
            stripped += 1
        else:
            cases[cid] = case
    prov = dataclasses.replace(labels.provenance, stripped=stripped)
    return dataclasses.replace(data, cases=cases), dataclasses.replace(labels, provenance=prov)
