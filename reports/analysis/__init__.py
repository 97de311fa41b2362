"""Pure analysis of a run: what the store's cells, units and ledgers say (divergence, agreement, the choice of
metric, the CI gate, statistics, cost, stability, robustness, the frontier).

Nothing here builds a report section or lays anything out: :mod:`harness.reports.model` builds the sections
from these results, :mod:`harness.reports.render` lays them out."""
