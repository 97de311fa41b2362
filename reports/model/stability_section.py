"""The words of judge stability across repeats (:mod:`harness.reports.analysis.stability`): the report section
(a metric card's paragraph is laid out by :mod:`harness.reports.render.card`)."""
from __future__ import annotations

from harness.reports.analysis.stability import TITLE, MetricStability, Stability
from harness.reports.model.blocks import Section, Table

TRIVIAL = ("The reference judge reads the labels and answers the same way every time, so every metric is "
           "stable by construction here: no spread, no flipped decision, full agreement between repeats. That is "
           "a property of this judge, not a finding about the metrics; rerun with a real judge and --repeats to "
           "measure it.")
HEADS = ["metric", "request sampling", "answers", "score SD (mean / max)", "decision flips", "kappa between repeats",
         "same score every repeat", "unscored / NaN / error / misfit reply, per repeat"]
NO_EVIDENCE = "deterministic judge settings: no evidence about stability"


def _pct(v) -> str:
    return "\u2013" if v is None else f"{v:.0%}"


def _num(v) -> str:
    return "\u2013" if v is None else f"{v:.3f}"


def row(s: MetricStability, name: str) -> list[str]:
    """One metric's row of the section's table."""
    per = "; ".join(f"r{r.repeat}: {_pct(r.unscored)} / {_pct(r.nan)} / {_pct(r.error)} / {_pct(r.misfit)}"
                    for r in s.rates)
    settings = s.sampling or "not recorded"
    if s.deterministic and not s.flip_rate and not s.sd_max:
        settings += f" ({NO_EVIDENCE})"
    return [name, settings, str(s.answers), f"{_num(s.sd_mean)} / {_num(s.sd_max)}", _pct(s.flip_rate),
            "\u2013" if s.kappa is None else f"{s.kappa:.2f}", _pct(s.same_score), per]


def section(st: Stability, names: dict[str, str]):
    """The report section (None when the run has one repeat)."""
    if st.repeats < 2:
        return None
    b = Section("stability", TITLE, [f"Every cell was judged {st.repeats} times (--repeats {st.repeats}); each "
                                   "vendor kept its own sampling settings."])
    if st.trivial:
        b.parts.append(TRIVIAL)
        return b
    b.parts.append("Request sampling: the temperature (and top_p, seed, n where sent) each metric's judge requests "
                   "asked for; 'default' means the vendor sent none and the server's own default applied. A metric "
                   "whose every request asks for temperature 0 shows the judge's determinism, not its own stability: "
                   "no movement there is no evidence either way (a score that moves at temperature 0 is the judge's "
                   "own nondeterminism). Score SD: the standard deviation of an answer's score over "
                   "its repeats. Decision flips: the share of answers called grounded in one repeat and ungrounded in "
                   "another (ungrounded below the top of the score range). A kappa difference between two metrics "
                   "smaller than their flips may be judge noise.")
    b.parts.append(Table(HEADS, [row(s, names.get(s.metric, s.metric)) for s in st.metrics]))
    return b

