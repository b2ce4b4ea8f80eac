# SPDX-License-Identifier: GPL-3.0-or-later
"""make bench: run every benchmark and write docs/performance.md.

Each bench_*.py prints one JSON line on stdout; this script renders them.
Benchmarks are not tests: they assert nothing about time.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit("%s failed:\n%s%s" % (script, out.stdout[-3000:], out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    push = _run("bench_switch_push.py")
    parser = _run("bench_nccl_parser.py")
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Performance",
        "",
        "Written by `make bench` (`bench/run.py`) on %s: %d cores, Python %s, %s." % (now, os.cpu_count() or 0, platform.python_version(), platform.machine()),
        "Numbers are ratios against a baseline run side by side in the same run; the absolute seconds move with the machine.",
        "",
        "## Switch push + read-back (`bench/bench_switch_push.py`)",
        "",
        "Simulated EOS switches (`tests/lab/switchsim`), forks %d, the same %d-line configuration: `lossless.fabric.switch_config`"
        % (push["rows"][0]["forks"], push["rows"][0]["lines"]),
        "(session, load, device diff, commit timer, read-back, confirm, save) against `arista.eos.eos_config` with `src` over",
        "`ansible.netcommon.network_cli` followed by `eos_command: show running-config`.",
        "",
        "Per-host: one `switch_config` task per switch (forks). Fabric-wide: one task with `fabric:` pushing every switch",
        "from a thread pool in one worker.",
        "",
        "| switches | mode | ours first (s) | eos_config first (s) | first ratio | ours rerun (s) | eos_config rerun (s) | rerun ratio "
        "| our rerun / our first |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in push["rows"]:
        lines.append("| %(switches)d | per-host | %(ours_first_s).2f | %(eos_config_first_s).2f | %(first_ratio).3f | %(ours_rerun_s).2f "
                     "| %(eos_config_rerun_s).2f | %(rerun_ratio).3f | %(ours_rerun_over_first).3f |" % row)
        lines.append("| %(switches)d | fabric-wide | %(fabric_first_s).2f | %(eos_config_first_s).2f | %(fabric_first_ratio).3f | %(fabric_rerun_s).2f "
                     "| %(eos_config_rerun_s).2f | %(fabric_rerun_ratio).3f | %(fabric_rerun_over_first).3f |" % row)
    lines += [
        "",
        "The push tasks alone (timestamps taken in the play just before and after them; the rest of each run is",
        "ansible-playbook start-up and the plan, the same in a first run and a rerun):",
        "",
        "| switches | mode | ours first push (s) | ours rerun push (s) | rerun / first | eos_config first push (s) | eos_config rerun push (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in push["rows"]:
        for mode, key in (("per-host", "ours"), ("fabric-wide", "fabric")):
            first, rerun = row[key + "_push_first_s"], row[key + "_push_rerun_s"]
            cells = (row["switches"], mode, first, rerun, rerun / first if first else 0.0, row["eos_config_push_first_s"], row["eos_config_push_rerun_s"])
            lines.append("| %d | %s | %.2f | %.2f | %.3f | %.2f | %.2f |" % cells)
    lines += [
        "",
        "Aim (issue 3): at 64 switches our first run at most 0.15x the eos_config play, and our no-change rerun at most a third of our first run.",
        "",
        "Reading the second aim: a no-change rerun still pays what a first run pays before and after the push - the",
        "ansible-playbook start-up and the plan (about 1.3 s and 1 s here), one SSH handshake and netmiko session set-up per",
        "switch - and saves only the commit, read-back, confirm and save round trips, which are cheap against the simulator.",
        "So our rerun lands near our first run (ratio about 0.9-1.1), not at a third of it; the shorter the first run, the",
        "harder that ratio gets. The simulator runs in the same 2 cores as the client, which inflates both columns alike.",
        "The push tasks alone say the same: a first push and a no-change push cost about the same here, because what only a",
        "first push does (commit with a timer, read-back, confirm, save) the simulator answers at once, while what both do -",
        "an SSH handshake and session set-up per switch, loading the lines into a session, the device's diff - is most of it.",
        "A real switch takes its time to commit and save, which this simulator does not model; we do not add a made-up",
        "commit delay to reach a ratio, and we do not skip the device's diff on a rerun (it is the judge of what changes).",
        "",
        "## nccl-tests parser throughput (`bench/bench_nccl_parser.py`)",
        "",
        "```json",
        json.dumps(parser, indent=1, sort_keys=True),
        "```",
        "",
        "Aim (issue 4): at least 50 MB/s on one core.",
        "",
    ]
    with open(os.path.join(ROOT, "docs", "performance.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    print("bench: wrote docs/performance.md")


if __name__ == "__main__":
    main()
