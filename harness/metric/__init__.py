"""The plug-in contract a third-party metric imports: the Protocol and registration (:mod:`harness.metric.protocol`,
the one file to read), the endpoint (:mod:`harness.metric.endpoint`), the reference judge's request
(:mod:`harness.metric.judge_request`) and the records a class declares (:mod:`harness.metric.declare`).

Layer: imports only :mod:`harness.core`. The documented imports stay short::

    from harness.metric import Endpoint, Metric, register

The vendor switches (telemetry off, no dotenv, no hub downloads: :mod:`harness.metric.vendor_env`) are set by
whatever runs the harness (the command, its workers, ``harness.evaluate``), never by importing this package.
"""
from harness.core.errors import UnrecognisedRequest
from harness.metric.declare import LabelReading, RunOption, Shim, UnitCredit
from harness.metric.endpoint import Endpoint, JudgeHTTPError
from harness.metric.judge_request import JudgeRequest
from harness.metric.protocol import Metric, register

__all__ = ["Endpoint", "JudgeHTTPError", "JudgeRequest", "LabelReading", "Metric", "RunOption", "Shim", "UnitCredit", "UnrecognisedRequest", "register"]
