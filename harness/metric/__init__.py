"""The plug-in contract a third-party metric imports: the Protocol, the endpoint, registration.

Layer: imports only :mod:`harness.core`. The documented imports stay short::

    from harness.metric import Endpoint, Metric, register

The vendor switches (telemetry off, no dotenv, no hub downloads: :mod:`harness.metric.vendor_env`) are set by
whatever runs the harness (the command, its workers, ``harness.evaluate``), never by importing this package.
"""
from harness.metric.protocol import (
    Endpoint,
    JudgeHTTPError,
    JudgeRequest,
    LabelReading,
    Metric,
    RunOption,
    Shim,
    UnitCredit,
    UnrecognisedRequest,
    register,
)

__all__ = ["Endpoint", "JudgeHTTPError", "JudgeRequest", "LabelReading", "Metric", "RunOption", "Shim", "UnitCredit", "UnrecognisedRequest", "register"]
