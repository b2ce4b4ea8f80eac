# SPDX-License-Identifier: GPL-3.0-or-later
"""The InfiniBand lab as the launcher and Ansible use it: server.py, the diag
wrappers in tests/lab/ibsim/bin, and the launcher plug-in on inventories/lab-ib."""
from __future__ import annotations

import functools
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import labproc  # noqa: E402
from test_ibsim_fabric import SMALL, _usable, processes_mentioning  # noqa: E402

pytestmark = pytest.mark.skipif(_usable() is not None, reason=str(_usable()))

SERVER = ROOT / "tests" / "lab" / "ibsim" / "server.py"
WRAPPERS = ROOT / "tests" / "lab" / "ibsim" / "bin"
VENV_BIN = pathlib.Path(sys.executable).parent


wait_for = functools.partial(labproc.wait_for, timeout=15.0, interval=0.02)


def read_state(path):
    if not path.exists():
        return None
    return json.loads(path.read_text())


@pytest.fixture
def server(tmp_path):
    config = tmp_path / "ibsim.json"
    config.write_text(json.dumps({"workdir": str(tmp_path / "fabric"), "topology": SMALL}))
    state_file = tmp_path / "state.json"
    with open(tmp_path / "server.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, str(SERVER), "--config", str(config), "--state-file", str(state_file)],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        state = wait_for(lambda: read_state(state_file) or (proc.poll() is not None and "dead"), what="server state")
        assert state != "dead", (tmp_path / "server.log").read_text()
        yield proc, state, state_file
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def run(argv, **env):
    return subprocess.run([str(a) for a in argv], env=dict(os.environ, **env), capture_output=True, text=True, timeout=30, check=False)


def test_server_wrappers_reload_restart_and_sigterm(server, tmp_path):
    proc, state, state_file = server
    bin_dir = pathlib.Path(state["diag_bin"])
    assert state["pid"] == proc.pid and state["sim_host"] == "sm-mlx5_0"
    # the per-fabric bin/ finds its fabric by itself: what a module on "a host attached to the fabric" runs
    out = run([bin_dir / "sminfo"])
    assert out.returncode == 0 and "SMINFO_MASTER" in out.stdout and out.stderr == ""
    # the static wrappers need LAB_IBSIM_ENV; SIM_HOST picks the attachment node (ibstat shows that node's CA)
    out = run([WRAPPERS / "ibstat"], LAB_IBSIM_ENV=state["files"]["env"], SIM_HOST="gpu2-mlx5_0")
    assert out.returncode == 0 and state["topology"]["gpu2-mlx5_0"][2:] in out.stdout.lower().replace("0x", "")
    out = run([WRAPPERS / "sminfo"], LAB_IBSIM_ENV="/nonexistent/ibsim.env")
    assert out.returncode == 127 and "no simulated InfiniBand fabric" in out.stderr
    # console wrapper -> perfquery
    guid = state["topology"]["gpu1-mlx5_0"]
    assert run([bin_dir / "ibsim-console", 'PerformanceSet "gpu1-mlx5_0"[1] PortCounters.LinkDownedCounter=3']).returncode == 0
    wait_for(lambda: "LinkDownedCounter:...............3" in run([bin_dir / "perfquery", "-G", guid, "1"]).stdout, what="counter")
    # reload wrapper (SIGHUP to OpenSM)
    pathlib.Path(state["files"]["partitions"]).write_text("Default=0x7fff : ALL=full ;\nlab=0x0011 : %s=full ;\n" % guid)
    assert run(state["reload_cmd"]).returncode == 0
    wait_for(lambda: "0x8011" in run([bin_dir / "smpquery", "-G", "pkeys", guid, "1"]).stdout, what="new pkey")
    # restart wrapper (SIGUSR1 to the server): new OpenSM pid, same fabric
    old = state["opensm_pid"]
    assert run(state["restart_cmd"]).returncode == 0
    new = wait_for(lambda: (read_state(state_file) or {}).get("opensm_pid", old) != old and read_state(state_file), what="restart")
    assert new["opensm_pid"] != old and not os.path.exists("/proc/%d" % old)
    assert "SMINFO_MASTER" in run([bin_dir / "sminfo"]).stdout
    assert "0x8011" in run([bin_dir / "smpquery", "-G", "pkeys", guid, "1"]).stdout
    # SIGTERM to the server's process group, as launcher.down() does
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(10) == 0
    assert not state_file.exists()
    assert processes_mentioning(str(tmp_path / "fabric")) == []
    out = run([bin_dir / "sminfo"])
    assert out.returncode == 127


def test_server_killed_hard_takes_its_fabric_along(server, tmp_path):
    proc, state, _state_file = server
    os.kill(proc.pid, signal.SIGKILL)   # only the server: ibsim and OpenSM are in their own sessions
    proc.wait(10)
    wait_for(lambda: processes_mentioning(str(tmp_path / "fabric")) == [], what="orphans to die (PR_SET_PDEATHSIG)")
    out = run([pathlib.Path(state["diag_bin"]) / "sminfo"])
    assert out.returncode == 127 and "is gone" in out.stderr


def test_plugin_starts_the_lab_ib_inventory_for_ansible(tmp_path):
    import launcher  # pylint: disable=import-outside-toplevel
    from ibsim.plugin import InfiniBand  # pylint: disable=import-outside-toplevel

    inventory = tmp_path / "lab-ib"
    shutil.copytree(ROOT / "inventories" / "lab-ib", inventory)
    run_dir = tmp_path / "run"
    ctx = launcher.Context(str(inventory), str(run_dir), launcher.load_inventory(str(inventory)))
    plugin = InfiniBand()
    assert plugin.wanted(ctx)
    assert not plugin.wanted(launcher.Context(str(inventory), str(run_dir), {"_meta": {"hostvars": {"leaf1": {
        "lossless_fabric_device": {"kind": "switch", "platform": "eos"}}}}}))
    saved = launcher.SIMULATORS
    launcher.SIMULATORS = [plugin]
    try:
        state = launcher.up(str(inventory), str(run_dir))
        assert state["simulators"] == ["ibsim"]
        generated = (inventory / launcher.GENERATED).read_text()
        for key in ("lab_ib_diag_bin", "lab_opensm_conf_dir", "lab_opensm_reload_cmd", "lab_opensm_partitions_file", "lab_ib_sim_host"):
            assert key in generated
        # Ansible sees the lab variables and runs the diag tools through them
        ansible = VENV_BIN / "ansible"
        if ansible.exists():
            out = subprocess.run(
                [str(ansible), "-i", str(inventory), "gpu3", "-m", "ansible.builtin.shell",
                 "-a", "SIM_HOST={{ lab_ib_sim_host }} {{ lab_ib_diag_bin }}/ibstat"],
                cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                env=dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg")))
            assert out.returncode == 0, out.stdout + out.stderr
            assert "State: Active" in out.stdout
            assert "Port GUID: 0x0c42a10300030001" in out.stdout   # attached at gpu3's first HCA
        vars_ = {}
        for line in generated.splitlines():
            if line.startswith("    lab_") and ": " in line:
                key, value = line.strip().split(": ", 1)
                vars_[key] = json.loads(value)
        assert vars_["lab_ib_nodes"]["gpu3-mlx5_0"] == "0x0c42a10300030001"
        out = run([pathlib.Path(vars_["lab_ib_diag_bin"]) / "sminfo"])
        assert "sm guid 0xc42a10300000001" in out.stdout and "SMINFO_MASTER" in out.stdout
        # the SM starts minimal: OpenSM's default partition and a DEFAULT-only QoS policy
        assert "Default=0x7fff : ALL=full ;" in pathlib.Path(vars_["lab_opensm_partitions_file"]).read_text()
        assert pathlib.Path(vars_["lab_opensm_conf_dir"], "opensm.conf").exists()
    finally:
        launcher.down(str(inventory), str(run_dir))
        launcher.SIMULATORS = saved
    assert not (inventory / launcher.GENERATED).exists()
    assert processes_mentioning(str(run_dir)) == []
