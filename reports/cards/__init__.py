"""Metric cards: the generator (:mod:`reports.cards.generate`) and the committed cards beside it."""
