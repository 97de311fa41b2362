"""--ray: a local Ray cluster on loopback (a head node started here, plus the driver), the canonical set
through it, the same store as a local run; usage statistics off and every Ray port on 127.0.0.1."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from harness.run.runner import RunOptions, run

import pytest

from tests.test_workers import _store

RAY = os.path.join(os.path.dirname(sys.executable), "ray")
LOOPBACK = ("127.0.0.1", "[::ffff:127.0.0.1]", "::1", "[::1]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pids_of(marker: str) -> set[int]:
    """Processes whose command line names ``marker`` (the cluster's own temp dir), and their children."""
    found, parents = set(), {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{d}/stat") as fh:
                parents[int(d)] = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if marker.encode() in cmd:
            found.add(int(d))
    grew = True
    while grew:
        kids = {p for p, pp in parents.items() if pp in found} - found
        grew = bool(kids)
        found |= kids
    return found


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
    """A head node on 127.0.0.1 with 2 CPUs, its own temp dir, no dashboard, usage stats off."""
    tmp = tempfile.mkdtemp(prefix="hray-", dir="/tmp")      # short: Ray's socket paths must fit 107 bytes
    port = _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    cmd = [RAY, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "2",
           "--include-dashboard=false", "--disable-usage-stats", "--object-store-memory", str(100 * 2**20),
           "--temp-dir", tmp, "--ray-client-server-port", str(_free_port())]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}", tmp
    finally:
        pids = _pids_of(tmp)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        time.sleep(1)
        for pid in _pids_of(tmp):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def test_the_canonical_set_on_ray_gives_the_local_store(ray_head, canonical, tmp_path):
    from harness.metric import registry

    address, tmp = ray_head
    metrics = registry.names()
    local = run(RunOptions(cases=canonical, metrics=metrics, out_dir=str(tmp_path), run_id="local", progress=False,
                           concurrency=16, workers=1))
    on_ray = run(RunOptions(cases=canonical, metrics=metrics, out_dir=str(tmp_path), run_id="ray", progress=False,
                            concurrency=16, ray=address))
    a, b = _store(local.store_path), _store(on_ray.store_path)
    assert len(a[0]) == len(canonical) * len(metrics) and all(row[4] != "error" for row in a[0])
    assert a == b
    # every port the cluster opened is on loopback (gcs, raylet, object manager, agents, workers)
    addrs = _listening(_pids_of(tmp))
    assert addrs and all(addr.rsplit(":", 1)[0] in LOOPBACK for addr in addrs), addrs


def test_the_driver_binds_loopback_and_turns_usage_stats_off(ray_head):
    from harness.run.rayrun import connect

    address, _ = ray_head
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
                       ray=f"127.0.0.1:{_free_port()}"))
