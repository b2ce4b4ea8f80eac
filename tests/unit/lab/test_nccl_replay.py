# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's NCCL replay: choices -> recorded real logs, k8sim's per-label replay rules (config and control API),
the lab plug-ins that read lab_nccl_replay(_post), the launcher's -e pass-through, and the strict mpirun/srun shims."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
from k8sim.plugin import Kubernetes  # noqa: E402
from k8sim.sim import Simulator  # noqa: E402
from nccl import replay  # noqa: E402
from nccl.plugin import NcclReplay  # noqa: E402

BIN = ROOT / "tests" / "lab" / "nccl" / "bin"
PASSING, FAILING = replay.resolve("passing")[0], replay.resolve("failing")[0]
SLURM = ROOT / "tests" / "lab" / "nccl" / "replays" / "deepops_slurm_4x_dgxa100.txt"
DEVICE = {"kind": "host", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]}


def read(path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def ctx_with(tmp_path, **hostvars):
    hv = {"gpu1": dict(lossless_fabric_device=DEVICE, **hostvars), "gpu2": dict(lossless_fabric_device=DEVICE, **hostvars)}
    return launcher.Context(str(tmp_path), str(tmp_path), {"_meta": {"hostvars": hv}})


def job(name, labels=None):
    return {"metadata": {"namespace": "nccl-benchmark", "name": name, "labels": labels or {}}}


# ------------------------------------------------------------------ choices

def test_choices_are_real_logs_in_the_repo():
    for choice in ("passing", "failing"):
        for path in replay.resolve(choice):
            assert pathlib.Path(path).parent == ROOT / "tests" / "lab" / "nccl" / "replays"
            truth = json.loads(pathlib.Path(path).with_suffix(".json").read_text())
            assert truth["source_url"].startswith("https://github.com/")   # provenance kept beside the copy
    assert replay.resolve("deepops_slurm_4x_dgxa100") == [str(SLURM)]
    assert replay.resolve("deepops_slurm_4x_dgxa100.txt") == [str(SLURM)]


@pytest.mark.parametrize("choice, expected", [
    ("pasing", "lab_nccl_replay: 'pasing' is not passing, failing or a recorded log (known: "),
    ("../etc/passwd", "lab_nccl_replay: '../etc/passwd' is a path"),
    ("", "lab_nccl_replay: '' is not passing, failing or a log file name"),
])
def test_bad_choice_names_variable_and_value(choice, expected):
    with pytest.raises(replay.ReplayError) as exc:
        replay.resolve(choice)
    assert str(exc.value).startswith(expected)


# ------------------------------------------------------------------ k8sim rules

def test_k8sim_picks_per_label_then_default_and_cycles():
    sim = Simulator(replay.k8sim_config("passing", "failing") | {"replay": [PASSING, str(SLURM)]})
    assert sim.plan_for(job("a"))["log"] == read(PASSING)
    assert sim.plan_for(job("b", {"lossless.fabric/phase": "pre"}))["log"] == read(SLURM)   # the default cycles
    post = sim.plan_for(job("c", {"lossless.fabric/phase": "post"}))
    assert post["log"] == read(FAILING) and post["replay_path"] == FAILING
    assert sim.plan_for(job("d"))["log"] == read(PASSING)


def test_k8sim_control_api_selector_rule_and_job_override():
    sim = Simulator({"replay": PASSING})
    got = sim.control("POST", ["replay"], {"selector": {"lossless.fabric/phase": "post"}, "path": FAILING})
    assert got["selector"] == {"lossless.fabric/phase": "post"}
    sim.control("POST", ["replay"], {"text": "one job\n", "job": "nccl-benchmark/x"})
    assert sim.plan_for(job("x", {"lossless.fabric/phase": "post"}))["log"] == b"one job\n"   # the job's own wins
    assert sim.plan_for(job("y", {"lossless.fabric/phase": "post"}))["log"] == read(FAILING)
    assert sim.plan_for(job("z", {"lossless.fabric/phase": "pre"}))["log"] == read(PASSING)
    with pytest.raises(ValueError, match="selector must be a non-empty mapping"):
        sim.control("POST", ["replay"], {"selector": {}, "path": FAILING})


def test_k8sim_plugin_reads_lab_nccl_vars(tmp_path):
    plugin = Kubernetes()
    config = plugin.config(ctx_with(tmp_path, lab_kubernetes=True, lab_nccl_replay="passing", lab_nccl_replay_post="failing"))
    assert config["replay"] == [PASSING]
    assert config["replays"] == [{"selector": {"lossless.fabric/phase": "post"}, "path": [FAILING]}]
    config = plugin.config(ctx_with(tmp_path, lab_kubernetes=True, lab_nccl_replay="failing", lab_nccl_replay_post=""))
    assert config["replay"] == [FAILING] and "replays" not in config
    with pytest.raises(replay.ReplayError, match="lab_nccl_replay_post: 'nope'"):
        plugin.config(ctx_with(tmp_path, lab_kubernetes=True, lab_nccl_replay="passing", lab_nccl_replay_post="nope"))


# ------------------------------------------------------------------ launcher

def test_launcher_hands_extra_vars_to_the_inventory():
    cmd = ["ansible-playbook", "-i", "inventories/lab", "p.yml", "-e", "lab_nccl_replay=failing",
           "--extra-vars=lab_nccl_replay_post=passing", "-elab_x=1", "--check"]
    assert launcher.extra_vars(cmd) == ["-e", "lab_nccl_replay=failing", "-e", "lab_nccl_replay_post=passing", "-e", "lab_x=1"]
    inventory = launcher.load_inventory(str(ROOT / "inventories" / "lab"), ["-e", "lab_nccl_replay=failing"])
    hostvars = inventory["_meta"]["hostvars"]
    assert {hv.get("lab_nccl_replay") for hv in hostvars.values()} == {"failing"}
    plain = launcher.load_inventory(str(ROOT / "inventories" / "lab"))
    assert {hv.get("lab_nccl_replay") for hv in plain["_meta"]["hostvars"].values()} == {"cci_moc_h100_2node_roce_allreduce_nogdr"}


def test_nccl_plugin_writes_wrappers_with_the_choice(tmp_path):
    plugin = NcclReplay()
    assert not plugin.wanted(ctx_with(tmp_path))
    ctx = ctx_with(tmp_path, lab_nccl_replay="failing")
    assert plugin.wanted(ctx)
    got = plugin.start(ctx)
    wrapper = pathlib.Path(got["all"]["lab_nccl_bin"]) / "mpirun"
    hostfile = tmp_path / "hosts"
    hostfile.write_text("gpu1 slots=8\ngpu2 slots=8\n")
    env = dict({k: v for k, v in os.environ.items() if not k.startswith("LAB_NCCL_")}, **ALLOW_ROOT)
    out = subprocess.run([str(wrapper), "-np", "16", "--hostfile", str(hostfile), "all_reduce_perf", "-b", "8", "-e", "2G",
                          "-g", "1"], capture_output=True, check=False, env=env, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == read(FAILING)
    with pytest.raises(replay.ReplayError, match="lab_nccl_replay: 'typo'"):
        plugin.start(ctx_with(tmp_path, lab_nccl_replay="typo"))


# ------------------------------------------------------------------ the shims

ALLOW_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def shim(tool, *args, env=None, hostfile="gpu1 slots=8\ngpu2 slots=8\n", tmp_path=None):
    # the tests may run as root: allowed as the module allows it, unless a test says otherwise
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("LAB_NCCL_", "OMPI_ALLOW"))}
    environ.update(ALLOW_ROOT)
    environ.update(env or {})
    environ = {k: v for k, v in environ.items() if v is not None}
    argv = [str(BIN / tool)]
    for arg in args:
        argv.append(arg.replace("HOSTFILE", str(tmp_path / "hosts")) if tmp_path else arg)
    if tmp_path is not None:
        (tmp_path / "hosts").write_text(hostfile)
    out = subprocess.run(argv, capture_output=True, text=True, check=False, env=environ, timeout=30)
    return out.returncode, out.stdout, out.stderr


NCCL = ["all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"]


@pytest.mark.parametrize("args, rc, expected", [
    (["-np", "16", "--hostfile", "HOSTFILE", "--frobnicate"] + NCCL, 1, 'mpirun: Error: unknown option "--frobnicate"'),
    (["-np", "16", "--hostfile", "/nonexistent/hosts"] + NCCL, 1, "Open MPI was unable to open the hostfile:\n    /nonexistent/hosts"),
    (["-np", "17", "--hostfile", "HOSTFILE"] + NCCL, 1, "There are not enough slots available in the system to satisfy the 17"),
    (["-np", "sixteen", "--hostfile", "HOSTFILE"] + NCCL, 1, "  Option: np\n  Param:  sixteen"),
    (["-np", "16", "-H", "gpu1:8,gpu2:8", "--bind-to", "gpu"] + NCCL, 1, "The specified binding policy is not recognized:"),
    (["-np", "16", "--hostfile", "HOSTFILE", "--mca", "pml"], 1, 'option "--mca" did not have enough parameters (2)'),
    (["-np", "16", "--hostfile", "HOSTFILE"], 1, "No executable was specified on the mpirun command line."),
    (["-np", "16", "--hostfile", "HOSTFILE", "nccl_test"], 1, "Executable: nccl_test"),
    (["-np", "16", "--hostfile", "HOSTFILE", "all_reduce_perf", "-q", "1"], 0, "all_reduce_perf: invalid option -- 'q'"),
    (["-np", "16", "--hostfile", "HOSTFILE", "all_reduce_perf", "-e", "1T"], 0, "invalid size specified for 'maxbytes'"),
])
def test_mpirun_shim_rejects_like_open_mpi(tmp_path, args, rc, expected):
    code, out, err = shim("mpirun", *args, tmp_path=tmp_path)
    assert (code, out) == (rc, "") and expected in err


def test_mpirun_shim_accepts_the_modules_command_and_exports(tmp_path):
    record = tmp_path / "rec.jsonl"
    code, out, err = shim("mpirun", "-np", "16", "--hostfile", "HOSTFILE", "--bind-to", "none", "-mca", "btl", "tcp,self",
                          "-x", "NCCL_DEBUG", "-x", "NCCL_IB_TC=106", "--allow-run-as-root", *NCCL, tmp_path=tmp_path,
                          env={"NCCL_DEBUG": "INFO", "LAB_NCCL_RECORD": str(record), "LAB_NCCL_REPLAY": "deepops_slurm_4x_dgxa100"})
    assert code == 0, err
    assert out == SLURM.read_text()
    rec = json.loads(record.read_text())
    assert rec["env"] == {"NCCL_DEBUG": "INFO", "NCCL_IB_TC": "106"} and rec["np"] == 16 and rec["gpus_per_process"] == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="mpirun's root check needs root")
def test_mpirun_shim_refuses_root_like_open_mpi(tmp_path):
    unset = {name: None for name in ALLOW_ROOT}
    code, out, err = shim("mpirun", "-np", "16", "--hostfile", "HOSTFILE", *NCCL, tmp_path=tmp_path, env=unset)
    assert (code, out) == (1, "") and "mpirun has detected an attempt to run as root." in err
    # one of the two is not enough
    code, _out, err = shim("mpirun", "-np", "16", "--hostfile", "HOSTFILE", *NCCL, tmp_path=tmp_path,
                           env=dict(unset, OMPI_ALLOW_RUN_AS_ROOT="1"))
    assert code == 1 and "attempt to run as root" in err
    code, _out, err = shim("mpirun", "-np", "16", "--hostfile", "HOSTFILE", "--allow-run-as-root", *NCCL, tmp_path=tmp_path, env=unset)
    assert code == 0, err


def test_mpirun_shim_fail_outcome_prints_the_ompi_banner(tmp_path):
    code, out, err = shim("mpirun", "-np", "16", "--hostfile", "HOSTFILE", *NCCL, tmp_path=tmp_path, env={"LAB_NCCL_OUTCOME": "fail"})
    assert code == 1 and out == pathlib.Path(PASSING).read_text()
    assert "Primary job  terminated normally, but 1 process returned" in err


@pytest.mark.parametrize("args, rc, expected", [
    (["--mpi=pmix", "--gpu-bind=closest"] + NCCL, 1, "srun: unrecognized option '--gpu-bind=closest'"),
    (["--mpi=pmix", "-Z"] + NCCL, 1, "srun: invalid option -- 'Z'"),
    (["--mpi=pmi5"] + NCCL, 1, "Couldn't find the specified plugin name for mpi/pmi5"),
    (["--mpi=pmix", "--nodes=two"] + NCCL, 1, 'Invalid numeric value "two" for --nodes.'),
    (["--mpi=pmix", "--nodes=2", "--nodelist=gpu1"] + NCCL, 1, "Requested node configuration is not available"),
    (["--mpi=pmix", "--label=yes"] + NCCL, 1, "option '--label' doesn't allow an argument"),
    (["--mpi=pmix", "--nodes=2"], 1, "srun: fatal: No command given to execute."),
    (["--mpi=pmix", "--nodes=2", "hostname"], 2, "execve(): hostname: No such file or directory"),
    (["--mpi=none", "--nodes=2"] + NCCL, 2, "would start independent single-rank copies"),
])
def test_srun_shim_rejects_like_slurm(args, rc, expected):
    code, out, err = shim("srun", *args)
    assert (code, out) == (rc, "") and expected in err


def test_srun_shim_label_prefixes_lines():
    code, out, err = shim("srun", "--mpi=pmix", "-N", "2", "--ntasks-per-node", "8", "-l", *NCCL)
    assert code == 0, err
    assert out.splitlines()[0] == "0: " + pathlib.Path(PASSING).read_text().splitlines()[0]


def test_the_roce_labs_default_passes_and_failing_fails_its_intent():
    """The choices mean what they say against the RoCE lab's intent, with transport and GPUDirect checked."""
    import yaml

    from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
    from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
    from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse

    group_vars = ROOT / "inventories" / "lab" / "group_vars" / "all"
    intent = yaml.safe_load((group_vars / "lossless_fabric.yml").read_text())["lossless_fabric"]
    lab = yaml.safe_load((group_vars / "lab_nccl.yml").read_text())
    assert "nccl_gate_check_transport" not in lab   # the role's default (true): transport and GPUDirect gated
    targets, errors = _intent_targets.validate_targets(intent["targets"], transport=intent["transport"])
    assert errors == []
    # the bandwidth target is the intent's, under collectives.all_reduce_perf: nccl_gate_targets, if the lab sets it
    # for the performance model (lab_perf_faults), renders to no target while no fault is set
    if "nccl_gate_targets" in lab:
        import jinja2
        rendered = jinja2.Environment().from_string(lab["nccl_gate_targets"]).render(lab_perf_faults=[])
        assert rendered == "[]", rendered
    settings, errors = _nccl_gate.gate_settings({"fabric_targets": targets}, *_intent_targets.fabric_targets(targets))
    assert errors == [] and settings["require_transport"] == ["RoCE"] and settings["require_gdr"] is False
    (default,) = replay.resolve(lab["lab_nccl_replay"])
    assert _nccl_gate.gate_report(_nccl_parse.parse(read(default)), settings)["passed"]
    failing = _nccl_gate.gate_report(_nccl_parse.parse(read(FAILING)), settings)["unmet"]
    assert [u.split(" (")[0] for u in failing] == ["all_reduce_perf: transport unknown is not proven to be RoCE",
                                                   "all_reduce_perf: GPUDirect RDMA is not proven, required off"]
    # the IB lab's passing log proves no transport either: in the RoCE lab it fails
    assert not _nccl_gate.gate_report(_nccl_parse.parse(read(PASSING)), settings)["passed"]
