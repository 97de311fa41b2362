"""Why two metrics disagree, in one line, chosen by rules over the annotation and the verdicts.

``RULES`` is the whole table. A rule names the metric whose definition it explains (``subject``: a
metric name, a vendor prefix ending in ``.``, or ``*`` for any), where it looks (``scope``: one
alignment row, or the whole case), a condition over the row's annotation label and the subject's
verdicts, and the sentence to show. For a divergent case the first rule, in table order, whose
subject is one of the two metrics furthest apart and whose condition holds explains the case; each
alignment row on which the metrics disagree gets the first rule that holds for any metric there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

LENIENT_AMBIGUOUS = {"deepeval.faithfulness"}
"""Metrics whose score counts an ``ambiguous`` (borderline) verdict in the answer's favour."""


def counts_for(metric: str, verdicts: set[str]) -> bool | None:
    """Does the metric count this row in the answer's favour? None when it gave no verdict.

    >>> counts_for("deepeval.faithfulness", {"ambiguous"}), counts_for("deepeval.faithfulness_penalized", {"ambiguous"})
    (True, False)
    >>> counts_for("ragas.faithfulness", {"supported", "unsupported"}), counts_for("x", {"excluded"})
    (False, None)
    """
    v = verdicts - {"excluded"}
    if not v:
        return None
    ok = {"supported"} | ({"ambiguous"} if metric in LENIENT_AMBIGUOUS else set())
    return v <= ok


@dataclass(frozen=True)
class Ctx:
    """What a rule may look at."""

    metric: str
    """The subject metric being tested."""
    row: object = None
    """The alignment row (row-scoped rules)."""
    case: object = None
    """The case (may be None when its text is unknown)."""
    score: float | None = None
    """The subject's score on the case."""

    @property
    def label(self) -> str | None:
        return getattr(self.row, "label", None)

    @property
    def verdicts(self) -> set[str]:
        return self.row.verdicts(self.metric) if self.row is not None else set()

    @property
    def raws(self) -> set[str]:
        return self.row.raws(self.metric) if self.row is not None else set()

    @property
    def passes(self) -> bool | None:
        return counts_for(self.metric, self.verdicts)


@dataclass(frozen=True)
class Rule:
    """One line of the table."""

    name: str
    subject: str
    scope: str
    when: Callable[[Ctx], bool]
    text: str


def _shared_mixed(c: Ctx) -> bool:
    """The subject judged this claim inside a unit that also carries a claim with another label."""
    if c.row is None or c.case is None:
        return False
    for m in c.row.marks.get(c.metric, []):
        if m.shared and m.unit.span is not None:
            labels = {cl.label for cl in c.case.claims_in(m.unit.span)}
            if len(labels) > 1:
                return True
    return False


def _is_miscited(cl) -> bool:
    return (cl is not None and cl.cited_context_id is not None
            and cl.cited_context_id not in {e.context_id for e in cl.evidence})


def _miscited(c: Ctx) -> bool:
    if c.row is None:
        return c.case is not None and c.case.annotated and any(_is_miscited(cl) for cl in c.case.annotation.claims)
    return _is_miscited(getattr(c.row, "claim", None))


def _no_claims(c: Ctx) -> bool:
    return (c.case is not None and c.case.annotated and not c.case.annotation.claims
            and not c.case.annotation.abstention)


def _partial_rg(c: Ctx) -> bool:
    return c.case is not None and c.case.annotated and c.score is not None and 0 < c.score < 1 and any(
        cl.label in ("not_found", "contradicted") for cl in c.case.annotation.claims)


RULES: tuple[Rule, ...] = (
    Rule("borderline-passes", "deepeval.faithfulness", "row",
         lambda c: c.label == "not_found" and c.passes is True,
         "DeepEval counts 'borderline' as faithful: a claim no passage states, and none contradicts, passes"),
    Rule("inference-no-span", "inhouse.span", "row",
         lambda c: c.label == "inference" and c.passes is False,
         "no verbatim span states this: it follows from the context, so NLI-style checks accept it "
         "and the span check does not"),
    Rule("inference-two-of-three", "trulens.", "row",
         lambda c: c.label == "inference" and any("2" in r for r in c.raws),
         "TruLens rates an inference 2 of 3: supported, but only indirectly"),
    Rule("shared-sentence", "trulens.", "row", _shared_mixed,
         "TruLens judges whole sentences: a supported and an unsupported claim in one sentence "
         "average to 2 of 3"),
    Rule("abstention-grounded", "trulens.groundedness", "row",
         lambda c: c.label == "abstention" and c.passes is True,
         "TruLens scores an abstention as grounded: declining asserts nothing unsupported"),
    Rule("abstention-answerable", "trulens.groundedness_answerability", "row",
         lambda c: c.label == "abstention" and c.passes is False,
         "the answerability variant scores an abstention as ungrounded when the context could answer"),
    Rule("miscited", "trulens.citation", "row", _miscited,
         "the [N] marker points at a passage that does not state the claim: only the citation check "
         "reads markers"),
    Rule("contradiction-passed", "*", "row",
         lambda c: c.label == "contradicted" and c.passes is True,
         "{metric} passes a claim the context contradicts"),
    Rule("stated-claim-failed", "*", "row",
         lambda c: c.label == "supported" and c.passes is False,
         "{metric} does not find support for a claim a passage states"),
    Rule("miscited-answer", "trulens.citation", "case", _miscited,
         "a [N] marker points at a passage that does not state its claim: only the citation check reads "
         "markers, and one bad marker fails the answer"),
    Rule("empty-answer", "*", "case", _no_claims,
         "nothing to judge: each metric falls back on its own value for an answer with no claims "
         "(NaN, 1 or 0)"),
    Rule("answer-level-rating", "ragas.response_groundedness", "case", _partial_rg,
         "Ragas ResponseGroundedness rates the whole answer 0, 1 or 2: any ungrounded claim halves it"),
)
"""The rules, in priority order."""

FALLBACK = "the metrics' verdicts on this answer differ (see the alignment)"


def _subject_matches(rule: Rule, metric: str) -> bool:
    if rule.subject == "*":
        return True
    if rule.subject.endswith("."):
        return metric.startswith(rule.subject)
    return metric == rule.subject


def row_disagrees(row, metrics: list[str]) -> bool:
    """Do the metrics with a verdict on this row count it differently (or does TruLens give partial
    credit)?"""
    got = {counts_for(m, row.verdicts(m)) for m in metrics if row.marks.get(m)}
    got.discard(None)
    return len(got) > 1 or any(
        m.startswith("trulens.") and any(r.strip() in ("1", "2", "1/3", "2/3") for r in row.raws(m))
        for m in metrics if row.marks.get(m))


def explain_row(row, metrics: list[str], case=None, names: dict | None = None) -> str | None:
    """The first row rule that holds for any metric on this row, or None."""
    for rule in RULES:
        if rule.scope != "row":
            continue
        for m in metrics:
            if _subject_matches(rule, m) and row.marks.get(m) and rule.when(Ctx(m, row, case)):
                return rule.text.format(metric=(names or {}).get(m, m))
    return None


def explain_case(rows, pair: tuple[str, str], case=None, scores: dict | None = None,
                 names: dict | None = None) -> tuple[str, str]:
    """(rule name, one-line reason) for why the two metrics in ``pair`` differ on a case."""
    for rule in RULES:
        for m in pair:
            if not _subject_matches(rule, m):
                continue
            score = (scores or {}).get(m)
            if rule.scope == "case":
                if rule.when(Ctx(m, None, case, score)):
                    return rule.name, rule.text.format(metric=(names or {}).get(m, m))
                continue
            for row in rows:
                if row.marks.get(m) and rule.when(Ctx(m, row, case, score)):
                    return rule.name, rule.text.format(metric=(names or {}).get(m, m))
    return "fallback", FALLBACK
