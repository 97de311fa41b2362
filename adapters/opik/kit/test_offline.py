"""opik.hallucination runs offline and keeps to the run directory: a default run (reference judge) on the canonical cases,
in a fresh process whose every socket connect and address look-up is logged, inside a network namespace with no
interface up where the machine allows it, scores every case, connects to nothing and writes nothing to ``HOME`` or
the working directory (:func:`tests.vendors.test_vendor_offline_more.scores_offline`)."""
from __future__ import annotations

from tests.vendors.test_vendor_offline_more import scores_offline


def test_a_default_run_scores_every_case_offline_and_writes_only_its_run_dir(tmp_path):
    scores_offline("opik.hallucination", "opik", tmp_path, ('OPIK_',))
