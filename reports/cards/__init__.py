"""Metric cards: the generator (:mod:`harness.reports.cards.generate`) and the committed cards beside it."""
