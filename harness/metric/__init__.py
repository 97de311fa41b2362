"""The plug-in contract a third-party metric imports: the Protocol, the endpoint, registration.

Layer: imports only :mod:`harness.core`. The documented imports stay short::

    from harness.metric import Endpoint, Metric, register

Importing this package sets the vendor switches (telemetry off, no dotenv, no hub downloads:
:mod:`harness.metric.vendor_env`) before any metric can import its vendor.
"""
from harness.metric import vendor_env  # noqa: F401 - imported for its effect: the vendor switches
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
