"""Errors shared across the project. This module imports nothing from the project, so any layer can
raise them without pointing up (the command line turns them into exit codes)."""
from __future__ import annotations


class BadInput(Exception):
    """Bad input from the user (a case file, a metric name, an option): exit code 2 with this one-line
    message, never a traceback."""


class UnrecognisedRequest(Exception):
    """The reference judge does not know this request: never a guess."""

    def __init__(self, metric: str, step: str, prompt: str):
        self.metric, self.step, self.prompt = metric, step, prompt
        super().__init__(f"reference judge: unrecognised request for metric {metric!r} "
                         f"(step: {step}); prompt starts: {prompt[:200]!r}")
