# SPDX-License-Identifier: GPL-3.0-or-later
"""hostsim's ib_write_bw shim: perftest's command line and error texts, the server/client pairing, the
bandwidth (line rate x efficiency, or the perf model with lab_perf_faults); and nic_bandwidth's logic
(_perftest.plan/run_plan) and the module itself (ad hoc ansible) against the shim in a hostsim tree."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import wiring  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim import perftest  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim.plugin import make_host  # noqa: E402  # pylint: disable=wrong-import-position
from nccl import perfmodel  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _perftest as pt  # noqa: E402

HOSTVARS = {
    "leaf1": {"lossless_fabric_device": {"kind": "switch", "platform": "nvue", "ports": {
        "swp1": {"speed": "400G", "peer": {"host": "gpu1", "nic": "mlx5_0"}},
        "swp2": {"speed": "400G", "peer": {"host": "gpu1", "nic": "mlx5_1"}},
        "swp3": {"speed": "200G", "peer": {"host": "gpu1", "nic": "mlx5_2"}}}}},
    "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_1", "netdev": "eth3", "speed": "400G"},
        {"name": "mlx5_2", "netdev": "eth4", "speed": "200G"}]}},
}
NICS = [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}, {"name": "mlx5_2", "netdev": "eth4"}]
WAIT = 0.1  # server_wait of these tests (the module's default is perftest's 1 s)


class Lab:
    def __init__(self, tmp_path, peermem=True):
        self.run_dir = str(tmp_path / "run")
        os.makedirs(self.run_dir)
        wiring.write(self.run_dir, wiring.build(HOSTVARS))
        made = make_host(os.path.join(self.run_dir, "hosts", "gpu1"), NICS, "upstream", sys.executable, peermem=peermem,
                         host="gpu1", wiring_file=os.path.join(self.run_dir, "wiring.json"))
        self.root, self.bin = made["lab_host_root"], made["lab_host_bin"]
        self.tool = os.path.join(self.bin, "ib_write_bw")
        self.servers: list[subprocess.Popen] = []

    def run(self, *args, timeout=60):
        return subprocess.run([self.tool, *args], capture_output=True, text=True, timeout=timeout, check=False)

    def server(self, *args):
        proc = subprocess.Popen([self.tool, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.servers.append(proc)
        spot = pathlib.Path(self.root, ".hostsim", "perftest", "%s.json" % (args[args.index("-p") + 1] if "-p" in args else 18515))
        deadline = time.monotonic() + 30
        while not spot.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return proc

    def close(self):
        for proc in self.servers:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=30)


@pytest.fixture
def lab(tmp_path):
    made = Lab(tmp_path)
    yield made
    made.close()


# ---------------------------------------------------------------------------
# the shim's command line: perftest parser() and glibc getopt_long
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("args, stderr", [
    (["--foo"], "{tool}: unrecognized option '--foo'\n Invalid Command or flag.\n Please check command line and run again.\n\n"
                " Parser function exited with Error\n"),
    (["-Y", "localhost"], "{tool}: invalid option -- 'Y'\n Invalid Command or flag."),
    (["-d"], "{tool}: option requires an argument -- 'd'\n"),
    (["--size"], "{tool}: option '--size' requires an argument\n"),
    (["--use"], "{tool}: option '--use' is ambiguous; possibilities:"),
    (["--report_gbits=1"], "{tool}: option '--report_gbits' doesn't allow an argument\n"),
    (["-d", "mlx5_0", "--ib-dev=mlx5_1"], " Duplicated argument: -d \n Parser function exited with Error\n"),
    (["-x", "65"], " Gid index should be between 0 and 64\n Parser function exited with Error\n"),
    (["-p", "abc"], " Port argument abc should be int\n"),
    (["-n", "4"], " Iteration num should be between 5 and 4294967296\n"),
    (["-q", "0"], " num of Qps should be between 1 and 16384\n"),
    (["-D", "0"], " Duration period must be positive\n"),
    (["-s", "0"], " Message Size should be between 1 and 2147483647\n"),
    (["--use_cuda=-1"], " CUDA device must be non-negative int\n"),
    (["a", "b"], " Invalid Command line. Please check command rerun \n"),
    (["-b"], "lab: ib_write_bw option -b is a real perftest option the lab does not simulate"),
])
def test_command_line_is_perftests(lab, args, stderr):
    done = lab.run(*args)
    assert done.returncode == 1 and done.stderr.startswith(stderr.format(tool=lab.tool)), done.stderr


def test_unknown_option_prints_usage_head(lab):
    done = lab.run("--foo")
    assert done.stdout.startswith("Usage:\n  %s            start a server and wait for connection\n" % lab.tool)


def test_getopt_permutes_and_takes_abbreviations(lab):
    # the server's name may stand anywhere (glibc permutes); --report_gbit abbreviates --report_gbits (ngc_multinode_perf uses it)
    opts = perftest.parse_options("ib_write_bw", ["-d", "mlx5_0", "localhost", "-s", "64K", "--report_gbit", "-x0x3", "-D", "010"])
    assert (opts["server"], opts["s"], opts["x"], opts["D"], "report_gbits" in opts) == ("localhost", 65536, 3, 8, True)


@pytest.mark.parametrize("args, stderr", [
    (["-d", "mlx5_9"], "IB device mlx5_9 not found\n Unable to find the Infiniband/RoCE device\n"),
    (["-d", "mlx5_0", "-p", "18600", "localhost"], "Couldn't connect to localhost:18600\nUnable to open file descriptor for socket connection\n"
                                                   " Unable to init the socket connection\n"),
    (["-d", "mlx5_0", "-i", "2"], " Unable to query port 2 attributes\n Couldn't get context for the device\n"),
    (["-d", "mlx5_0", "gpu2"], "lab: the ib_write_bw shim runs loopback only"),
])
def test_device_and_pairing_errors(lab, args, stderr):
    done = lab.run(*args)
    assert done.returncode == 1 and done.stderr.startswith(stderr), done.stderr


def test_a_nic_whose_cable_is_down(lab):
    wiring.refault(lab.run_dir, [{"unplug": "leaf1:swp2"}])
    done = lab.run("-d", "mlx5_1", "localhost")
    assert done.returncode == 1 and done.stderr == " Port number 1 state is Down\n Couldn't get context for the device\n"


def test_loopback_pair_and_its_output(lab):
    server = lab.server("-d", "mlx5_0", "-x", "3", "-p", "18601", "-F", "--report_gbits")
    client = lab.run("-d", "mlx5_0", "-x", "3", "-p", "18601", "-F", "--report_gbits", "localhost")
    out, err = server.communicate(timeout=60)
    assert client.returncode == 0 and server.returncode == 0, (client.stderr, err)
    mine, theirs = pt.parse(client.stdout, "mlx5_0"), pt.parse(out, "mlx5_0")
    assert "TX depth" in client.stdout and "TX depth" not in out and "Waiting for client to connect" in out
    assert mine["gbps"] == theirs["gbps"] == 388.0  # 400G x LOOPBACK_EFFICIENCY 0.97, no model
    assert (mine["link_type"], mine["gid_index"], mine["mtu"], mine["rows"][0]["bytes"], mine["rows"][0]["iterations"]) == (
        "Ethernet", 3, 1024, 65536, 5000)  # perftest defaults: -s 65536, 5000 iterations for write; netdev MTU 1500
    assert mine["local_gids"] == theirs["remote_gids"] and mine["local_gids"][0].startswith("254:128:00:00")


def test_second_server_on_a_busy_port(lab):
    lab.server("-d", "mlx5_0", "-p", "18602")
    done = lab.run("-d", "mlx5_1", "-p", "18602")
    assert done.returncode == 1 and done.stderr.startswith("Couldn't listen to port 18602\n")


def test_client_options_must_match_the_servers(lab):
    lab.server("-d", "mlx5_0", "-p", "18603", "-s", "65536")
    done = lab.run("-d", "mlx5_0", "-p", "18603", "-s", "1024", "localhost")
    assert done.returncode == 1 and "perftest needs the same options on both sides" in done.stderr


def test_units_mib_and_duration_mode(lab):
    lab.server("-d", "mlx5_2", "-p", "18604", "-D", "2")
    done = lab.run("-d", "mlx5_2", "-p", "18604", "-D", "2", "localhost")
    r = pt.parse(done.stdout)
    assert r["units"] == "MiB/sec" and r["peak_gbps"] is None and done.stdout.startswith(" WARNING: BW peak won't be measured")
    assert r["gbps"] == pytest.approx(200 * 0.97, abs=0.01)  # 200G cable; MiB/sec printed with 2 decimals


def test_cuda_lines_and_missing_peermem(tmp_path):
    made = Lab(tmp_path / "a")
    try:
        made.server("-d", "mlx5_0", "-p", "18605", "--use_cuda=2")
        done = made.run("-d", "mlx5_0", "-p", "18605", "--use_cuda=2", "localhost")
        r = pt.parse(done.stdout)
        assert (r["cuda_gpu"], r["cuda_name"]) == (2, "NVIDIA H100 80GB HBM3")
        made.server("-d", "mlx5_0", "-p", "18606", "--use_cuda=8")
        too_far = made.run("-d", "mlx5_0", "-p", "18606", "--use_cuda=8", "localhost")  # CUDA starts after the connection
        assert too_far.returncode == 1 and too_far.stderr == "No such device ID (8) exists in system\n"
    finally:
        made.close()
    bare = Lab(tmp_path / "b", peermem=False)
    try:
        bare.server("-d", "mlx5_0", "--use_cuda=0")
        done = bare.run("-d", "mlx5_0", "--use_cuda=0", "localhost")
        assert done.returncode == 1 and done.stderr.startswith("Couldn't allocate MR with error=14\n")
    finally:
        bare.close()


# ---------------------------------------------------------------------------
# nic_bandwidth's logic against the shim
# ---------------------------------------------------------------------------


def params(lab, **extra):
    base = {"nics": [{"name": n["name"]} for n in NICS], "size": 65536, "gid_index": 3, "base_port": 18700, "timeout": 60,
            "server_wait": WAIT, "parallel": False}
    base.update(extra)
    return base


def no_leftovers(lab):
    folder = pathlib.Path(lab.root, ".hostsim", "perftest")
    return not folder.exists() or not [p.name for p in folder.iterdir() if p.suffix == ".json"]


@pytest.mark.parametrize("parallel", [False, True])
def test_run_plan_every_nic(lab, parallel):
    p = params(lab, parallel=parallel, min_gbps=300)
    results = pt.run_plan(pt.plan(p, binary=lab.tool), p)
    assert [(n, r["ok"], r["gbps"], r["port"]) for n, r in results.items()] == [
        ("mlx5_0", True, 388.0, 18700), ("mlx5_1", True, 388.0, 18701), ("mlx5_2", False, 194.0, 18702)]
    assert results["mlx5_2"]["error"] == "ib_write_bw loopback on mlx5_2: 194.00 Gb/s is below min_gbps 300"
    assert all(r["server"] == "exited" and r["server_rc"] == 0 for r in results.values()) and no_leftovers(lab)


def test_run_plan_with_the_perf_model(lab):
    perfmodel.write_perf(lab.run_dir, [{"nic": "gpu1:mlx5_1", "factor": 0.5}, {"link": "leaf1:swp1", "factor": 0.5}], noise=0.0)
    p = params(lab)
    results = pt.run_plan(pt.plan(p, binary=lab.tool), p)
    # loopback sees the NIC fault, not the cable fault (perfmodel.loopback_gbps: host and NIC factors only)
    assert {n: r["gbps"] for n, r in results.items()} == {"mlx5_0": 400.0, "mlx5_1": 200.0, "mlx5_2": 200.0}


def test_run_plan_reports_a_failed_nic_with_perftests_words(lab):
    wiring.refault(lab.run_dir, [{"unplug": "leaf1:swp2"}])
    p = params(lab, nics=["mlx5_0", "mlx5_1"])
    results = pt.run_plan(pt.plan(p, binary=lab.tool), p)
    assert results["mlx5_0"]["ok"] is True
    # The server refuses at once; whether it has exited before the client starts (server_wait) depends on the
    # machine's load, so either side may be the one reported - both with perftest's own words.
    assert results["mlx5_1"]["ok"] is False
    assert results["mlx5_1"]["error"] in (
        "ib_write_bw server on mlx5_1 exited 1 before the client ran: Port number 1 state is Down; Couldn't get context for the device",
        "ib_write_bw client on mlx5_1 exited 1: Port number 1 state is Down; Couldn't get context for the device"), results["mlx5_1"]
    assert no_leftovers(lab)


ANSIBLE = ROOT / ".venv" / "bin" / "ansible"


def adhoc(tmp_path, args: dict, check=False) -> dict:
    tree = tmp_path / ("tree-check" if check else "tree")
    cmd = [str(ANSIBLE), "localhost", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable,
           "-m", "lossless.fabric.nic_bandwidth", "-a", json.dumps(args), "-t", str(tree)] + (["--check"] if check else [])
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-local"))
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert (tree / "localhost").exists(), (proc.stdout, proc.stderr)
    return json.loads((tree / "localhost").read_text())


def test_the_module_check_mode_and_run(lab, tmp_path):
    args = {"nics": ["mlx5_0", "mlx5_2"], "bin_dir": lab.bin, "gid_index": 3, "base_port": 18710, "server_wait": WAIT, "min_gbps": 300}
    checked = adhoc(tmp_path, args, check=True)
    assert checked["changed"] is False and checked["nics"]["mlx5_0"]["gbps"] is None
    assert checked["nics"]["mlx5_2"]["argv"]["client"] == [lab.tool, "-d", "mlx5_2", "-s", "8388608", "-x", "3", "-p", "18711", "-F",
                                                           "--report_gbits", "localhost"]
    assert no_leftovers(lab) and not pathlib.Path(lab.root, ".hostsim", "perftest").exists()  # check mode ran nothing
    done = adhoc(tmp_path, args)
    assert done["changed"] is False and not done.get("failed") and done["failed_nics"] == ["mlx5_2"]
    assert done["nics"]["mlx5_0"]["gbps"] == 388.0 and done["nics"]["mlx5_2"]["ok"] is False
    bad = adhoc(tmp_path, dict(args, nics=["mlx5_0;id"]))
    assert "nics" not in bad and bad["msg"].startswith("nics[0]: 'mlx5_0;id' is not an RDMA device name")
