"""Where the run store keeps each metric's facts (:class:`harness.metric.facts.MetricFacts`): the rules a report
of the run reads (score range and direction, unit credit, whether a judge decides, whether it counts toward the
divergence spread, names, vendor packages, its report-section handler), as the run found them on the metric's
class when it started.

One table, ``metric_facts``, one row per metric the run selected (a resume with the same metric writes its row
again). A store written before the table has none: a report then falls back to the installed adapters
(:func:`harness.reports.analysis.data.registry_facts`, the one place a report reads the registry).
"""
from __future__ import annotations

import json

from harness.metric.facts import MetricFacts
from harness.metric.protocol import UnitCredit

SCHEMA = """
CREATE TABLE IF NOT EXISTS metric_facts (
    metric TEXT PRIMARY KEY, version TEXT NOT NULL, vendor TEXT NOT NULL, display_name TEXT NOT NULL,
    short_name TEXT NOT NULL, sort_order INTEGER, unit TEXT NOT NULL, higher_is_better INTEGER NOT NULL,
    score_low REAL NOT NULL, score_high REAL NOT NULL, unit_credit TEXT NOT NULL, uses_judge INTEGER NOT NULL,
    in_divergence INTEGER NOT NULL, vendor_package TEXT, vendor_packages TEXT NOT NULL, report_sections TEXT);
"""
COLUMNS = ("metric, version, vendor, display_name, short_name, sort_order, unit, higher_is_better, score_low, "
           "score_high, unit_credit, uses_judge, in_divergence, vendor_package, vendor_packages, report_sections")


def row(f: MetricFacts) -> tuple:
    """The table row of one metric's facts."""
    credit = f.unit_credit
    return (f.name, f.version, f.vendor, f.display_name, f.short_name, f.order, f.unit, int(f.higher_is_better),
            f.score_range[0], f.score_range[1],
            json.dumps({"ambiguous": credit.ambiguous, "graded": credit.graded, "raw": credit.raw,
                        "raw_rule": credit.raw_rule}, sort_keys=True),
            int(f.uses_judge), int(f.in_divergence), f.vendor_package, json.dumps(list(f.vendor_packages)),
            f.report_sections)


def facts(r) -> MetricFacts:
    """One metric's facts from its table row.

    >>> f = MetricFacts("x.y", "2", "x", "X Y", "XY", 3, "claim", False, (1.0, 5.0), UnitCredit(graded=3),
    ...                 False, False, "xpkg", ("xpkg", "other"), "m:C.report_sections")
    >>> facts(row(f)) == f
    True
    """
    c = json.loads(r[10])
    return MetricFacts(r[0], r[1], r[2], r[3], r[4], None if r[5] is None else int(r[5]), r[6], bool(r[7]),
                       (float(r[8]), float(r[9])), UnitCredit(**c), bool(r[11]), bool(r[12]), r[13],
                       tuple(json.loads(r[14])), r[15])


def write(cur, every) -> None:
    """Keep the facts of the run's metrics (``every``: :class:`MetricFacts`), replacing an earlier run's rows."""
    cur.executemany(f"INSERT OR REPLACE INTO metric_facts ({COLUMNS}) VALUES ({','.join('?' * 16)})",
                    [row(f) for f in every])


def read(db) -> dict[str, MetricFacts]:
    """metric -> its recorded facts ({} for a store written before the table)."""
    try:
        rows = db.execute(f"SELECT {COLUMNS} FROM metric_facts").fetchall()
    except Exception:  # noqa: BLE001 - sqlite3.OperationalError: a store older than the table
        return {}
    return {r[0]: facts(r) for r in rows}
