"""The adapter interface: one metric = one class behind one Protocol, found by entry point.

A metric is one folder: the module with its class (everything the project needs to know about the
metric is data on the class), the reference-judge handler the class names, ``golden/<name>.csv``
and ``card_text/<name>.md`` next to the module, and one line in the ``groundedness_harness.metrics``
entry-point group of its distribution. Adapter modules must not import vendor packages at module
level (``tests/test_registry_cli.py`` checks it): vendor code is imported inside ``score`` (or
``prepare``), so that listing metrics, ``--help`` and the reference judge stay fast.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable
from urllib.parse import urlsplit

from harness.core.errors import UnrecognisedRequest  # noqa: F401 - re-exported: part of the plug-in contract
from harness.core.records import LABELS, Case, CellResult  # noqa: F401 - LABELS re-exported

if TYPE_CHECKING:  # pragma: no cover
    import openai


class JudgeHTTPError(RuntimeError):
    """A judge call of :meth:`Endpoint.post_json` answered with a non-2xx status (0: no answer in time)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"judge HTTP {status}: {message}" if status else message)
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """Where an adapter sends its judge calls: the gateway URL of one cell.

    The URL encodes the run, case and metric, so every call is attributed. The key is a
    placeholder the gateway ignores: the real key (if any) stays in the gateway's memory.
    """

    base_url: str
    """``http://127.0.0.1:PORT/cell/<run>/<case>/<metric>/v1``."""
    model: str
    """The model id to put in requests (the judge's, or ``reference-judge``)."""
    api_key: str = "harness-gateway"
    """Placeholder; never a real key."""
    timeout_s: float = 600.0
    """Client-side timeout; the gateway enforces its own per-call timeout upstream."""
    pool: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The runner's shared HTTP connection pools (``harness.metric.http.Pools``); None builds private ones."""

    def async_openai(self) -> "openai.AsyncOpenAI":
        """An ``AsyncOpenAI`` on this cell's URL over the run's shared connection pool, SDK retries off
        (the gateway owns retries)."""
        import openai  # noqa: PLC0415 - lazy: the openai SDK costs ~0.4 s to import

        http = self.pool.async_client() if self.pool is not None else None
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                  timeout=self.timeout_s, http_client=http)

    async def post_json(self, route: str, body: dict) -> dict:
        """POST ``body`` to ``<base_url>/<route>`` (e.g. ``chat/completions``) and return the JSON reply;
        :class:`JudgeHTTPError` when the reply is not a 2xx. The harness's own scorers use it (the vendors
        keep their SDK clients).

        In a run the pool carries the in-process transport into the gateway, and the request dict goes
        to the gateway as it is and its reply dict comes back (no HTTP model, no encoding, no parsing:
        the harness's own cost per judge call); anywhere else it is a plain JSON POST with ``httpx``."""

        transport = getattr(self.pool, "transport", None)
        if hasattr(transport, "post"):
            path = f"{urlsplit(self.base_url).path.rstrip('/')}/{route}".encode()
            try:
                status, payload = await transport.post(path, body, self.timeout_s)
            except TimeoutError:
                raise JudgeHTTPError(0, f"no answer from the harness gateway in {self.timeout_s:g}s") from None
        else:
            import httpx  # noqa: PLC0415 - lazy: httpx costs ~0.1 s to import

            client = self.pool.async_client() if self.pool is not None else None
            own = client is None
            if own:
                client = httpx.AsyncClient(timeout=self.timeout_s, trust_env=False)
            try:
                r = await client.post(f"{self.base_url.rstrip('/')}/{route}", json=body, timeout=self.timeout_s,
                                      headers={"Authorization": f"Bearer {self.api_key}"})
            finally:
                if own:
                    await client.aclose()
            status = r.status_code
            try:
                payload = r.json()
            except ValueError:
                payload = {"error": {"message": r.text[:300]}}
        if not 200 <= status < 300:
            err = payload.get("error") if isinstance(payload, dict) else None
            msg = err.get("message") if isinstance(err, dict) else err
            raise JudgeHTTPError(status, str(msg or payload)[:300])
        if not isinstance(payload, dict):
            raise JudgeHTTPError(status, f"the reply is {type(payload).__name__}, not a JSON object")
        return payload

    def openai(self) -> "openai.OpenAI":
        """A sync ``OpenAI`` client on this cell's URL over the shared pool, SDK retries off."""
        import openai  # noqa: PLC0415 - lazy: the openai SDK costs ~0.4 s to import

        http = self.pool.sync_client() if self.pool is not None else None
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                             timeout=self.timeout_s, http_client=http)


@dataclass(frozen=True)
class JudgeRequest:
    """One chat-completion request as the reference judge sees it."""

    metric: str
    """The metric name from the cell URL."""
    case: Case
    """The case of the cell (the reference judge answers from its annotation)."""
    body: dict
    """The request body as sent (OpenAI chat-completions shape)."""

    @property
    def messages(self) -> list[dict]:
        """The request's messages."""
        return list(self.body.get("messages") or [])

    def text_of(self, role: str | None = None) -> str:
        """All message text of one role (or of all roles), joined with blank lines.

        Content given as a list of parts (``[{"type": "text", "text": ...}]``) is flattened.
        """
        out = []
        for m in self.messages:
            if role is not None and m.get("role") != role:
                continue
            c = m.get("content")
            if isinstance(c, list):
                c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
            out.append(c or "")
        return "\n\n".join(out)

    @property
    def prompt(self) -> str:
        """Every message's text, joined."""
        return self.text_of(None)

    def is_case_answer(self, text: str | None) -> bool:
        """Is ``text`` (a section a handler cut from the prompt) this case's answer, whitespace aside?"""
        return text is not None and " ".join(text.split()) == " ".join(self.case.answer.split())

    @property
    def schema_name(self) -> str | None:
        """The ``response_format.json_schema.name``, when a json_schema is requested."""
        rf = self.body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("name")
        return None

    @property
    def response_type(self) -> str:
        """``json_schema`` | ``json_object`` | ``text``."""
        return (self.body.get("response_format") or {}).get("type", "text")


@dataclass(frozen=True)
class LabelReading:
    """How the reference judge reads each annotation label for one metric (a row of the label table).

    >>> r = LabelReading({"supported": "yes", "inference": "yes", "not_found": "borderline",
    ...                   "contradicted": "no"}, "DeepEval verdict")
    >>> r["not_found"], r.meaning
    ('borderline', 'DeepEval verdict')
    """

    answers: dict
    """annotation label (supported | inference | not_found | contradicted) -> what the judge answers."""
    meaning: str
    """What that answer is, in the vendor's terms (shown on the card)."""

    def __getitem__(self, label: str):
        return self.answers[label]

    def claims_read_as(self, case: Case, answer) -> list:
        """The case's judged claims whose label this reading answers with ``answer`` (e.g. ``"no"``)."""
        return [c for c in case.judged_claims() if self.answers[c.label] == answer]


@dataclass(frozen=True)
class Shim:
    """A documented change to vendor behaviour, shown on the metric's card (each has a test)."""

    where: str
    """The module that applies it, relative to the repository (or package) root."""
    text: str
    """What the trap is, what changes and why it is the minimal change (one paragraph)."""


@dataclass(frozen=True)
class UnitCredit:
    """How one unit's verdict counts toward the metric's score: the metric's own scoring rule, read by
    the report's reasons (which metric counts a borderline verdict as faithful, what a graded ``2/3`` is).

    >>> UnitCredit()("supported", "yes"), UnitCredit()("ambiguous", "borderline"), UnitCredit()("excluded", "x")
    (1.0, 0.0, None)
    >>> UnitCredit(ambiguous=1.0)("ambiguous", "borderline"), UnitCredit(graded=3)("ambiguous", "2/3")
    (1.0, 0.667)
    >>> UnitCredit(raw={"abstained": 1.0})("unsupported", "abstained")
    1.0
    """

    ambiguous: float = 0.0
    """The credit of an ``ambiguous`` (borderline) unit: 1.0 where the score counts it as faithful."""
    graded: int | None = None
    """A raw verdict ``k/N`` with this N counts k/N (partial credit on a graded scale); None: no scale."""
    raw: dict = dataclasses.field(default_factory=dict)
    """Raw verdict -> credit, for verdicts the score treats by a rule of its own (checked first)."""
    raw_rule: str = ""
    """That rule in words, for a reason (e.g. "scores an abstention by whether the passages could answer")."""

    def graded_value(self, raw: str) -> float | None:
        """``k/N`` on this metric's scale as a credit, else None."""
        if self.graded is None:
            return None
        k, sep, n = str(raw).partition("/")
        if not sep or not k.strip().isdigit() or n.strip() != str(self.graded):
            return None
        return round(int(k) / self.graded, 3)

    def __call__(self, verdict: str, raw: str) -> float | None:
        """The unit's credit; None when the score does not count it (an excluded unit)."""
        if verdict == "excluded":
            return None
        if raw in self.raw:
            return self.raw[raw]
        g = self.graded_value(raw)
        if g is not None:
            return g
        if verdict == "supported":
            return 1.0
        return self.ambiguous if verdict == "ambiguous" else 0.0


@dataclass(frozen=True)
class RunOption:
    """A ``harness run`` option that a metric declares; the command line adds it from the registry, so
    the engine names no metric's options. Several metrics may declare the same option (one flag).

    >>> o = RunOption("--similarity-threshold", "threshold", float, 0.8, "a help text", label="similarity threshold")
    >>> o.dest, o.describe(0.8)
    ('similarity_threshold', 'similarity threshold: 0.80')
    """

    flag: str
    """The option, e.g. ``--similarity-threshold``."""
    arg: str
    """The keyword of the metric's constructor that receives the value."""
    type: Any = str
    """Converts the command-line text (argparse ``type``)."""
    default: Any = None
    """The value when the option is not given."""
    help: str = ""
    """The ``--help`` text."""
    metavar: str | None = None
    """The value's name in ``--help``."""
    check: Any = None
    """None, or ``f(value)`` raising ValueError with a message for a value out of range."""
    label: str = ""
    """How the run's header line names the value (default: the flag without dashes)."""
    fmt: str = "{:.2f}"
    """How the header line formats the value."""

    @property
    def dest(self) -> str:
        """The argparse destination of the flag."""
        return self.flag.lstrip("-").replace("-", "_")

    def describe(self, value) -> str:
        """``label: value`` for the run's header line."""
        return f"{self.label or self.flag.lstrip('-').replace('-', ' ')}: {self.fmt.format(value)}"


@runtime_checkable
class Metric(Protocol):
    """What every adapter class provides. Everything but ``score`` is data that the rest of the
    project (tables, cards, tests, the reference judge) reads from the registry; a run records what its
    report reads (:class:`harness.metric.facts.MetricFacts`), and the report reads that."""

    name: ClassVar[str]
    """Registered name in the vendor's namespace, e.g. ``ragas.faithfulness`` (= the entry-point name)."""
    version: ClassVar[str]
    """The adapter's version; bump it when what the metric computes or how the reference judge
    reads a label changes (finished cells of an older version are recomputed on resume)."""
    display_name: ClassVar[str]
    """Human name for reports."""
    short_name: ClassVar[str]
    """At most ~14 characters, for the terminal table."""
    order: ClassVar[int]
    """Display order in tables and reports, ascending (ties by name)."""
    higher_is_better: ClassVar[bool]
    """Direction of the score."""
    score_range: ClassVar[tuple[float, float]]
    """The range of a score (inclusive)."""
    vendor: ClassVar[str]
    """``inhouse`` | ``ragas`` | ``deepeval`` | ``trulens`` | ..."""
    vendor_package: ClassVar[str | None]
    """The distribution whose version the card names (None: this repository's own code)."""
    unit: ClassVar[str]
    """What one unit of judgement is: claim | statement | sentence | answer."""
    definition: ClassVar[str]
    """One paragraph: what the score means, in the vendor's definition."""
    card_notes: ClassVar[str]
    """Notes the card quotes under "Adapter Notes" (Markdown; may be empty)."""
    shims: ClassVar[tuple[Shim, ...]]
    """Every documented change to vendor behaviour (empty: the vendor code runs unpatched)."""
    label_reading: ClassVar[LabelReading | None]
    """How the reference judge reads each annotation label for this metric (None: no claim label)."""
    flags: ClassVar[tuple]
    """The :class:`harness.core.vocab.Flag` s this metric may raise beyond the shared ones (may be empty)."""
    extra: ClassVar[str | None]
    """The package's optional extra that installs this metric's vendor (None: nothing to install)."""
    installs_alone: ClassVar[str | None]
    """None, or how to get the metric when its extra cannot be installed beside the others (an environment
    of its own): where its vendor is missing the registry lists it apart (:func:`harness.metric.registry.apart`)
    with this text, and naming it says so; where it is installed it is a metric like any other."""
    requires: ClassVar[tuple[str, ...]]
    """Modules that must be importable for the metric to run (checked without importing them)."""
    run_options: ClassVar[tuple[RunOption, ...]]
    """The ``harness run`` options the metric takes (each passed to its constructor; empty: none)."""
    unit_credit: ClassVar[UnitCredit]
    """How a unit verdict counts toward the score (default: supported 1, anything else 0)."""
    uses_judge: ClassVar[bool]
    """Does an LLM judge decide (False: e.g. an embedding similarity; reasons then never say "judged")."""
    vendor_packages: ClassVar[tuple[str, ...]]
    """Distributions whose versions decide what the metric computes: they go into the run spec and so
    into the cell cache's key (an upgrade recomputes the cells). Default: ``(vendor_package,)``."""
    report_sections: ClassVar[Any]
    """None, or ``f(data) -> list[Section]``: the metric's own sections of a run's report (a staticmethod
    taking :class:`harness.reports.analysis.data.RunData`, returning :class:`harness.reports.model.blocks.Section` s)."""
    card_sections: ClassVar[Any]
    """None, or ``f(data, card) -> list[str]``: Markdown lines the metric adds to the card of metric
    ``card`` (its own, or one it builds on), from the canonical reference run."""
    judge: ClassVar[str]
    """The reference-judge handler, ``"module:function"`` taking a :class:`JudgeRequest` and
    returning the reply text; imported only when the reference judge answers this metric."""

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        """Score one case with the vendor's own code, all judge calls through ``endpoint``.

        A class may also define ``prepare()`` (a classmethod): the runner calls it once per process
        before the first cell, to import the vendor stack.
        """
        ...


REQUIRED = ("name", "version", "display_name", "short_name", "order", "higher_is_better", "vendor", "unit",
            "definition", "judge")
DEFAULTS = {"score_range": (0.0, 1.0), "vendor_package": None, "card_notes": "", "shims": (),
            "label_reading": None, "flags": (), "extra": None, "installs_alone": None, "requires": (),
            "run_options": (), "unit_credit": UnitCredit(), "uses_judge": True, "vendor_packages": None,
            "report_sections": None, "card_sections": None}
"""Protocol attributes a class may leave out, with the value it then has."""


def check(cls: type) -> type:
    """Validate an adapter class against the Protocol and fill the optional attributes' defaults."""
    for attr in REQUIRED:
        if not hasattr(cls, attr):
            raise TypeError(f"adapter {cls.__module__}.{cls.__qualname__} lacks class attribute {attr!r}")
    if not callable(getattr(cls, "score", None)):
        raise TypeError(f"adapter {cls.__module__}.{cls.__qualname__} lacks method 'score'")
    if ":" not in cls.judge:
        raise TypeError(f"adapter {cls.__qualname__}: judge must be 'module:function', got {cls.judge!r}")
    for attr, default in DEFAULTS.items():
        if not hasattr(cls, attr):
            setattr(cls, attr, default)
    if cls.vendor_packages is None:
        cls.vendor_packages = (cls.vendor_package,) if cls.vendor_package else ()
    return cls


def register(cls: type) -> type:
    """Class decorator: check an adapter class against the Protocol. Discovery itself is by entry
    point (``groundedness_harness.metrics``, see :mod:`harness.metric.registry`)."""
    return check(cls)


def metric_dir(cls: type) -> str:
    """The folder of the module that defines ``cls``: it holds the metric's data files."""

    return os.path.dirname(os.path.abspath(sys.modules[cls.__module__].__file__))


def golden_path(cls: type) -> str:
    """``<metric folder>/golden/<name>.csv``: the metric's golden table (tests read it)."""

    return os.path.join(metric_dir(cls), "golden", f"{cls.name}.csv")


def card_text_path(cls: type) -> str:
    """``<metric folder>/card_text/<name>.md``: the card prose written by hand."""

    return os.path.join(metric_dir(cls), "card_text", f"{cls.name}.md")
