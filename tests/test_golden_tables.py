"""Every golden table covers exactly the canonical cases, one hand-derived line of reasoning each."""
import pytest

from tests.goldens import NON_SCORES, golden, metrics_with_golden


def test_every_registered_metric_has_a_golden_table():
    from harness import registry

    assert metrics_with_golden() == sorted(registry.names())


@pytest.mark.parametrize("metric", metrics_with_golden())
def test_golden_table_covers_every_canonical_case(metric, canonical):
    rows = golden(metric)
    ids = {c.id for c in canonical}
    assert set(rows) == ids, f"{metric}: missing {sorted(ids - set(rows))}, stale {sorted(set(rows) - ids)}"
    for r in rows.values():
        if r["expected"] not in NON_SCORES:
            assert 0.0 <= float(r["expected"]) <= 1.0, r
