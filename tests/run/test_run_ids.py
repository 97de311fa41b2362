"""Default run ids never collide (issue 25, probe 6): they were one-second timestamps, so two runs
started in the same second shared a directory (an evaluate() thread raised RunLocked naming its own
pid; a second ``harness run`` exited 2)."""
import threading

from harness.cases.load import CaseSet
from harness.run.rundir import run_id_problem
from harness.run.runner import RunOptions, default_run_id, run


def test_default_run_ids_in_the_same_second_differ():
    ids = {default_run_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(i.startswith("run-") and run_id_problem(i) is None for i in ids)


def test_two_runs_started_together_without_an_id_both_finish(tmp_path, canonical):
    cases = CaseSet(canonical.path, canonical.cases[:1], canonical.sha256)
    outcomes, errors = [], []
    start = threading.Barrier(2)

    def one():
        start.wait()
        try:
            outcomes.append(run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path),
                                           progress=False, workers=1)))
        except Exception as e:  # noqa: BLE001 - the assertion below shows it
            errors.append(e)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == [] and len({o.run_id for o in outcomes}) == 2
