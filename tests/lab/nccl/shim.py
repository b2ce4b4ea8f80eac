# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict ``mpirun`` (Open MPI 4.1) and ``srun`` (Slurm with PMIx) replay shims for the lab.

They check their command line the way the real tools do - an unknown option,
a missing hostfile, too few slots, a program that is not an nccl-tests binary
or a bad nccl-tests flag is rejected with the tool's own message and exit
code - and then print a recorded real nccl-tests log instead of running one.

Which log (README.md): ``LAB_NCCL_REPLAY`` (passing | failing | a file name),
else the ``replay`` of the JSON file named by ``LAB_NCCL_CONFIG``, else
``passing``. ``LAB_NCCL_OUTCOME`` = succeed | fail | hang (default succeed;
hang prints 40 % of the log and waits to be killed). ``LAB_NCCL_RECORD``
names a file to which each call appends one JSON line: argv, the environment
the ranks would get (``-x``), the hostfile.

Performance model (README.md): when the lab run's ``perf.json`` (the run dir
from ``LAB_NCCL_RUN_DIR``, else the ``run_dir`` of the config) has faults, the
shims print what perfmodel.py computes for this job's hosts, NICs and sizes
instead of the recorded log, a fresh launch number per call.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import traffic  # noqa: E402  # pylint: disable=wrong-import-position

from nccl import perfmodel, replay  # noqa: E402  # pylint: disable=wrong-import-position

OMPI_BAR = "-" * 74
OMPI_FAILURE = (OMPI_BAR + "\nPrimary job  terminated normally, but 1 process returned\n"
                "a non-zero exit code. Per user-direction, the job has been aborted.\n" + OMPI_BAR + "\n")
# mpirun run as root without --allow-run-as-root or both OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (open-mpi/ompi#6895 and #6911, v4.0.2; the text of orterun.c there).
OMPI_ROOT = (OMPI_BAR + "\nmpirun has detected an attempt to run as root.\n"
             "Running at root is *strongly* discouraged as any mistake (e.g., in\n"
             "defining TMPDIR) or bug can result in catastrophic damage to the OS\n"
             "file system, leaving your system in an unusable state.\n\n"
             "You can override this protection by adding the --allow-run-as-root\n"
             "option to your cmd line. However, we reiterate our strong advice\n"
             "against doing so - please do so at your own risk.\n" + OMPI_BAR + "\n")
# Open MPI 4.1 mpirun options used around nccl-tests: name -> number of arguments.
MPIRUN_OPTIONS = {
    "-np": 1, "--np": 1, "-n": 1, "-c": 1,
    "-H": 1, "-host": 1, "--host": 1,
    "-hostfile": 1, "--hostfile": 1, "-machinefile": 1, "--machinefile": 1, "--default-hostfile": 1,
    "-x": 1,
    "-bind-to": 1, "--bind-to": 1, "-map-by": 1, "--map-by": 1, "-rank-by": 1, "--rank-by": 1,
    "-N": 1, "-npernode": 1, "--npernode": 1,
    "-mca": 2, "--mca": 2, "-gmca": 2, "--gmca": 2,
    "-wdir": 1, "--wdir": 1, "-prefix": 1, "--prefix": 1, "--output-filename": 1,
    "-tag-output": 0, "--tag-output": 0, "-timestamp-output": 0, "--timestamp-output": 0,
    "--allow-run-as-root": 0, "-oversubscribe": 0, "--oversubscribe": 0, "-report-bindings": 0,
    "--report-bindings": 0, "-display-map": 0, "--display-map": 0, "-v": 0, "--verbose": 0, "-q": 0, "--quiet": 0,
    "--merge-stderr-to-stdout": 0,
}
BIND_POLICIES = ("none", "hwthread", "core", "l1cache", "l2cache", "l3cache", "socket", "numa", "board", "cpu-list")
# nccl-tests v2.19.6 getopt string (reference nccl-tests.md section 3); every option takes an argument except -h.
NCCL_TESTS_OPTS = "t:g:b:e:i:f:n:m:w:N:p:I:K:c:o:d:r:z:y:T:hG:C:a:R:x:D:V:J:S:M:u:"
NCCL_TESTS_LONG = {"nthreads": "t", "ngpus": "g", "minbytes": "b", "maxbytes": "e", "stepbytes": "i", "stepfactor": "f",
                   "iters": "n", "agg_iters": "m", "warmup_iters": "w", "run_cycles": "N", "parallel_init": "p", "check": "c",
                   "op": "o", "datatype": "d", "root": "r", "blocking": "z", "stream_null": "y", "timeout": "T", "cudagraph": "G",
                   "report_cputime": "C", "average": "a", "local_register": "R", "output_file": "J", "memory": "M",
                   "unalign": "u", "per_iter_timing": "I", "help": "h"}
_PERF = re.compile(r"([a-z_]+)_perf(_mpi)?")
_SIZE = re.compile(r"\d+[KMGkmg]?")
SRUN_OPTIONS = {  # long name -> (short, takes an argument)
    "mpi": (None, True), "nodes": ("N", True), "ntasks": ("n", True), "ntasks-per-node": (None, True),
    "gpus-per-node": (None, True), "gpus": ("G", True), "nodelist": ("w", True), "partition": ("p", True),
    "account": ("A", True), "job-name": ("J", True), "time": ("t", True), "container-image": (None, True),
    "container-mounts": (None, True), "export": (None, True), "cpus-per-task": ("c", True), "mem": (None, True),
    "label": ("l", False), "exclusive": (None, False),
}
MPI_PLUGINS = ("pmix", "pmix_v3", "pmix_v4", "pmix_v5", "pmi2", "cray_shasta", "none")


class Rejected(Exception):
    """The tool refuses the command line: text for stderr and the exit code."""

    def __init__(self, text: str, rc: int = 1) -> None:
        super().__init__(text)
        self.text = text
        self.rc = rc


def _box(*lines: str) -> str:
    return OMPI_BAR + "\n" + "\n".join(lines) + "\n" + OMPI_BAR + "\n"


def _nccl_tests_args(program: str, args: list[str]) -> int:
    """Check the binary and its flags like nccl-tests' getopt loop; return GPUs per process (-g)."""
    if not _PERF.fullmatch(os.path.basename(program)) or _PERF.fullmatch(os.path.basename(program)).group(1) not in (
            "all_reduce", "all_gather", "reduce_scatter", "alltoall", "alltoallv", "broadcast", "reduce", "sendrecv",
            "scatter", "gather", "hypercube"):
        raise Rejected(_box("mpirun was unable to find the specified executable file, and therefore",
                            "did not launch the job.  This error was first reported for process",
                            "rank 0; it may have occurred for other processes as well.", "",
                            "NOTE: A common cause for this error is misspelling a mpirun command",
                            "      line parameter option (remember that mpirun interprets the first",
                            "      unrecognized command line token as the executable).", "",
                            "Node:       %s" % os.uname().nodename, "Executable: %s" % program), 1)
    gpus = 1
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            name, sep, attached = arg[2:].partition("=")
            flag = NCCL_TESTS_LONG.get(name, "")
            if not flag:
                raise Rejected("%s: unrecognized option '%s'\nUSAGE: %s \n" % (program, arg, os.path.basename(program)), 0)
        else:
            flag = arg[1:2] if arg.startswith("-") and len(arg) >= 2 else ""
            attached, sep = arg[2:], bool(arg[2:])
            if not flag or flag == ":" or NCCL_TESTS_OPTS.find(flag) < 0:
                # getopt's message, then nccl-tests prints its usage and exits 0 without running (section 3)
                letter = arg.lstrip("-")[:1] or arg
                raise Rejected("%s: invalid option -- '%s'\nUSAGE: %s \n" % (program, letter, os.path.basename(program)), 0)
        if flag == "h":
            raise Rejected("USAGE: %s \n" % os.path.basename(program), 0)
        if sep:
            value, i = attached, i + 1
        elif i + 1 < len(args):
            value, i = args[i + 1], i + 2
        else:
            raise Rejected("%s: option requires an argument -- '%s'\n" % (program, flag), 0)
        if flag in "be" and not _SIZE.fullmatch(value):
            raise Rejected("invalid size specified for '%s'\n" % ("minbytes" if flag == "b" else "maxbytes"), 0)
        if flag == "g":
            gpus = int(value) if value.isdigit() else 0
    return gpus


def _read_hostfile(path: str) -> dict[str, int]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        raise Rejected(_box("Open MPI was unable to open the hostfile:", "    %s" % path,
                            "Check to make sure the path and filename are correct.")) from None
    hosts: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        toks = line.split()
        slots = 1
        for tok in toks[1:]:
            m = re.fullmatch(r"(slots|max_slots|max-slots)=(\d+)", tok)
            if not m:
                raise Rejected(_box("Open MPI detected an unexpected token in the hostfile:", "",
                                    "  File: %s" % path, "  Line: %d" % lineno, "  Token: %s" % tok))
            if m.group(1) == "slots":
                slots = int(m.group(2))
        hosts[toks[0]] = hosts.get(toks[0], 0) + slots
    return hosts


def _parse_mpirun(argv: list[str]) -> dict:
    opts: dict = {"np": None, "hosts": {}, "x": [], "mca": [], "tag_output": False, "bind_to": None}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            break
        if arg not in MPIRUN_OPTIONS:
            raise Rejected('mpirun: Error: unknown option "%s"\nType \'mpirun --help\' for usage.\n' % arg)
        count = MPIRUN_OPTIONS[arg]
        values = argv[i + 1:i + 1 + count]
        if len(values) < count:
            raise Rejected("mpirun: Error: option \"%s\" did not have enough parameters (%d)\nType 'mpirun --help' for usage.\n"
                           % (arg, count))
        _apply_mpirun_option(opts, arg.lstrip("-"), values)
        i += 1 + count
    if os.geteuid() == 0 and "--allow-run-as-root" not in argv[:i] and not (
            os.environ.get("OMPI_ALLOW_RUN_AS_ROOT") == "1" and os.environ.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1"):
        raise Rejected(OMPI_ROOT)
    if i >= len(argv):
        raise Rejected(_box("No executable was specified on the mpirun command line.", "",
                            "Aborting."))
    opts["program"], opts["args"] = argv[i], argv[i + 1:]
    return opts


def _apply_mpirun_option(opts: dict, name: str, values: list[str]) -> None:
    if name in ("np", "n", "c"):
        if not values[0].isdigit() or int(values[0]) < 1:
            raise Rejected(_box("Open MPI has detected that a parameter given to a command line", "option does not match the expected format:",
                                "", "  Option: %s" % name, "  Param:  %s" % values[0]))
        opts["np"] = int(values[0])
    elif name in ("H", "host"):
        for item in values[0].split(","):
            host, _sep, slots = item.partition(":")
            opts["hosts"][host] = opts["hosts"].get(host, 0) + (int(slots) if slots.isdigit() else 1)
    elif name in ("hostfile", "machinefile", "default-hostfile"):
        for host, slots in _read_hostfile(values[0]).items():
            opts["hosts"][host] = opts["hosts"].get(host, 0) + slots
        opts["hostfile"] = values[0]
    elif name == "x":
        opts["x"].append(values[0])
    elif name == "bind-to":
        if values[0].split(":")[0] not in BIND_POLICIES:
            raise Rejected(_box("The specified binding policy is not recognized:", "", "  Policy: %s" % values[0], "",
                                "Please check for a typo or ensure that the option is a supported", "one."))
        opts["bind_to"] = values[0]
    elif name in ("mca", "gmca"):
        opts["mca"].append(tuple(values))
    elif name in ("tag-output",):
        opts["tag_output"] = True


def _exported(names: list[str]) -> dict[str, str]:
    out = {}
    for item in names:
        name, sep, value = item.partition("=")
        if sep:
            out[name] = value
        elif name in os.environ:
            out[name] = os.environ[name]
    return out


def _choice() -> str:
    if os.environ.get("LAB_NCCL_REPLAY"):
        return os.environ["LAB_NCCL_REPLAY"]
    if os.environ.get("LAB_NCCL_CONFIG"):
        with open(os.environ["LAB_NCCL_CONFIG"], encoding="utf-8") as handle:
            return json.load(handle).get("replay") or "passing"
    return "passing"


def _record(entry: dict) -> None:
    path = os.environ.get("LAB_NCCL_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def _emit(text: str, prefix: str) -> None:
    lines = text.splitlines(keepends=True)
    outcome = os.environ.get("LAB_NCCL_OUTCOME", "succeed")
    if outcome not in ("succeed", "fail", "hang"):
        raise Rejected("lab shim: LAB_NCCL_OUTCOME %r is not succeed, fail or hang\n" % outcome, 2)
    if outcome == "hang":
        lines = lines[: max(1, len(lines) * 2 // 5)]
    sys.stdout.write("".join(prefix + line for line in lines))
    sys.stdout.flush()
    if outcome == "hang":
        while True:  # a hung collective: only a signal ends it
            time.sleep(3600)
    if outcome == "fail":
        raise Rejected(OMPI_FAILURE, 1)


def _run_dir() -> str | None:
    if os.environ.get("LAB_NCCL_RUN_DIR"):
        return os.environ["LAB_NCCL_RUN_DIR"]
    if os.environ.get("LAB_NCCL_CONFIG"):
        with open(os.environ["LAB_NCCL_CONFIG"], encoding="utf-8") as handle:
            return json.load(handle).get("run_dir")
    return None


def _model() -> tuple[perfmodel.Fabric, str] | None:
    """The lab run's performance model and run dir, or None (no perf.json or no faults: replay as always)."""
    run_dir = _run_dir()
    if not run_dir:
        return None
    try:
        fabric = perfmodel.Fabric.from_run_dir(run_dir)
    except (perfmodel.PerfModelError, OSError, ValueError, KeyError) as exc:
        raise Rejected("lab shim: the performance model of %s: %s\n" % (run_dir, exc), 2) from None
    return (fabric, run_dir) if fabric is not None else None


def _model_text(model: tuple[perfmodel.Fabric, str], program: str, args: list[str], hosts: list[str],
                procs: dict[str, int], env: dict[str, str]) -> tuple[int, str]:
    """(launch number, nccl-tests output) of this job from the model."""
    fabric, run_dir = model
    collective = _PERF.fullmatch(os.path.basename(program)).group(1)
    try:
        launch = perfmodel.next_launch(run_dir)
        return launch, perfmodel.nccl_tests_text(fabric, collective, hosts, procs, perfmodel.parse_test_args(args),
                                                 env, launch)
    except perfmodel.PerfModelError as exc:
        raise Rejected("lab shim: performance model: %s\n" % exc, 2) from None


def _traffic(program: str, hosts: list[str], procs: dict[str, int], args: list[str], env: dict[str, str]) -> None:
    """Move the lab's NIC and switch counters with this job's traffic (tests/lab/traffic.py), replay or model."""
    try:
        traffic.record_launch(_run_dir(), _PERF.fullmatch(os.path.basename(program)).group(1), hosts, procs, args, env)
    except (perfmodel.PerfModelError, OSError, ValueError, KeyError, RuntimeError) as exc:
        raise Rejected("lab shim: traffic model: %s\n" % exc, 2) from None


def _fill_slots(hosts: dict[str, int], np_: int) -> dict[str, int]:
    """Open MPI's default mapping (--map-by slot): each host's slots in hostfile order, until np ranks."""
    out, left = {}, np_
    for host, slots in hosts.items():
        take = min(slots, left)
        if take:
            out[host] = take
        left -= take
    return out


def _nodelist(text: str) -> list[str]:
    """Slurm hostlist: comma names, and prefix[1-3,5] ranges (scontrol show hostnames)."""
    out = []
    for m in re.finditer(r"([^,\[]+)(?:\[([^\]]*)\])?", text):
        prefix, ranges = m.group(1), m.group(2)
        if ranges is None:
            out.append(prefix)
            continue
        for part in ranges.split(","):
            lo, _sep, hi = part.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                out.append("%s%0*d" % (prefix, len(lo), n))
    return out


def _replay_text() -> tuple[str, str]:
    try:
        paths = replay.resolve(_choice(), "LAB_NCCL_REPLAY")
    except replay.ReplayError as exc:
        raise Rejected("lab shim: %s\n" % exc, 2) from None
    with open(paths[0], encoding="utf-8") as handle:
        return paths[0], handle.read()


def mpirun(argv: list[str]) -> int:
    try:
        opts = _parse_mpirun(argv)
        gpus = _nccl_tests_args(opts["program"], opts["args"])
        slots = sum(opts["hosts"].values()) if opts["hosts"] else 1
        np_ = opts["np"] if opts["np"] is not None else slots
        if np_ > slots:
            raise Rejected(_box("There are not enough slots available in the system to satisfy the %d" % np_,
                                "slots that were requested by the application:", "", "  %s" % opts["program"], "",
                                "Either request fewer slots for your application, or make more slots",
                                "available for use."))
        model = _model()
        entry = {"tool": "mpirun", "argv": argv, "np": np_, "gpus_per_process": gpus, "hosts": opts["hosts"],
                 "env": _exported(opts["x"]), "mca": opts["mca"], "bind_to": opts["bind_to"]}
        procs = _fill_slots(opts["hosts"] or {os.uname().nodename: np_}, np_)
        _traffic(opts["program"], list(procs), procs, opts["args"], entry["env"])
        if model:
            launch, text = _model_text(model, opts["program"], opts["args"], list(procs), procs, entry["env"])
            entry.update(model=True, launch=launch)
        else:
            path, text = _replay_text()
            entry["replay"] = path
        _record(entry)
        # --tag-output: rank 0 prints the table (reference section 2)
        _emit(text, "[1,0]<stdout>:" if opts["tag_output"] else "")
    except Rejected as exc:
        sys.stderr.write(exc.text)
        return exc.rc
    return 0


def _parse_srun(argv: list[str]) -> dict:
    shorts = {short: long for long, (short, _a) in SRUN_OPTIONS.items() if short}
    opts: dict = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg.startswith("--"):
            name, sep, value = arg[2:].partition("=")
            if name not in SRUN_OPTIONS:
                raise Rejected("srun: unrecognized option '%s'\nTry \"srun --help\" for more information\n" % arg)
            takes = SRUN_OPTIONS[name][1]
        else:
            name = shorts.get(arg[1:2], "")
            if not name:
                raise Rejected("srun: invalid option -- '%s'\nTry \"srun --help\" for more information\n" % arg[1:2])
            takes, sep, value = SRUN_OPTIONS[name][1], "", arg[2:]
            if value:
                sep = "="
        if takes and not sep:
            if i + 1 >= len(argv):
                raise Rejected("srun: option '--%s' requires an argument\nTry \"srun --help\" for more information\n" % name)
            i += 1
            value = argv[i]
        elif not takes and sep:
            raise Rejected("srun: option '--%s' doesn't allow an argument\nTry \"srun --help\" for more information\n" % name)
        opts[name] = value if takes else True
        i += 1
    if i >= len(argv):
        raise Rejected("srun: fatal: No command given to execute.\n")
    opts["program"], opts["args"] = argv[i], argv[i + 1:]
    return opts


def _srun_int(opts: dict, name: str) -> int | None:
    if name not in opts:
        return None
    if not str(opts[name]).isdigit():
        raise Rejected("srun: error: Invalid numeric value \"%s\" for --%s.\n" % (opts[name], name))
    return int(opts[name])


def srun(argv: list[str]) -> int:
    try:
        opts = _parse_srun(argv)
        mpi = opts.get("mpi", "none")
        if mpi not in MPI_PLUGINS:
            raise Rejected("srun: error: Couldn't find the specified plugin name for mpi/%s looking at all files\n"
                           "srun: error: cannot find mpi plugin for mpi/%s\nsrun: error: MPI: Cannot create context for mpi/%s\n"
                           % (mpi, mpi, mpi))
        nodes = _srun_int(opts, "nodes") or 1
        per_node = _srun_int(opts, "ntasks-per-node") or 1
        _srun_int(opts, "gpus-per-node")
        nodelist = _nodelist(str(opts.get("nodelist", "")))
        if nodelist and len(nodelist) != nodes:
            raise Rejected("srun: error: Unable to allocate resources: Requested node configuration is not available\n")
        try:
            _nccl_tests_args(opts["program"], opts["args"])
        except Rejected as exc:
            if exc.text.startswith(OMPI_BAR):  # not an nccl-tests binary: srun's own words
                raise Rejected("slurmstepd: error: execve(): %s: No such file or directory\n"
                               "srun: error: task 0 launch failed: Error in execve\n" % opts["program"], 2) from None
            raise
        if mpi != "pmix" and not mpi.startswith("pmix_"):
            # Without PMIx every rank would be its own single-process job (reference section 1); the shim does not
            # pretend to replay that - it says so instead of printing a multi-node table.
            raise Rejected("lab shim: srun --mpi=%s would start independent single-rank copies; the lab only replays "
                           "--mpi=pmix runs\n" % mpi, 2)
        model = _model()
        if nodelist:
            env = {k: v for k, v in os.environ.items() if k.startswith("NCCL_") or k == "CUDA_VISIBLE_DEVICES"}
            _traffic(opts["program"], nodelist, {h: per_node for h in nodelist}, opts["args"], env)
        entry = {"tool": "srun", "argv": argv, "ranks": nodes * per_node, "nodes": nodes, "nodelist": nodelist,
                 "env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}
        if model:
            if not nodelist:
                raise Rejected("lab shim: the performance model needs --nodelist (which lab hosts run the job)\n", 2)
            env = dict(entry["env"])
            if "CUDA_VISIBLE_DEVICES" in os.environ:
                env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
            launch, text = _model_text(model, opts["program"], opts["args"], nodelist, {h: per_node for h in nodelist}, env)
            entry.update(model=True, launch=launch)
        else:
            path, text = _replay_text()
            entry["replay"] = path
        _record(entry)
        _emit(text, "0: " if opts.get("label") else "")
    except Rejected as exc:
        sys.stderr.write(exc.text)
        return exc.rc
    return 0


def main(argv: list[str]) -> int:
    """argv: the tool (mpirun or srun), then its arguments (bin/mpirun and bin/srun call it so)."""
    tool = os.path.basename(argv[0])
    if tool == "mpirun":
        return mpirun(argv[1:])
    if tool == "srun":
        return srun(argv[1:])
    sys.stderr.write("lab shim: called as %r; link it as mpirun or srun\n" % tool)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
