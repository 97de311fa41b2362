"""The report model: everything a report, a card or a command computes from a run store.

Nothing here lays anything out; :mod:`harness.reports.render` does, from finished models."""
