# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's nccl-tests binaries for the node baseline (``nccl_benchmark`` with ``launcher: local``).

One process drives every GPU of its host (``-g N``), no MPI: what ``all_reduce_perf -g 8`` prints on one node
(NVIDIA/nccl-tests v2.19.6, the current release: src/util.cu writeDeviceReport 622-716, writeResultHeader 739-768,
writeBenchmarkLinePreamble 457, writeBenchmarkLineBody 497-513, writeResultFooter 771-793; src/common.cu TimeTest
921-951). The command line is checked as nccl-tests' getopt does (shim.py ``_nccl_tests_args``: an unknown option
prints the usage and exits 0, a bad size is refused); ``-g`` above the host's GPUs fails as
src/util.cu:672-676 does ("Invalid number of GPUs: ... requested but only ... were found.", then the TESTCHECK
line of src/common.h:86 and exit code 5, testNotImplemented).

Bandwidth (lab choices, unverified - no GPU ran this): a healthy node's all_reduce bus bandwidth peaks at
``NODE_PEAK_GBPS`` (NVLink/NVSwitch inside an HGX H100-class node; Azure's ND H100 v5 health check gates 460),
scaled by every ``{host: <this host>, factor: f}`` fault of the lab run's ``perf.json`` (``lab_perf_faults``: the
"slow host" knob also slows its GPUs) and by the run's log-normal noise; the size curve is the alpha-beta form of
perfmodel.py with ``NODE_ALPHA_S``. busbw = algbw x the collective's factor (2(n-1)/n all_reduce, (n-1)/n
all_gather / reduce_scatter, 1 broadcast / reduce / sendrecv), so one GPU prints busbw 0 for all_reduce, as nccl-tests
does. With NCCL_DEBUG=INFO it adds NCCL's version and communicator lines only (no network lines: what the node's
NICs would print is not modelled here, and the node baseline does not gate a transport).

Environment: ``LAB_NODE_HOST`` (host name; default the machine's), ``LAB_NODE_GPUS`` (GPUs of the host, default 8),
``LAB_NCCL_RUN_DIR`` (the lab run: perf.json faults, noise, seed, launch numbers), ``LAB_NCCL_OUTCOME``
(succeed | fail | hang, as for the mpirun shim), ``LAB_NCCL_RECORD`` (one JSON line per call: argv, host, env).
"""
from __future__ import annotations

import json
import math
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nccl import perfmodel, shim  # noqa: E402  # pylint: disable=wrong-import-position

NODE_PEAK_GBPS = 480.0       # lab choice (unverified): healthy 8-GPU node all_reduce busbw at large sizes
NODE_ALPHA_S = 10e-6         # lab choice: per-operation latency of the size curve
NODE_GPUS = 8
TESTS_VERSION = "2.19.6"
NCCL_CODE = 22304            # nccl-headers / nccl-library as nccl-tests prints them (NCCL 2.23.4)
COLLECTIVE_FACTOR = {"all_reduce": lambda n: 2.0 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
                     "reduce_scatter": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0,
                     "sendrecv": lambda n: 1.0}


def float_text(value: float, width: int) -> str:
    """src/util.cu getFloatStr (v2.19.6 lines 486-492): the widest of %.2f, %.1f, %.0f that fits, else %e."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def host_factor(run_dir: str | None, host: str) -> tuple[float, float, int]:
    """(product of this host's slow-host factors, noise sigma, seed) of the lab run; (1, 0, 1) outside a lab run."""
    if not run_dir:
        return 1.0, 0.0, perfmodel.DEFAULT_SEED
    try:
        with open(os.path.join(run_dir, perfmodel.PERF_FILE), encoding="utf-8") as handle:
            perf = json.load(handle)
    except FileNotFoundError:
        return 1.0, 0.0, perfmodel.DEFAULT_SEED
    factor = 1.0
    for fault in perf.get("faults") or []:
        if isinstance(fault, dict) and fault.get("host") == host:
            factor *= float(fault.get("factor", 1.0))
    return factor, float(perf.get("noise", perfmodel.DEFAULT_NOISE)), int(perf.get("seed", perfmodel.DEFAULT_SEED))


def next_node_launch(run_dir: str) -> int:
    """A launch number of the node model, counted apart from perfmodel's (<run_dir>/node-launches/<n>): a node
    baseline must not shift the noise and ECMP draws of the fabric launches after it."""
    return perfmodel.next_launch(run_dir, "node-launches")


def node_text(collective: str, host: str, gpus: int, args: dict, env: dict, peak: float, launch: int, seed: int,
              noise: float, program: str) -> str:
    """nccl-tests' single-process output on one node, bandwidth from the node model."""
    pid = 4000 + launch % 50000
    step = args["stepfactor"] if args["stepfactor"] > 1 else args["stepbytes"]
    lines = ["# nccl-tests version %s nccl-headers=%d nccl-library=%d" % (TESTS_VERSION, NCCL_CODE, NCCL_CODE),
             "# Collective test starting: %s" % program,
             "# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: %d "
             "validation: %d graph: %d unalign: %d" % (args["nthreads"], args["ngpus"], args["minbytes"], args["maxbytes"], step,
                                                       "factor" if args["stepfactor"] > 1 else "bytes", args["warmup"],
                                                       args["iters"], args["agg"], args["check"], args["graph"], 0),
             "#", "# Using devices"]
    for i in range(gpus):
        lines.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (
            i, 0, pid, host, i, 0, perfmodel.GPU_BUS[i % len(perfmodel.GPU_BUS)], 0, perfmodel.GPU_NAME))
    if env.get("NCCL_DEBUG", "").upper() == "INFO":
        def info(text: str) -> None:
            lines.append("%s:%d:%d [0] NCCL INFO %s" % (host, pid, pid, text))
        info("NCCL version 2.23.4+cuda12.6")
        info("comm 0x5581c0e0 rank 0 nranks %d cudaDev 0 nvmlDev 0 busId %x000 commId 0x7d3c5ef2a0d9c1b1 - Init COMPLETE"
             % (gpus, perfmodel.GPU_BUS[0]))
    lines += ["#",
              "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""),
              "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
                  "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"),
              "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
                  "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")]
    word = perfmodel.TYPE_BYTES[args["type"]]
    factor = COLLECTIVE_FACTOR[collective](gpus)
    rooted = collective in ("broadcast", "reduce")
    opname = "none" if collective in ("all_gather", "broadcast") else args["op"]
    # one GPU: NCCL copies locally; the model's "bandwidth" is the peak an all_reduce-class factor of 1 would show
    eff_factor = factor if factor else 1.0
    bws = []
    for size in perfmodel._sizes(args):  # pylint: disable=protected-access  # TimeTest's size loop, one place
        printed, count, nbytes = perfmodel._counts(collective, size, word, gpus)  # pylint: disable=protected-access
        row = "%12d  %12d  %8s  %6s  %6s" % (printed, count, args["type"], opname, "%6i" % (args["root"] if rooted else -1))
        for placement in ("out", "in"):
            rng = perfmodel._rng("node", seed, launch, host, size, placement)  # pylint: disable=protected-access
            jitter = math.exp(rng.gauss(0.0, noise / 4)) if noise else 1.0
            bus_model = peak * nbytes / (nbytes + NODE_ALPHA_S * peak * 1e9) * jitter if nbytes else 0.0
            alg_model = bus_model / eff_factor
            sec = nbytes / 1e9 / alg_model if nbytes and alg_model > 0 else NODE_ALPHA_S
            alg = nbytes / 1.0e9 / sec
            bus = alg * factor
            bws.append(bus)
            row += "  %7s  %6s  %6s  %6g" % (float_text(sec * 1e6, 7), float_text(alg, 6), float_text(bus, 6), 0)
        lines.append(row)
    lines += ["# %-20s : %d %s" % ("Out of bounds values", 0, "OK"),
              "# %-20s : %g %s" % ("Avg bus bandwidth", sum(bws) / len(bws) if bws else 0.0, ""),
              "#",
              "# Collective test concluded: %s" % program, "#", ""]
    return "\n".join(lines) + "\n"


def main(program: str, argv: list[str], host: str | None = None, run_dir: str | None = None) -> int:
    host = host or os.environ.get("LAB_NODE_HOST") or socket.gethostname()
    run_dir = run_dir or os.environ.get("LAB_NCCL_RUN_DIR")
    gpus_have = int(os.environ.get("LAB_NODE_GPUS", NODE_GPUS))
    name = os.path.basename(program)
    try:
        gpus = shim._nccl_tests_args(program, argv)  # pylint: disable=protected-access  # one getopt check for the lab
        args = perfmodel.parse_test_args(argv)
    except shim.Rejected as exc:
        (sys.stdout if exc.rc == 0 else sys.stderr).write(exc.text)
        return exc.rc
    except perfmodel.PerfModelError as exc:
        sys.stderr.write("lab nodebench: %s\n" % exc)
        return 2
    collective = name[:-4] if name.endswith("_mpi") else name
    collective = collective[:-5]
    if collective not in COLLECTIVE_FACTOR:
        sys.stderr.write("lab nodebench: the node model writes %s only, not %s\n" % (", ".join(COLLECTIVE_FACTOR), collective))
        return 2
    path = os.environ.get("LAB_NCCL_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": name, "argv": argv, "host": host,
                                     "env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}) + "\n")
    if gpus > gpus_have or gpus < 1:
        sys.stdout.write("# nccl-tests version %s nccl-headers=%d nccl-library=%d\n# Collective test starting: %s\n"
                         % (TESTS_VERSION, NCCL_CODE, NCCL_CODE, name))
        sys.stderr.write("Invalid number of GPUs: %d requested but only %d were found.\n"
                         "Please check the number of processes and GPUs per process.\n" % (gpus, gpus_have))
        sys.stdout.write(" .. %s pid %d: Test failure common.cu:1454\n" % (host, os.getpid()))
        return 5
    factor, noise, seed = host_factor(run_dir, host)
    launch = next_node_launch(run_dir) if run_dir and os.path.isdir(run_dir) else 0
    text = node_text(collective, host, gpus, args, dict(os.environ), NODE_PEAK_GBPS * factor, launch, seed, noise, name)
    outcome = os.environ.get("LAB_NCCL_OUTCOME", "succeed")
    if outcome == "hang":
        sys.stdout.write(text[: len(text) * 2 // 5])
        sys.stdout.flush()
        while True:  # a hung collective: only a signal ends it
            time.sleep(3600)
    sys.stdout.write(text)
    return 1 if outcome == "fail" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
