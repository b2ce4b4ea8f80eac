# SPDX-License-Identifier: GPL-3.0-or-later
"""_perftest: the ib_write_bw argv, the parser on real published output (tests/data/perftest, SOURCES.md),
and one NIC's loopback run with its server always stopped (stand-in scripts, no perftest needed)."""

from __future__ import annotations

import os
import pathlib
import sys
import textwrap

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _perftest as pt

DATA = pathlib.Path(__file__).resolve().parents[4] / "data" / "perftest"


def fixture(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# parser on real output; every expected value read by hand from the fixture text
# ---------------------------------------------------------------------------


def test_roce_cuda_client_gbits():
    r = pt.parse(fixture("roce_cuda_rdmacm_client_gbits.txt"), device="mlx5_1")
    assert (r["test"], r["device"], r["link_type"], r["mtu"], r["gid_index"], r["qps"]) == ("RDMA_Write BW Test", "mlx5_1", "Ethernet", 1024, 3, 16)
    assert r["units"] == "Gb/sec" and r["rows"] == [{"bytes": 65536, "iterations": 10384867, "peak": 0.0, "average": 181.46,
                                                     "msg_rate_mpps": 0.3461}]
    assert r["gbps"] == 181.46 and r["peak_gbps"] is None  # -D 60: "WARNING: BW peak won't be measured", peak 0.00
    assert (r["cuda_gpu"], r["cuda_name"]) == (0, "NVIDIA A40")
    assert r["local_gids"] == ["00:00:00:00:00:00:00:00:00:00:255:255:10:06:145:33"]
    assert r["remote_gids"] == ["00:00:00:00:00:00:00:00:00:00:255:255:10:06:145:32"]


def test_roce_cuda_server_prints_the_clients_numbers():
    r = pt.parse(fixture("roce_cuda_rdmacm_server_gbits.txt"))
    assert (r["device"], r["gbps"], r["rows"][0]["iterations"]) == ("mlx5_1", 181.46, 10384867)
    assert r["local_gids"] == ["00:00:00:00:00:00:00:00:00:00:255:255:10:06:145:32"]  # the server's own address


def test_rocm_doc_bidirectional_all_sizes_indented():
    r = pt.parse(fixture("rocm_doc_roce_bidir_all_gbits_loopback.txt"))
    assert r["test"] == "RDMA_Write Bidirectional BW Test" and r["device"] == "<RDMA-NIC-2>" and r["gid_index"] == 3
    assert len(r["rows"]) == 23 and r["rows"][0] == {"bytes": 2, "iterations": 5000, "peak": 0.142947, "average": 0.012281,
                                                     "msg_rate_mpps": 0.767588}
    assert r["rows"][-1]["bytes"] == 8388608 and (r["gbps"], r["peak_gbps"]) == (204.59, 204.59)  # the last row: the largest size


def test_post_list_without_address_lines():
    r = pt.parse(fixture("issue273_roce_postlist_gbits_client.txt"))
    assert (r["test"], r["device"], r["link_type"], r["gid_index"], r["mtu"]) == ("RDMA_Write Post List BW Test", "ib0", "Ethernet", 2, 4096)
    assert r["rows"] == [{"bytes": 8, "iterations": 224958464, "peak": 0.0, "average": 0.48, "msg_rate_mpps": 7.498617}]
    assert r["local_gids"] == [] and r["gbps"] == 0.48


def test_mib_table_converts_to_gbps():
    text = fixture("ib_loopback_8M_mbs_client_then_server.txt")
    server = text[text.index("*****"):]  # the server's report, as it printed it after the client's
    r = pt.parse(server)
    assert (r["units"], r["link_type"], r["gid_index"], r["device"]) == ("MB/sec", "IB", None, "ib0")
    assert r["rows"] == [{"bytes": 8388608, "iterations": 20000, "peak": 24056.74, "average": 24056.72, "msg_rate_mpps": 0.003007}]
    # print_report_bw: MB/MiB = 0x100000 bytes, Gb = 125000000 bytes -> 24056.72 * 1048576 / 125000000
    assert r["gbps"] == round(24056.72 * 1048576 / 125000000, 4) == 201.8024


@pytest.mark.parametrize("name, words", [
    ("ib_loopback_8M_mbs_client_then_server.txt", "2 reports in one text"),
    ("ib_loopback_all_sizes_mbs_interleaved.txt", "2 reports in one text"),
])
def test_mixed_server_and_client_output_is_refused(name, words):
    with pytest.raises(pt.PerftestError, match=words):
        pt.parse(fixture(name))


def test_a_cut_table_is_refused():
    text = fixture("ib_loopback_8M_mbs_client_then_server.txt")
    with pytest.raises(pt.PerftestError, match="not closed by a dashed line"):
        pt.parse(text[:text.index("*****")])  # the client's part: its table runs into the server's banner


@pytest.mark.parametrize("name", ["err_pr228_couldnt_connect.txt", "err_issue169_no_devices.txt", "err_issue336_parser.txt",
                                  "err_issue132_client_rts.txt", "err_issue132_server_keys.txt"])
def test_error_outputs_are_not_reports(name):
    with pytest.raises(pt.PerftestError, match="no 'RDMA_Write BW Test' header"):
        pt.parse(fixture(name))


def test_errors_keep_perftests_words():
    assert pt.errors(fixture("err_issue169_no_devices.txt")) == (
        "Did not detect devices; If device exists, check if driver is up; Unable to find the Infiniband/RoCE device")
    assert pt.errors("", "a\nb\n Couldn't connect to localhost:18515\n") == "a; b; Couldn't connect to localhost:18515"
    assert pt.errors("", "") == "(no output)"


GOOD = fixture("roce_cuda_rdmacm_client_gbits.txt")


@pytest.mark.parametrize("text, words", [
    ("", "empty output"),
    (GOOD.replace("RDMA_Write BW Test", "Send BW Test"), "another perftest test"),
    (GOOD.replace(" Link type       : Ethernet\n", ""), "no 'Link type' field"),
    (GOOD.replace("Link type       : Ethernet", "Link type       : Unknown"), "not IB or Ethernet"),
    (GOOD.replace("1024[B]", "1024"), "Mtu '1024'"),
    (GOOD.replace("BW average[Gb/sec]", "BW average[MiB/sec]"), "different units"),
    (GOOD.replace(" 65536      10384867         0.00               181.46", " 65536      10384867         0.00               n/a"),
     "is not '#bytes #iterations peak average msgrate'"),
    (GOOD.replace(" #bytes     #iterations", " #size     #iterations"), "no result table header"),
    ("garbage\n" * 5, "no 'RDMA_Write BW Test' header"),
])
def test_garbled_output_is_refused(text, words):
    with pytest.raises(pt.PerftestError, match=words) as err:
        pt.parse(text)
    assert "ib_write_bw" in str(err.value)


def test_report_of_another_device_is_refused():
    with pytest.raises(pt.PerftestError, match="for device 'mlx5_1', not 'mlx5_0'"):
        pt.parse(GOOD, device="mlx5_0")


def test_table_with_no_rows_is_refused():
    head = GOOD[:GOOD.index(" 65536      10384867")]
    with pytest.raises(pt.PerftestError, match="no rows"):
        pt.parse(head + "-" * 87 + "\n")


# ---------------------------------------------------------------------------
# argv
# ---------------------------------------------------------------------------


def test_argv_server_and_client():
    assert pt.build_argv("mlx5_0") == ["ib_write_bw", "-d", "mlx5_0", "-s", "8388608", "-F", "--report_gbits"]
    assert pt.build_argv("mlx5_1", size=65536, duration=5, gid_index=3, qps=4, port=18516, use_cuda=1, ib_port=1,
                         server="localhost", binary="/opt/bin/ib_write_bw") == [
        "/opt/bin/ib_write_bw", "-d", "mlx5_1", "-i", "1", "-s", "65536", "-D", "5", "-x", "3", "-q", "4", "-p", "18516",
        "-F", "--report_gbits", "--use_cuda=1", "localhost"]
    assert pt.build_argv("mlx5_0", size=None, iterations=5000)[3:5] == ["-n", "5000"]


@pytest.mark.parametrize("kwargs, words", [
    ({"device": "mlx5_0; reboot"}, "nic: 'mlx5_0; reboot' is not an RDMA device name"),
    ({"device": "mlx5_0\n-d"}, "not an RDMA device name"),
    ({"device": "-d"}, "not an RDMA device name"),
    ({"device": "mlx5_0", "size": 0}, "size: 0 is out of range"),
    ({"device": "mlx5_0", "size": 2147483648}, "size: 2147483648 is out of range"),
    ({"device": "mlx5_0", "size": "8M"}, "size: '8M' is not an integer"),
    ({"device": "mlx5_0", "duration": 0}, "duration: 0 is out of range"),
    ({"device": "mlx5_0", "iterations": 4}, "iterations: 4 is out of range"),
    ({"device": "mlx5_0", "duration": 5, "iterations": 100}, "give one"),
    ({"device": "mlx5_0", "gid_index": 65}, "gid_index: 65 is out of range"),
    ({"device": "mlx5_0", "gid_index": True}, "gid_index: True is not an integer"),
    ({"device": "mlx5_0", "qps": 16385}, "qps: 16385 is out of range"),
    ({"device": "mlx5_0", "port": 70000}, "port: 70000 is out of range"),
    ({"device": "mlx5_0", "use_cuda": -1}, "use_cuda: -1 is out of range"),
    ({"device": "mlx5_0", "server": "localhost\nrm -rf /"}, "server: .* is not a host name"),
])
def test_argv_validation(kwargs, words):
    device = kwargs.pop("device")
    with pytest.raises(pt.PerftestError, match=words):
        pt.build_argv(device, **kwargs)


def test_plan_ports_gpus_and_checks():
    planned = pt.plan({"nics": [{"name": "mlx5_0", "rail": 0}, "mlx5_1"], "use_cuda": {"mlx5_1": 1}, "base_port": 20000,
                       "size": 65536}, binary="/b/ib_write_bw")
    assert [(n, p["port"], p["gpu"]) for n, p in planned.items()] == [("mlx5_0", 20000, None), ("mlx5_1", 20001, 1)]
    assert planned["mlx5_1"]["client"] == planned["mlx5_1"]["server"] + ["localhost"]
    assert "--use_cuda=1" in planned["mlx5_1"]["server"] and not any(a.startswith("--use_cuda") for a in planned["mlx5_0"]["server"])
    for params, words in (({"nics": []}, "nics: "), ({"nics": ["mlx5_0", "mlx5_0"]}, "listed twice"),
                          ({"nics": [{"rail": 0}]}, r"nics\[0\]: None"), ({"nics": ["mlx5_0"], "use_cuda": {"mlx5_9": 0}}, "not one of nics"),
                          ({"nics": ["mlx5_0", "mlx5_1"], "base_port": 65535}, "base_port: 65535 is out of range"),
                          ({"nics": ["mlx5_0"], "min_gbps": -1}, "min_gbps"), ({"nics": ["mlx5_0"], "timeout": 0}, "timeout")):
        with pytest.raises(pt.PerftestError, match=words):
            pt.plan(params)


# ---------------------------------------------------------------------------
# loopback: processes, with stand-in scripts
# ---------------------------------------------------------------------------


def script(tmp_path, name: str, body: str) -> list[str]:
    path = tmp_path / name
    path.write_text("import os, signal, sys, time\n" + textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def pid_of(tmp_path) -> int:
    return int((tmp_path / "server.pid").read_text())


SERVER_STUBBORN = """
open(sys.argv[1], "w").write(str(os.getpid()))
signal.signal(signal.SIGTERM, signal.SIG_IGN)   # only SIGKILL ends it
while True:
    time.sleep(0.05)
"""


def test_server_is_killed_and_reaped_when_the_client_fails(tmp_path):
    server = script(tmp_path, "server.py", SERVER_STUBBORN) + [str(tmp_path / "server.pid")]
    client = script(tmp_path, "client.py", """
        sys.stderr.write("IB device mlx5_0 not found\\n Unable to find the Infiniband/RoCE device\\n")
        sys.exit(1)
    """)
    got = pt.loopback(server, client, "mlx5_0", timeout=30, server_wait=0.2, connect_retries=0)
    assert got["ok"] is False and got["client_rc"] == 1 and got["server"] == "killed"
    assert got["error"] == "ib_write_bw client on mlx5_0 exited 1: IB device mlx5_0 not found; Unable to find the Infiniband/RoCE device"
    assert got["server_rc"] == -9 and not alive(pid_of(tmp_path))


def test_server_is_stopped_when_the_client_times_out(tmp_path):
    server = script(tmp_path, "server.py", SERVER_STUBBORN) + [str(tmp_path / "server.pid")]
    client = script(tmp_path, "client.py", "time.sleep(600)\n")
    got = pt.loopback(server, client, "mlx5_0", timeout=2, server_wait=0.2)
    assert got["ok"] is False and "no result within timeout 2s" in got["error"]
    assert got["server"] == "killed" and not alive(pid_of(tmp_path))


def test_a_server_that_dies_first_is_reported_with_its_words(tmp_path):
    server = script(tmp_path, "server.py", """
        sys.stderr.write("Couldn't listen to port 18515\\nUnable to open file descriptor for socket connection\\n")
        sys.exit(1)
    """)
    client = script(tmp_path, "client.py", "sys.exit(0)\n")
    got = pt.loopback(server, client, "mlx5_0", timeout=30, server_wait=0.3)
    assert got["ok"] is False and got["client_rc"] is None and got["server"] == "exited" and got["server_rc"] == 1
    assert "server on mlx5_0 exited 1 before the client ran: Couldn't listen to port 18515" in got["error"]


def test_a_missing_binary_is_an_error(tmp_path):
    got = pt.loopback([str(tmp_path / "nope")], [str(tmp_path / "nope"), "localhost"], "mlx5_0", timeout=5, server_wait=0)
    assert got["ok"] is False and "could not start" in got["error"]


def test_client_retries_while_the_server_is_not_listening_yet(tmp_path):
    ready = tmp_path / "listening"
    server = script(tmp_path, "server.py", """
        time.sleep(0.3)
        open(sys.argv[1], "w").write("x")
        while os.path.exists(sys.argv[1]):
            time.sleep(0.02)
    """) + [str(ready)]
    client = script(tmp_path, "client.py", """
        if not os.path.exists(sys.argv[1]):
            sys.stderr.write("Couldn't connect to localhost:18515\\n")
            sys.exit(1)
        os.unlink(sys.argv[1])
        sys.stdout.write(open(sys.argv[2]).read())
    """) + [str(ready), str(DATA / "issue273_roce_postlist_gbits_client.txt")]
    got = pt.loopback(server, client, "ib0", timeout=30, server_wait=0.2, connect_retries=5)
    assert got["ok"] is True and got["gbps"] == 0.48 and got["server"] == "exited" and got["server_rc"] == 0


def test_unparseable_client_output_is_an_error(tmp_path):
    server = script(tmp_path, "server.py", "time.sleep(0.5)\n")
    client = script(tmp_path, "client.py", "print('hello')\n")
    got = pt.loopback(server, client, "mlx5_0", timeout=30, server_wait=0.1)
    assert got["ok"] is False and got["error"].startswith("ib_write_bw: no 'RDMA_Write BW Test' header")
