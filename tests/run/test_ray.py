"""--ray: a local Ray cluster on loopback (a head node started here, plus the driver), the canonical set
through it, the same store as a local run; usage statistics off and every Ray port on 127.0.0.1."""
import os
import subprocess

from harness.run.runner import RunOptions, run

import pytest

from tests.helpers.procs import RayHead, free_port
from tests.run.test_workers import _store

LOOPBACK = ("127.0.0.1", "[::ffff:127.0.0.1]", "::1", "[::1]")


def _listening(pids: set[int]) -> list[str]:
    """Local addresses of the TCP sockets these processes listen on."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    addrs = []
    for line in out.splitlines():
        if any(f"pid={p}," in line for p in pids):
            addrs.append(line.split()[3])
    return addrs


@pytest.fixture(scope="module")
def ray_head():
    """A head node on 127.0.0.1 (tests/helpers/procs.py); after the module, none of its processes is left."""
    try:
        head = RayHead().start(timeout=120)
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield head
    finally:
        head.stop()
        assert not head.pids(), f"Ray processes left after stop: {sorted(head.pids())}"


def test_the_canonical_set_on_ray_gives_the_local_store(ray_head, canonical, tmp_path):
    from harness.metric import registry

    address = ray_head.address
    metrics = registry.names()
    local = run(RunOptions(cases=canonical, metrics=metrics, out_dir=str(tmp_path), run_id="local", progress=False,
                           concurrency=16, workers=1))
    on_ray = run(RunOptions(cases=canonical, metrics=metrics, out_dir=str(tmp_path), run_id="ray", progress=False,
                            concurrency=16, ray=address))
    a, b = _store(local.store_path), _store(on_ray.store_path)
    assert len(a[0]) == len(canonical) * len(metrics) and all(row[4] != "error" for row in a[0])
    assert a == b
    # every port the cluster opened is on loopback (gcs, raylet, object manager, agents, workers)
    addrs = _listening(ray_head.pids())
    assert addrs and all(addr.rsplit(":", 1)[0] in LOOPBACK for addr in addrs), addrs


def test_the_driver_binds_loopback_and_turns_usage_stats_off(ray_head):
    from harness.run.rayrun import connect

    address = ray_head.address
    ray = connect(address)
    try:
        assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
        mine = _listening({os.getpid()})
        assert all(addr.rsplit(":", 1)[0] in LOOPBACK for addr in mine), mine
        assert ray.get_runtime_context().get_node_id()
    finally:
        ray.shutdown()


def test_no_cluster_is_one_clear_error(tmp_path, canonical):
    from harness.cases.load import CaseSet
    from harness.run.rayrun import RayUnavailable

    cases = CaseSet(canonical.path, canonical.cases[:1], canonical.sha256)
    with pytest.raises(RayUnavailable, match="no Ray cluster"):
        run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="x", progress=False,
                       ray=f"127.0.0.1:{free_port()}"))


def test_a_ray_start_that_times_out_leaves_no_process():
    """A loaded machine once kept ``ray start`` past its timeout (180 s): the processes it had started
    stayed behind, and the soak script ended with a traceback."""
    head = RayHead()
    try:
        head.start(timeout=2)
    except RuntimeError as e:
        assert "did not finish in 2 s" in str(e) or "ray start failed" in str(e)
    else:                                   # a machine fast enough to start it in 2 s: stop it, the same check
        head.stop()
    assert not head.pids() and not os.path.exists(head.tmp)
