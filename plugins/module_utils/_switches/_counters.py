# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""switch_counters: one read-only snapshot of a switch's lossless counters.

    connect -> the driver's show commands, in as few round trips as it can
            -> the driver parses them into the device-agnostic snapshot shape
            -> keep the asked ports and priorities

The snapshot shape, its counter names, select(), snapshot() and delta() (counters_delta)
are _common/_snapshot's: NIC, InfiniBand and change-window code use them without this
switch reader. Nothing here touches Ansible; the parsing is in the drivers
(counter_commands, parse_counters).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _drivers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms._connection import CONNECTION_SPEC, ConnectError, connect

ALL_PRIORITIES = list(range(8))

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "ports": {"type": "list", "elements": "str"},
    "platform": {"type": "str", "choices": sorted(_drivers.DRIVERS)},
    "priorities": {"type": "list", "elements": "int", "default": ALL_PRIORITIES},
    "fabric": {"type": "list", "elements": "str"},
    "workers": {"type": "int", "default": 32},
}
ARGUMENT_SPEC.update(CONNECTION_SPEC)


# ---------------------------------------------------------------------------
# the task
# ---------------------------------------------------------------------------


def _fail(result: dict, msg: str, **extra: Any) -> dict:
    result.update(failed=True, msg=msg, **extra)
    return result


def run_fabric(per_switch: dict[str, dict], workers: int, run_one: Any = None) -> dict:
    """run() (or ``run_one``, another read-only reader of the same args: switch_links)
    for many switches from one thread pool: one task, a result per
    switch under 'switches' (the same shape a per-host task registers), and a
    failure that names every switch that failed. The snapshots of the switches
    that answered are returned even when others failed."""
    # Imported here: only the fabric-wide mode needs threads.
    from concurrent.futures import ThreadPoolExecutor  # pylint: disable=import-outside-toplevel

    # Import each driver's netmiko class once, before the threads: importing the
    # same module from several threads at once can hand one a half-initialised module.
    for platform in sorted({args.get("platform") for args in per_switch.values()} & set(_drivers.DRIVERS)):
        _drivers.driver_class(platform).connection_class()
    import netmiko.exceptions  # noqa: F401  # pylint: disable=import-outside-toplevel,unused-import

    def one(item):
        host, args = item
        try:
            return host, (run_one or run)(args, device=host)
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # Something run() does not expect (a library error it does not name): this switch fails, naming
            # the device and the error; the other switches' snapshots are kept rather than lost with the task.
            return host, {"changed": False, "failed": True, "msg": "%s: unexpected %s: %s" % (host, type(exc).__name__, exc)}

    if workers < 1:
        return {"changed": False, "failed": True, "msg": "workers: %d is not a positive number of threads" % workers, "switches": {}}
    with ThreadPoolExecutor(max_workers=min(workers, len(per_switch) or 1)) as pool:
        switches = dict(pool.map(one, sorted(per_switch.items())))
    result: dict[str, Any] = {"changed": False, "switches": switches}
    warnings = [w for host in sorted(switches) for w in switches[host].pop("warnings", None) or []]
    if warnings:
        result["warnings"] = warnings
    failed = [host for host in sorted(switches) if switches[host].get("failed")]
    if failed:
        result.update(failed=True, msg="%d of %d switches failed:\n%s" % (len(failed), len(switches), "\n".join(switches[h]["msg"] for h in failed)))
    return result


def run(args: dict, device: str) -> dict:
    """Read one switch's counters; return the task result (never raises for device trouble)."""
    result: dict[str, Any] = {"changed": False}
    platform = args.get("platform")
    if not platform:
        return _fail(result, "%s: platform: not given and not found in lossless_fabric_device" % device)
    try:
        driver_cls = _drivers.driver_class(platform)
    except ValueError as exc:
        return _fail(result, "%s: %s" % (device, exc))
    priorities = args.get("priorities")
    priorities = ALL_PRIORITIES if priorities is None else priorities
    bad = [p for p in priorities if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= 7]
    if bad:
        return _fail(result, "%s: priorities: %s not in 0-7" % (device, ", ".join(str(p) for p in bad)))
    ports = args.get("ports")
    ports = list(dict.fromkeys(ports)) if ports else None
    try:
        commands = driver_cls.counter_commands(ports)
    except ValueError as exc:
        return _fail(result, "%s: %s" % (device, exc))
    result["commands"] = commands
    if not args.get("host"):
        return _fail(result, "%s: host: not given and the inventory has no ansible_host" % device)

    try:
        conn = connect(driver_cls, device, args)
    except ConnectError as exc:
        return _fail(result, str(exc))
    driver = driver_cls(conn, device)
    try:
        driver.prepare()
        taken_at = _snapshot.now_iso()
        outputs = driver.read_counters(commands)
    except _base.DeviceError as exc:
        return _fail(result, str(exc), device_said=exc.device_said)
    except (OSError, EOFError) as exc:
        return _fail(result, "%s: connection lost: %s" % (device, exc))
    finally:
        try:
            conn.disconnect()
        except (OSError, EOFError):
            pass  # the session is already gone; nothing left to close

    parsed, errors = driver_cls.parse_counters(outputs)
    result["counters"] = _snapshot.snapshot(device, platform, _snapshot.select(parsed, ports, sorted(set(priorities))), outputs, taken_at)
    result["command_errors"] = errors
    if errors:
        result["warnings"] = [
            "%s: %s: the device answered %s; its counters are missing" % (device, command, (said.strip().splitlines() or ["nothing"])[0])
            for command, said in errors.items()
        ]
    missing = [port for port in ports or [] if port not in parsed]
    if missing:
        msg = "%s: no counters for port(s) %s (not on the device, or every command about it failed)" % (device, ", ".join(missing))
        return _fail(result, msg, missing_ports=missing)
    if not parsed:
        return _fail(result, "%s: the device reported no counters (see command_errors)" % device)
    return result
