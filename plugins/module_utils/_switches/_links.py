# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""switch_links: what one switch sees on its ports - LLDP neighbours, oper state, speed.

    connect -> the driver's link_commands (read-only, as few round trips as it can)
            -> the driver's parse_links: the "ends" shape every cabling reader returns
               (/work docs: CABLING contract; docs/cabling in the collection)

    ends = {port: {"oper": "up"|"down"|None, "speed": "400G"|None, "width": None,
                   "neighbors": [{"system", "port", "port_id_subtype", "port_descr", "chassis_id"}]}}

Readers report what the device says and never compare (cabling_verify does);
output a parser does not recognise fails the task naming device, platform,
command and the form expected. Nothing here touches Ansible.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _drivers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms._connection import CONNECTION_SPEC, ConnectError, connect
from ansible_collections.lossless.fabric.plugins.module_utils._switches import _counters

ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "ports": {"type": "list", "elements": "str"},
    "platform": {"type": "str", "choices": sorted(_drivers.DRIVERS)},
    "fabric": {"type": "list", "elements": "str"},
    "workers": {"type": "int", "default": 32},
}
ARGUMENT_SPEC.update(CONNECTION_SPEC)


def _fail(result: dict, msg: str, **extra: Any) -> dict:
    result.update(failed=True, msg=msg, **extra)
    return result


def select(ends: dict[str, dict], ports: list[str] | None) -> dict[str, dict]:
    """The asked ports (all the device reported when None). An asked port the device said
    nothing about is kept with oper/speed null and no neighbours: 'the device did not say'."""
    if ports is None:
        return dict(sorted(ends.items()))
    return {port: ends.get(port) or _base.end() for port in ports}


def run(args: dict, device: str) -> dict:
    """Read one switch's links; the task result (never raises for device trouble)."""
    result: dict[str, Any] = {"changed": False, "device": device}
    platform = args.get("platform")
    if not platform:
        return _fail(result, "%s: platform: not given and not found in lossless_fabric_device" % device)
    result["platform"] = platform
    try:
        driver_cls = _drivers.driver_class(platform)
    except ValueError as exc:
        return _fail(result, "%s: %s" % (device, exc))
    ports = args.get("ports")
    ports = list(dict.fromkeys(str(p) for p in ports)) if ports else None
    try:
        result["commands"] = driver_cls.link_commands(ports)
    except ValueError as exc:
        return _fail(result, "%s: %s" % (device, exc))
    if not args.get("host"):
        return _fail(result, "%s: host: not given and the inventory has no ansible_host" % device)
    try:
        conn = connect(driver_cls, device, args)
    except ConnectError as exc:
        return _fail(result, str(exc))
    driver = driver_cls(conn, device)
    outputs: dict[str, str] = {}
    try:
        driver.prepare()
        outputs = driver.read_counters(result["commands"])
    except _base.DeviceError as exc:
        return _fail(result, str(exc), device_said=exc.device_said)
    except (OSError, EOFError) as exc:
        return _fail(result, "%s: connection lost: %s" % (device, exc))
    finally:
        try:
            conn.disconnect()
        except (OSError, EOFError):
            pass  # the session is already gone; nothing left to close
    result["raw"] = outputs
    try:
        ends = driver_cls.parse_links(outputs)
    except _base.LinkFormError as exc:
        return _fail(result, "%s: %s" % (device, exc), device_said=outputs.get(exc.command))
    result["ends"] = select(ends, ports)
    unknown = [port for port in ports or [] if port not in ends]
    if unknown:
        result["warnings"] = ["%s: the switch reported nothing about port(s) %s (not on the device?)" % (device, ", ".join(unknown))]
    return result


def run_fabric(per_switch: dict[str, dict], workers: int) -> dict:
    """Many switches from one thread pool (switch_counters' fabric mode, this reader per switch)."""
    return _counters.run_fabric(per_switch, workers, run_one=run)
