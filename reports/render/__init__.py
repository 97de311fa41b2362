"""Renderers: HTML, Markdown and plots, each laid out from a finished :mod:`harness.reports.model` object.

A renderer computes nothing: no statistic, no selection, no ordering that the model has not made."""
