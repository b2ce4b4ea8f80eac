# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/cabling.yml against the lab (issue 16): the switches (switchsim LLDP), the GPU hosts (hostsim's
lldpctl and sysfs) and the controller's comparison, with the lab's cables as tests/lab/wiring.py makes them.

One lab for the module: each test rewrites <run_dir>/wiring.json with its faults (wiring.refault; the
simulators read it on every command) and runs the playbook. The correct fabric passes; a swap, a move, a
downgrade and an unplug are each found and named exactly (both ends, rail, expected and found); an allowed
exception passes and stays in the report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, GENERATED, ROOT, ansible_env, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import wiring  # noqa: E402  # pylint: disable=import-error,wrong-import-position

LAUNCHER = os.path.join(ROOT, "tests", "lab", "launcher.py")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    where = tmp_path_factory.mktemp("cabling")
    inventory = copy_lab_inventory(where / "lab")
    run_dir, report_dir = where / "run", where / "report"
    base = [sys.executable, LAUNCHER]
    where_args = ["-i", inventory, "--run-dir", str(run_dir), "--report-dir", str(report_dir)]
    up = subprocess.run([*base, "up", *where_args], cwd=ROOT, env=ansible_env(), capture_output=True, text=True, check=False, timeout=300)
    try:
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]

        def playbook(faults, *args, play="playbooks/cabling.yml"):
            wiring.refault(str(run_dir), faults)
            for name in ("cabling.json", "cabling.md"):
                if (report_dir / name).exists():
                    (report_dir / name).unlink()
            out = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, play, *args])
            report = json.loads((report_dir / "cabling.json").read_text()) if (report_dir / "cabling.json").exists() else None
            md = (report_dir / "cabling.md").read_text() if (report_dir / "cabling.md").exists() else None
            return out, report, md

        yield playbook
    finally:
        subprocess.run([*base, "down", *where_args], cwd=ROOT, env=ansible_env(), capture_output=True, text=True, check=False, timeout=120)


def bad(report) -> list:
    return [(f["finding"], f["a"], f["b"], f["rail"]) for f in report["findings"] if f["finding"] != "ok"]


def test_the_correct_lab_passes(lab):
    out, report, md = lab([])
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert report["verdict"] == "passed" and report["summary"]["ok"] == 11 and bad(report) == [], report
    assert "Every intended link is cabled as the intent says." in md
    assert "Cabling check passed: 11 intended link(s) ok" in out.stdout


def test_a_swap_is_found_and_names_both_links(lab):
    out, report, md = lab([{"swap": ["leaf1:swp1", "leaf1:swp2"]}])
    assert out.returncode != 0
    assert bad(report) == [("swapped", "leaf1:swp1", "gpu1:mlx5_0", 0)], report["findings"]
    swapped = [f for f in report["findings"] if f["finding"] == "swapped"][0]
    assert [(x["a"], x["b"]) for x in swapped["links"]] == [("leaf1:swp1", "gpu1:mlx5_0"), ("leaf1:swp2", "gpu2:mlx5_0")]
    assert swapped["found"].startswith("crossed: leaf1:swp1 - gpu2:mlx5_0 and leaf1:swp2 - gpu1:mlx5_0")
    assert "| swapped | leaf1:swp1 | gpu1:mlx5_0 | 0 |" in md
    assert "Cabling check failed: 1 finding(s) on 11 intended link(s)" in out.stdout


def test_a_moved_nic_is_found_on_both_links_it_touches(lab):
    out, report, _md = lab([{"move": "gpu1:mlx5_0", "to": "leaf2:et-0/0/2"}])
    assert out.returncode != 0
    assert bad(report) == [("wrong_peer", "leaf1:swp1", "gpu1:mlx5_0", 0), ("wrong_peer", "leaf2:et-0/0/2", "gpu2:mlx5_1", 1)], report["findings"]
    found = {f["a"]: f["found"] for f in report["findings"] if f["finding"] == "wrong_peer"}
    assert "gpu1:mlx5_0 sees leaf2:et-0/0/2" in found["leaf1:swp1"] and "leaf1:swp1 down" in found["leaf1:swp1"]
    assert "leaf2:et-0/0/2 sees gpu1:mlx5_0" in found["leaf2:et-0/0/2"] and "gpu2:mlx5_1 down" in found["leaf2:et-0/0/2"]


def test_a_downgraded_link_is_degraded(lab):
    out, report, _md = lab([{"downgrade": "leaf1:swp31", "speed": "200G"}])
    assert out.returncode != 0
    assert bad(report) == [("degraded", "leaf1:swp31", "spine1:Ethernet1/1", None)], report["findings"]
    degraded = [f for f in report["findings"] if f["finding"] == "degraded"][0]
    assert degraded["found"] == "leaf1:swp31 at 200G; spine1:Ethernet1/1 at 200G" and degraded["expected"].endswith("at 400G")


def test_an_unplugged_link_is_missing(lab):
    out, report, _md = lab([{"unplug": "leaf2:et-0/0/1"}])
    assert out.returncode != 0
    assert bad(report) == [("missing", "leaf2:et-0/0/1", "gpu1:mlx5_1", 1)], report["findings"]
    assert [f["found"] for f in report["findings"] if f["finding"] == "missing"] == ["leaf2:et-0/0/1 down; gpu1:mlx5_1 down"]


def test_an_allowed_exception_passes_and_stays_in_the_report(lab, tmp_path):
    extra = tmp_path / "exceptions.yml"
    extra.write_text(yaml.safe_dump({"cabling_exceptions": [{"end": "leaf1:swp2", "finding": "missing", "reason": "RMA 1234"}]}))
    out, report, md = lab([{"unplug": "leaf1:swp2"}], "-e", "@%s" % extra)
    assert out.returncode == 0, out.stdout[-4000:]
    assert report["verdict"] == "passed" and report["summary"]["allowed"] == 1
    assert "| missing | leaf1:swp2 | gpu2:mlx5_0 | 0 |" in md and "allowed: RMA 1234 |" in md


def test_site_stops_at_a_bad_cable_before_any_change(lab):
    out, report, _md = lab([{"unplug": "leaf1:swp2"}], play="playbooks/site.yml")
    assert out.returncode != 0 and bad(report) == [("missing", "leaf1:swp2", "gpu2:mlx5_0", 0)]
    plays = [line for line in out.stdout.splitlines() if line.startswith("PLAY [")]
    assert plays[-1].startswith("PLAY [Cabling - what every device sees against the intended links]"), plays
    assert "switch_config" not in out.stdout and "Switches - lossless QoS" not in out.stdout


def test_a_bad_exception_fails_before_any_device_is_read(lab, tmp_path):
    extra = tmp_path / "exceptions.yml"
    extra.write_text(yaml.safe_dump({"cabling_exceptions": [{"end": "leaf1:swp2", "finding": "broken", "reason": "x"}]}))
    out, report, _md = lab([], "-e", "@%s" % extra)
    assert out.returncode != 0 and report is None
    assert "cabling_exceptions[0].finding: 'broken' is not a finding an exception can allow" in out.stdout
    assert "Verify - read the switch" not in out.stdout


@pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None,
                    reason="needs ibsim-utils and opensm (apt-get install ibsim-utils opensm infiniband-diags)")
def test_the_infiniband_lab_is_read_on_the_subnet_manager_and_its_faults_found(tmp_path):
    inventory = str(tmp_path / "lab-ib")
    shutil.copytree(os.path.join(ROOT, "inventories", "lab-ib"), inventory, ignore=shutil.ignore_patterns(GENERATED))
    in_lab = launcher(inventory, tmp_path / "run", tmp_path / "report")
    out = run([*in_lab, os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/cabling.yml"])
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "Cabling check passed: 8 intended link(s) ok" in out.stdout
    # ibsim is plugged at start: the faults go into the inventory of a second lab run.
    with open(os.path.join(inventory, "group_vars", "all", "zz_lab_cabling_faults.yml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump({"lab_cabling_faults": [{"swap": ["gpu1:mlx5_0", "gpu2:mlx5_0"]}, {"downgrade": "gpu4:mlx5_1", "speed": "100G"},
                                               {"unplug": "gpu3:mlx5_0"}]}, handle)
    out = run([*in_lab, os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/cabling.yml"])
    assert out.returncode != 0
    report = json.loads((tmp_path / "report" / "cabling.json").read_text())
    assert bad(report) == [("swapped", "leaf1:1", "gpu1:mlx5_0", None), ("missing", "leaf2:1", "gpu3:mlx5_0", None),
                           ("degraded", "leaf4:2", "gpu4:mlx5_1", None)], report["findings"]
    degraded = [f for f in report["findings"] if f["finding"] == "degraded"][0]
    assert degraded["found"] == "leaf4:2 at 100G 4X; gpu4:mlx5_1 at 100G 4X"


def test_an_intent_without_cabling_is_skipped_with_a_message_and_reads_nothing(tmp_path):
    inventory = copy_lab_inventory(tmp_path / "lab")
    for host in ("leaf1", "leaf2", "leaf3", "leaf4", "leaf5"):
        path = os.path.join(inventory, "host_vars", host + ".yml")
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        for spec in data["lossless_fabric_device"]["ports"].values():
            spec.pop("peer", None)
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(data, handle)
    # No lab is up: a reader that ran would fail to connect.
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/cabling.yml", "-e", "lossless_fabric_report_dir=%s" % (tmp_path / "r")])
    assert out.returncode == 0, out.stdout[-4000:]
    assert "Cabling check skipped: the intent describes no links" in out.stdout
    recap = [line for line in out.stdout.splitlines() if " : ok=" in line]
    assert len(recap) == 9 and all("failed=0" in line and "ignored=0" in line for line in recap), recap  # no reader ran (it would fail here)
    assert not (tmp_path / "r" / "cabling.json").exists()
