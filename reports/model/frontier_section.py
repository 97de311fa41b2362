"""The cost-quality frontier (:mod:`harness.reports.analysis.frontier`) as a report section: a table and the
plot."""
from __future__ import annotations

from harness.reports.analysis.frontier import TITLE, Frontier, latency_text
from harness.reports.model.blocks import Plot, Section, Table


def section(fr: Frontier, names: dict[str, str]):
    """The report section (a table and the plot)."""
    rows = [[names.get(p.metric, p.metric),
             "\u2013" if p.agreement is None else
             f"{p.agreement:.2f}" + (f" [{p.low:.2f}, {p.high:.2f}]" if p.low is not None else ""),
             f"{p.calls:.1f}", f"{p.tokens:,.0f}", "n/a" if p.money is None else f"{p.money:.3g}",
             latency_text(p),
             ", ".join(x for x, on in (("cost", p.metric in fr.front_cost),
                                       ("latency", p.metric in fr.front_latency)) if on) or "\u2013"]
            for p in fr.points]
    return Section("frontier", TITLE, [
        fr.note, Plot("frontier", fr, "agreement against cost and latency per answer, Pareto front marked",
                      "frontier.svg"),
        Table(["metric", fr.title, "judge calls / answer", "tokens / answer", "money / answer",
               "latency ms / answer", "on the Pareto front of"], rows)])
