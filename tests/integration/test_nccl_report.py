# SPDX-License-Identifier: GPL-3.0-or-later
"""nccl_report (action) and the gate entry point of role nccl_gate, through ansible-playbook on localhost.

No simulator: the launches are real logs from the public corpus, passed the way nccl_benchmark returns them
({name, log, status, rc}). The lab run of the whole playbook is test_benchmark_playbook.py."""

from __future__ import annotations

import json
import os
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

CORPUS = os.path.join(ROOT, "tests", "data", "nccl-corpus")
EFA_LOG = os.path.join(CORPUS, "awsefaeks_p4d_2node_efa_debug_info.txt")   # EFA, GDR proven, 42.48/42.46 GB/s at 1 GiB
HDR_LOG = os.path.join(CORPUS, "deepops_netop_dgxa100_2node_hdr.txt")        # no debug lines, 181.62 GB/s at 1 GiB


def _intent(min_busbw):
    return {"lossless_fabric": {
        "name": "t", "transport": "roce",
        "roce": {"trust": "dscp", "data": {"dscp": 26, "priority": 3}, "cnp": {"dscp": 48, "priority": 6, "strict": True},
                 "pfc": {"priorities": [3]}, "mtu": {"switch": 9214, "host": 9000}},
        "targets": {"require_transport": "EFA", "require_gdr": True,
                    "collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": min_busbw}]}},
    }}


def _run(tmp_path, plays, *args, extra=None):
    book = tmp_path / "play.yml"
    book.write_text(yaml.safe_dump(plays, sort_keys=False))
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable,
            str(book), *args]
    if extra is not None:
        vars_file = tmp_path / "vars.yml"
        vars_file.write_text(yaml.safe_dump(extra))
        argv += ["-e", "@%s" % vars_file]
    return run(argv, timeout=300)


def _tail(out):
    return (out.stdout + out.stderr)[-4000:]


def _recap_changed(out):
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("localhost") and "changed=" in ln)
    return int(line.split("changed=")[1].split()[0])


# ---------------------------------------------------------------------------
# the action

def _report_play(report_dir, name="bench", min_busbw=40.0):
    return [{
        "name": "report", "hosts": "localhost", "gather_facts": False,
        "tasks": [
            {"name": "parse", "lossless.fabric.nccl_result": {"content": "{{ item.log }}"},
             "loop": [{"name": "efa-1", "status": "succeeded", "rc": 0, "log": "{{ lookup('file', '%s') }}" % EFA_LOG},
                      {"name": "efa-2", "status": "succeeded", "rc": 0, "log": "{{ lookup('file', '%s') }}" % EFA_LOG}],
             "loop_control": {"label": "{{ item.name }}"}, "register": "nccl"},
            {"name": "write", "lossless.fabric.nccl_report": {
                "report_dir": report_dir, "name": name, "results": "{{ nccl.results }}",
                "targets": [{"min_size": "1G", "min_busbw": min_busbw}], "require_transport": ["EFA"], "require_gdr": True},
             "register": "rep"},
            {"name": "show", "ansible.builtin.debug": {
                "msg": "RESULT {{ {'verdict': rep.verdict, 'unmet': rep.unmet, 'written': rep.written, 'files': rep.files} | to_json }}"}},
        ],
    }]


def _result(out):
    line = next(ln for ln in out.stdout.splitlines() if '"msg": "RESULT ' in ln)
    return json.loads(json.loads("{%s}" % line.strip())["msg"][len("RESULT "):])


def test_nccl_report_writes_three_files_once_and_check_mode_tells_the_truth(tmp_path):
    report_dir = str(tmp_path / "reports" / "lab")
    first = _run(tmp_path, _report_play(report_dir))
    assert first.returncode == 0, _tail(first)
    res = _result(first)
    assert res["verdict"] == "pass" and res["unmet"] == []
    assert res["written"] == ["bench.json", "bench.md", "bench.png"]
    assert res["files"]["json"] == report_dir + "/bench.json"
    with open(os.path.join(report_dir, "bench.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    assert [ln["name"] for ln in report["launches"]] == ["efa-1", "efa-2"]
    assert report["launches"][0]["transport"] == "EFA" and report["launches"][0]["gate"]["verdict"] == "pass"
    with open(os.path.join(report_dir, "bench.png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "| efa-1 | succeeded | all_reduce | 16 |" in (tmp_path / "reports" / "lab" / "bench.md").read_text()
    stamps = {n: os.stat(os.path.join(report_dir, n)).st_mtime_ns for n in os.listdir(report_dir)}

    again = _run(tmp_path, _report_play(report_dir))
    assert again.returncode == 0, _tail(again)
    assert _recap_changed(again) == 0 and _result(again)["written"] == []
    assert {n: os.stat(os.path.join(report_dir, n)).st_mtime_ns for n in os.listdir(report_dir)} == stamps

    # a stricter target: check mode says what would change and writes nothing
    checked = _run(tmp_path, _report_play(report_dir, min_busbw=43.0), "--check", "--diff")
    assert checked.returncode == 0, _tail(checked)
    res = _result(checked)
    assert res["verdict"] == "fail" and res["written"] == ["bench.json", "bench.md", "bench.png"]
    assert any("42.46 GB/s < target 43.00 GB/s" in line for line in res["unmet"])
    assert _recap_changed(checked) == 1
    assert '-  "verdict": "pass"' in checked.stdout and '+  "verdict": "fail"' in checked.stdout
    assert "<PNG, " in checked.stdout
    assert {n: os.stat(os.path.join(report_dir, n)).st_mtime_ns for n in os.listdir(report_dir)} == stamps
    assert json.loads((tmp_path / "reports" / "lab" / "bench.json").read_text())["verdict"] == "pass"


def test_nccl_report_refuses_a_bad_name_before_writing(tmp_path):
    report_dir = str(tmp_path / "out")
    out = _run(tmp_path, _report_play(report_dir, name="../bench"))
    assert out.returncode != 0
    assert "name: '../bench' is not a report name" in out.stdout
    assert not os.path.exists(report_dir)


# ---------------------------------------------------------------------------
# the role's gate entry point

def _gate_plays(report_dir, log, launches=2, phase="", fail=True, baseline_phase=None):
    def entry(ph, extra):
        return {"ansible.builtin.import_role": {"name": "lossless.fabric.nccl_gate", "tasks_from": "gate"},
                "vars": dict({"nccl_gate_report_dir": report_dir, "nccl_gate_phase": ph, "nccl_gate_fail": fail,
                              "nccl_gate_launches": [{"name": "%s-%d" % (ph or "run", i + 1), "status": "succeeded", "rc": 0,
                                                      "log": "{{ lookup('file', '%s') }}" % log} for i in range(launches)]}, **extra)}
    tasks = []
    if baseline_phase:
        tasks.append(dict(entry(baseline_phase, {}), name="pre"))
        tasks.append({"name": "keep pre", "ansible.builtin.set_fact": {"pre_result": "{{ nccl_gate_result }}"}})
        tasks.append(dict(entry(phase, {"nccl_gate_baseline": "{{ pre_result.results }}", "nccl_gate_baseline_label": baseline_phase}),
                          name="post"))
    else:
        tasks.append(dict(entry(phase, {}), name="gate"))
    tasks.append({"name": "show", "ansible.builtin.debug": {
        "msg": "RESULT {{ {'verdict': nccl_gate_result.verdict, 'unmet': nccl_gate_result.unmet, 'n': nccl_gate_result.results | length, "
               "'compare': (nccl_gate_result.compare or {}).get('verdict'), 'files': nccl_gate_result.files} | to_json }}"}})
    return [
        {"name": "plan", "hosts": "localhost", "gather_facts": False,
         "roles": [{"role": "lossless.fabric.fabric_plan", "vars": {"fabric_plan_show_summary": False, "fabric_plan_report_dir": ""}}]},
        {"name": "gate", "hosts": "localhost", "gather_facts": False, "tasks": tasks},
    ]


def test_gate_entry_passes_and_leaves_the_result(tmp_path):
    report_dir = str(tmp_path / "r")
    out = _run(tmp_path, _gate_plays(report_dir, EFA_LOG), extra=_intent(40))
    assert out.returncode == 0, _tail(out)
    res = _result(out)
    assert res["verdict"] == "pass" and res["n"] == 2 and res["compare"] is None
    assert res["files"]["markdown"] == report_dir + "/benchmark.md"
    assert json.loads((tmp_path / "r" / "benchmark.json").read_text())["targets"]["require_transport"] == ["EFA"]


def test_gate_entry_writes_the_report_then_fails_naming_target_and_value(tmp_path):
    report_dir = str(tmp_path / "r")
    out = _run(tmp_path, _gate_plays(report_dir, EFA_LOG, phase="post"), extra=_intent(43))
    assert out.returncode != 0
    assert "Verify - the gate" in out.stdout
    assert "post-1: all_reduce_perf in-place busbw at 1073741824 B (1 GiB): 42.46 GB/s < target 43.00 GB/s" in out.stdout
    assert "post-2: all_reduce_perf in-place busbw at 1073741824 B (1 GiB): 42.46 GB/s < target 43.00 GB/s" in out.stdout
    report = json.loads((tmp_path / "r" / "benchmark-post.json").read_text())
    assert report["verdict"] == "fail" and report["phase"] == "post" and len(report["unmet"]) == 2
    assert (tmp_path / "r" / "benchmark-post.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gate_entry_without_failing_reports_the_verdict(tmp_path):
    out = _run(tmp_path, _gate_plays(str(tmp_path / "r"), HDR_LOG, fail=False), extra=_intent(40))
    assert out.returncode == 0, _tail(out)
    res = _result(out)
    # no NCCL_DEBUG lines: neither EFA nor GPUDirect is proven, so the gate fails although busbw is high
    assert res["verdict"] == "fail"
    assert "run-1: all_reduce_perf: transport unknown is not proven to be EFA (evidence: no NCCL_DEBUG=INFO transport lines)" in res["unmet"]


def test_gate_entry_compares_post_with_the_pre_run(tmp_path):
    report_dir = str(tmp_path / "r")
    out = _run(tmp_path, _gate_plays(report_dir, EFA_LOG, launches=5, phase="post", baseline_phase="pre"), extra=_intent(40))
    assert out.returncode == 0, _tail(out)
    res = _result(out)
    assert res["verdict"] == "pass" and res["compare"] == "ok"
    report = json.loads((tmp_path / "r" / "benchmark-post.json").read_text())
    assert report["baseline_launches"] == 5 and [s["label"] for s in report["series"]] == ["pre", "post"]
    assert report["compare"]["verdict"] == "ok"
    assert os.path.exists(os.path.join(report_dir, "benchmark-pre.md"))


def test_gate_entry_with_too_few_launches_to_compare_fails_inconclusive(tmp_path):
    out = _run(tmp_path, _gate_plays(str(tmp_path / "r"), EFA_LOG, launches=2, phase="post", baseline_phase="pre"), extra=_intent(40))
    assert out.returncode != 0
    assert "compare: all_reduce_perf out-of-place busbw at" in out.stdout and "inconclusive (2 pre vs 2 post launches)" in out.stdout
    assert json.loads((tmp_path / "r" / "benchmark-post.json").read_text())["compare"]["verdict"] == "inconclusive"


def test_gate_refuses_to_run_without_targets_for_the_collective(tmp_path):
    intent = _intent(40)
    intent["lossless_fabric"]["targets"]["collectives"] = {"all_gather_perf": [{"min_size": "1G", "min_busbw": 40}]}
    out = _run(tmp_path, _gate_plays(str(tmp_path / "r"), EFA_LOG), extra=intent)
    assert out.returncode != 0
    assert "no busbw target for all_reduce_perf: add lossless_fabric.targets.collectives.all_reduce_perf" in out.stdout
    assert not os.path.exists(str(tmp_path / "r"))


def test_gate_without_transport_checks_gates_busbw_only_and_says_so(tmp_path):
    plays = _gate_plays(str(tmp_path / "r"), HDR_LOG)
    plays[1]["tasks"][0]["vars"]["nccl_gate_check_transport"] = False
    out = _run(tmp_path, plays, extra=_intent(180))
    assert out.returncode == 0, _tail(out)
    assert _result(out)["verdict"] == "pass"
    report = json.loads((tmp_path / "r" / "benchmark.json").read_text())
    assert report["targets"]["require_transport"] is None and report["targets"]["require_gdr"] is None
    assert "Transport: not required. GPUDirect RDMA: not checked." in (tmp_path / "r" / "benchmark.md").read_text()
    # the busbw target still bites: 181.62 GB/s at 1 GiB is below 185
    out = _run(tmp_path, plays, extra=_intent(185))
    assert out.returncode != 0
    assert "run-1: all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 181.62 GB/s < target 185.00 GB/s" in out.stdout
