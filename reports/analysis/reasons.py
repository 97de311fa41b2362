"""Why two metrics disagree, derived from their own unit verdicts and scoring rules.

Each alignment row (an annotated claim, or an answer sentence) holds each metric's units on it. A
metric's *credit* on a row is what its own scoring rule (``unit_credit`` on its class,
:class:`harness.metric.protocol.UnitCredit`, as the run recorded it: ``facts``, metric ->
:class:`harness.metric.facts.MetricFacts`) makes of those units (:func:`weight`): 1 for a supported
unit, 0 for an unsupported one, k/N for a rating on a graded scale, 1 for a borderline verdict where the
score counts it as faithful, and no credit at all for an excluded unit. A divergence reason is read off the row where the two metrics' credits differ most, and says
which kind of difference it is:

- ``definition``: the same judgement of a claim, scored differently (a borderline verdict that passes; a
  located quote required for a claim the judge called supported; a graded scale; an answer-level
  rating; a metric's own rule for abstentions);
- ``judgement``: the same claim judged differently under the metrics' different prompts (or, where one
  metric has no judge, read differently by their methods);
- ``decomposition``: different units (one unit spanning several claims, or no unit on the claim);
- ``coverage``: a unit that was not judged (trivial filter, unparsable score, fallback, no claims).

Where the row carries a human label, the reason says which metric agrees with it. Every verdict a
reason cites is quoted as the vendor gave it and is recorded in :class:`Reason` ``cited``, so a test
can check each reason against the run store.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.metric.facts import MetricFacts

KINDS = ("definition", "judgement", "decomposition", "coverage")
WHOLE = ("answer", "judge")
FALLBACK = "the scores differ, but no unit verdict on the aligned rows explains it (see the alignment)"


@dataclass(frozen=True)
class Reason:
    """One derived reason."""

    kind: str
    """definition | judgement | decomposition | coverage ("unexplained" for the fallback)."""
    text: str
    """The line shown, starting with the kind."""
    row: int | None = None
    """Index of the alignment row it is read from (None: the whole case)."""
    cited: dict = field(default_factory=dict)
    """metric -> the raw verdicts the text quotes for it (each is one of its units' on that row)."""
    summary: str = ""
    """The mechanism without the case's text (the report groups divergences by it)."""


def weight(facts: dict[str, MetricFacts], metric: str, verdict: str, raw: str) -> float | None:
    """How a metric's score counts one unit, by its own rule; None when it does not count it.

    >>> f = {"x": MetricFacts("x")}
    >>> weight(f, "x", "supported", "yes"), weight(f, "x", "ambiguous", "borderline"), weight(f, "x", "excluded", "")
    (1.0, 0.0, None)
    """
    return facts[metric].unit_credit(verdict, raw)


def credit(row, metric: str, facts: dict[str, MetricFacts]) -> float | None:
    """The metric's mean unit weight on the row (None: no counted unit there)."""
    marks = row.marks.get(metric)
    if not marks:
        return None
    credit_of = facts[metric].unit_credit   # looked up once per row, not once per unit (as weight() would)
    ws = [w for mk in marks if (w := credit_of(mk.unit.verdict, mk.unit.raw_verdict)) is not None]
    return sum(ws) / len(ws) if ws else None


def counts_for(facts: dict[str, MetricFacts], metric: str, verdicts: set[str]) -> bool | None:
    """Does the metric count a row with these normalised verdicts in the answer's favour? None: no verdict.

    >>> f = {"x": MetricFacts("x")}
    >>> counts_for(f, "x", {"supported"}), counts_for(f, "x", {"supported", "unsupported"})
    (True, False)
    """
    ws = [w for v in verdicts if (w := weight(facts, metric, v, "")) is not None]
    return None if not ws else all(w >= 1.0 for w in ws)


def _raws(row, metric: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(mk.unit.raw_verdict) for mk in row.marks.get(metric, [])))


def _q(raws) -> str:
    return " and ".join(f"'{r}'" for r in raws)


def _short(text: str, n: int = 60) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[: n - 3] + "..."


def _human(row, lo: str, hi: str, cl, ch, name) -> str:
    label = getattr(row, "label", None) if getattr(row, "kind", None) == "claim" else None
    if label == "inference":
        return " Human label: inference (follows from the passages; no passage states it)."
    if label not in ("supported", "not_found", "contradicted"):
        return ""
    good = label == "supported"
    pairs = ((lo, cl), (hi, ch))
    # full credit agrees with "supported", none with the others; partial credit agrees with neither
    agree = [m for m, c in pairs if c is not None and (c >= 1.0 - 1e-9 if good else c <= 1e-9)]
    partial = [f"{name(m)} gives partial credit, {c:.2f}" for m, c in pairs if c is not None and 1e-9 < c < 1.0 - 1e-9]
    who = (" and ".join(name(m) for m in agree) + (" agrees" if len(agree) == 1 else " agree")) if agree else "neither agrees"
    return f" Human label: {label} ({'; '.join([who] + partial)})."


def explain_pair(row, lo: str, hi: str, names: dict | None = None, index: int | None = None,
                 whole: list | None = None, *, facts: dict[str, MetricFacts]) -> Reason | None:
    """Why ``lo`` gives this row less credit than ``hi``, or None when it does not.

    ``whole``: ``hi``'s whole-answer units, when it rates the answer as a whole and that rating is its
    top one (it then has no unit on the row, and the rating stands for every row).
    """
    nm = lambda m: (names or {}).get(m, m)  # noqa: E731
    cl, ch = credit(row, lo, facts), credit(row, hi, facts)
    rl, rh = _raws(row, lo), _raws(row, hi)
    hs = f"{nm(hi)} rated it {_q(rh)}"
    if whole:
        ch, rh = 1.0, tuple(dict.fromkeys(str(u.raw_verdict) for u in whole))
        hs = f"{nm(hi)} rated the whole answer {_q(rh)}"
    if cl is None:
        return None
    where = f"on '{_short(row.text)}': "
    human = _human(row, lo, hi, cl, ch, nm)

    def out(kind: str, text: str, cited: dict, summary: str) -> Reason:
        return Reason(kind, f"{kind}: {where}{text}.{human}", index, cited, f"{kind}: {summary}")

    if ch is None:
        if rh:   # units there, none counted
            why = next((mk.unit.reason for mk in row.marks[hi] if mk.unit.reason), None)
            why = f" ({_short(why, 90)})" if why else ""
            return out("coverage", f"{nm(hi)} did not judge it ({_q(rh)}{why}); {nm(lo)} rated it {_q(rl)}",
                       {hi: rh, lo: rl}, f"{nm(hi)} leaves a unit unjudged ({_q(rh)})")
        return out("decomposition", f"{nm(hi)}'s own units leave this part of the answer out; {nm(lo)} rated it "
                                    f"{_q(rl)}", {lo: rl}, f"{nm(hi)}'s units leave out a part {nm(lo)} judges")
    if cl >= ch - 1e-9:
        return None
    for m, other, oraws in ((lo, hi, rh), (hi, lo, rl))[: 1 if whole else 2]:
        shared = [mk for mk in row.marks.get(m, []) if mk.shared]
        if shared and not any(mk.shared for mk in row.marks.get(other, [])):
            u = shared[0].unit
            return out("decomposition", f"{nm(m)} judged it inside one larger unit, '{_short(u.text)}', rated "
                                        f"'{u.raw_verdict}'; {nm(other)} judged it on its own, {_q(oraws)}",
                       {m: (str(u.raw_verdict),), other: oraws},
                       f"{nm(m)} judges one unit spanning several claims that {nm(other)} judges apart")
    lenient = tuple(dict.fromkeys(str(mk.unit.raw_verdict) for mk in row.marks.get(hi, [])
                                  if mk.unit.verdict == "ambiguous" and facts[hi].unit_credit.ambiguous >= 1.0))
    if lenient and not whole:
        return out("definition", f"{nm(hi)} rated it {_q(lenient)} and its score counts that as faithful; "
                                 f"{nm(lo)} rated it {_q(rl)} and counts it against", {hi: lenient, lo: rl},
                       f"{nm(hi)} counts {_q(lenient)} as faithful; {nm(lo)} does not")
    said = tuple(r for r in rl if r.startswith("supported ("))
    if said and ch >= 1.0:
        return out("definition", f"{nm(lo)}'s judge also said supported, but the metric counts a claim only with "
                                 f"a quote located in the passage: {_q(said)}; {hs}", {lo: said, hi: rh},
                       f"{nm(lo)} needs a located quote for a claim its judge called supported")
    own = facts[lo].unit_credit
    ruled = tuple(r for r in rl if r in own.raw)
    if ruled:
        return out("definition", f"{nm(lo)} {own.raw_rule} ({_q(ruled)}); {hs}", {lo: ruled, hi: rh},
                   f"{nm(lo)} {own.raw_rule}")
    graded = tuple(r for r in rl if (g := own.graded_value(r)) is not None and 0.0 < g < 1.0)
    if graded and ch >= 1.0:
        return out("definition", f"{nm(lo)} grades on a 0-{own.graded} scale and rated it {_q(graded)} (partial "
                                 f"credit); {hs}", {lo: graded, hi: rh},
                   f"{nm(lo)} gives partial credit on its 0-{own.graded} scale")
    if facts[lo].uses_judge and facts[hi].uses_judge:
        return out("judgement", f"{nm(lo)} rated it {_q(rl)}, {hs}: the same claim judged differently under their "
                                f"prompts", {lo: rl, hi: rh}, f"{nm(lo)} and {nm(hi)} judge the same claim differently")
    unjudged = " and ".join(nm(m) for m in (lo, hi) if not facts[m].uses_judge)
    return out("judgement", f"{nm(lo)} rated it {_q(rl)}, {hs}: the same claim read differently by their methods "
                            f"({unjudged} decides without a judge)", {lo: rl, hi: rh},
               f"{nm(lo)} and {nm(hi)} read the same claim differently (one decides without a judge)")


def _whole(rows, metric: str) -> list:
    return [mk.unit for r in rows if r.kind in WHOLE for mk in r.marks.get(metric, [])]


def _only_whole(rows, metric: str) -> bool:
    return bool(_whole(rows, metric)) and not any(r.marks.get(metric) for r in rows if r.kind not in WHOLE)


def _whole_reason(rows, w: str, other: str, scores, nm, facts: dict[str, MetricFacts]) -> Reason:
    """A whole-answer metric against one that scores units: its ratings, and the other's unit credits."""
    units = _whole(rows, w)
    raws = tuple(str(u.raw_verdict) for u in units)
    score = (scores or {}).get(w)
    why = next((u.reason for u in units if u.reason), None)
    text = (f"definition: {nm(w)} rates the whole answer, not its claims: it rated it {_q(raws)}"
            f"{f' (score {score:.2f})' if score is not None else ''}{f': {_short(why, 90)}' if why else ''}")
    counted = [(r, c) for r in rows if r.kind not in WHOLE and (c := credit(r, other, facts)) is not None]
    cited = {w: raws}
    if counted:
        text += f"; {nm(other)} credits {sum(c for _, c in counted):g} of {len(counted)} rows"
        lenient = [(r, str(mk.unit.raw_verdict)) for r, _ in counted for mk in r.marks[other]
                   if mk.unit.verdict == "ambiguous" and facts[other].unit_credit.ambiguous >= 1.0]
        if lenient:
            text += f", counting {_q(dict.fromkeys(x for _, x in lenient))} on '{_short(lenient[0][0].text)}' as faithful"
            cited[other] = tuple(dict.fromkeys(x for _, x in lenient))
    return Reason("definition", text + "." + _human_labels(rows), None, cited,
                  f"definition: {nm(w)} rates the whole answer, not its claims")


def _human_labels(rows) -> str:
    """The human labels of the answer's claims, counted (a whole-answer rating has no row to set one
    against); an inference is said as what it is.

    >>> from types import SimpleNamespace as R
    >>> _human_labels([R(kind="claim", label="supported"), R(kind="claim", label="inference")])
    ' Human labels: 1 supported, 1 inference (follows from the passages; no passage states it).'
    """
    labels = [lab for r in rows if getattr(r, "kind", None) == "claim" and (lab := getattr(r, "label", None))]
    if not labels:
        return ""
    counts = ", ".join(f"{labels.count(lab)} {lab}" for lab in dict.fromkeys(labels))
    note = " (follows from the passages; no passage states it)" if "inference" in labels else ""
    return f" Human labels: {counts}{note}."


def explain_case(rows, pair: tuple[str, str], case=None, scores: dict | None = None,
                 names: dict | None = None, flags: dict | None = None, *,
                 facts: dict[str, MetricFacts]) -> tuple[str, str]:
    """(kind, one-line reason) for why ``pair`` = (lower, higher metric) differ on a case."""
    r = case_reason(rows, pair, scores, names, flags, facts=facts)
    return r.kind, r.text


def case_reason(rows, pair: tuple[str, str], scores: dict | None = None, names: dict | None = None,
                flags: dict | None = None, *, facts: dict[str, MetricFacts]) -> Reason:
    """The :class:`Reason` for a divergent case: a metric that judged no unit; an answer-level rating
    against unit scores; else the row where the pair's credits differ most (answer order breaks ties);
    else the fallback."""
    lo, hi = pair
    nm = lambda m: (names or {}).get(m, m)  # noqa: E731
    for m in (hi, lo):
        fl = [f for f in (flags or {}).get(m, ()) if f.startswith(("no_claims", "no_verdicts", "all_trivial"))]
        if fl and not any(mk.unit.verdict != "excluded" for row in rows for mk in row.marks.get(m, [])):
            return Reason("coverage", f"coverage: {nm(m)} judged no unit of this answer and returns its own value "
                                      f"for that ({', '.join(fl)}).", None, {},
                          f"coverage: {nm(m)} judges no unit and returns its own value ({', '.join(fl)})")
    best, gap = None, 0.0
    lo_whole, hi_whole = _only_whole(rows, lo), _only_whole(rows, hi)
    if not lo_whole:
        for i, row in enumerate(rows):
            if row.kind in WHOLE or row.kind == "unaligned":
                continue
            cl = credit(row, lo, facts)
            if hi_whole:   # only a top rating of the whole answer stands for every row
                if any(weight(facts, hi, u.verdict, u.raw_verdict) != 1.0 for u in _whole(rows, hi)):
                    break
                got = (explain_pair(row, lo, hi, names, i, whole=_whole(rows, hi), facts=facts)
                       if cl is not None else None)
                g = 1.0 - cl if got is not None else 0.0
            else:
                got = explain_pair(row, lo, hi, names, i, facts=facts)
                ch = credit(row, hi, facts)
                g = ((1.0 if ch is None else ch) - cl) if got is not None else 0.0
            if got is not None and g > gap + 1e-9:
                best, gap = got, g
    if best is not None:
        return best
    if lo_whole or hi_whole:
        return _whole_reason(rows, lo if lo_whole else hi, hi if lo_whole else lo, scores, nm, facts)
    return Reason("unexplained", FALLBACK, None, {}, FALLBACK)


def row_disagrees(row, metrics: list[str], facts: dict[str, MetricFacts]) -> bool:
    """Do the metrics with a unit on this row give it different credit (or does one not judge it)?"""
    if row.kind in WHOLE:   # answer-level units of different metrics rate different things
        return False
    present = [m for m in metrics if row.marks.get(m)]
    got = {credit(row, m, facts) for m in present}
    return len(got) > 1 or any(0 < (c or 0) < 1 for c in got)


def explain_row(row, metrics: list[str], case=None, names: dict | None = None, *,
                facts: dict[str, MetricFacts]) -> str | None:
    """The reason for the widest credit gap on this row between the metrics that have units on it."""
    if row.kind in WHOLE:
        return None
    present = [m for m in metrics if row.marks.get(m)]
    credits = {m: credit(row, m, facts) for m in present}   # each metric's credit once (a 100k report asks it ~1M times)
    counted = [m for m in present if credits[m] is not None]
    if not counted:
        return None
    lo = min(counted, key=lambda m: (credits[m], metrics.index(m)))
    def rank(m):   # the highest credit first; a metric with units but no credit (coverage) after those
        c = credits[m]
        return (-(c if c is not None else -1.0), metrics.index(m))

    his = sorted((m for m in present if m != lo), key=rank)
    for hi in his:
        got = explain_pair(row, lo, hi, names, facts=facts)
        if got is not None:
            return got.text
    return None
