# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC (community, sonic-net) vendor data: pure tables, each with its source.

Sources (every path is in a sonic-net repository; docs/vendor-sonic.md lists them all):
- YANG models, sonic-net/sonic-buildimage src/sonic-yang-models/yang-models/:
  sonic-port.yang (PORT mtu ``range 68..9216`` on 202505, ``1..9216`` in older releases), sonic-wred-profile.yang (WRED_PROFILE fields, ``ecn``
  enumeration, thresholds ``units bytes``, ``green_drop_probability`` 0..100), sonic-scheduler.yang (SCHEDULER
  ``type`` DWRR|WRR|STRICT, ``weight`` 1..100, both ``ext:create-only``), sonic-pfcwd.yang (PFC_WD
  ``detection_time`` 100..5000, ``restoration_time`` 100..60000, ``action`` drop|forward|alert,
  GLOBAL ``POLL_INTERVAL`` 100..1000), sonic-port-qos-map.yang (PORT_QOS_MAP fields, ``pfc_enable`` pattern
  ``([0-7](,[0-7])*)?``), sonic-queue.yang (QUEUE key ``ifname qindex``, ``scheduler``, ``wred_profile``),
  sonic-buffer-pg.yang (BUFFER_PG key ``port pg_num``, pg_num ``[0-7]((-)[0-7])?``, profile or ``NULL``).
- sonic-net/sonic-buildimage files/build_templates/buffers_config.j2 (``CABLE_LENGTH|AZURE``, the
  ``ingress_lossless_pool`` name) and qos_config.j2 (the ``AZURE`` maps and the lossless WRED profile).
- sonic-net/SONiC doc/Configuration.md (CONFIG_DB table examples) and the dynamic buffer calculation HLD
  (doc/qos/dynamically-headroom-calculation.md: a lossless BUFFER_PG whose profile is ``NULL`` has its
  headroom computed by the switch).
"""

from __future__ import annotations

# sonic-port.yang: leaf mtu { type uint16 { range 68..9216; } } on 202505 (older releases: 1..9216); 9216 either way.
MAX_MTU = 9216

# Object names: sonic-wred-profile.yang and sonic-dscp-tc-map.yang restrict names to
# '[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})' (1-32 characters); every name we make keeps to that.
NAME_PATTERN = r"[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}"
MAP_NAME = "LF_ROCE"

# WRED_PROFILE 'ecn' enumeration (sonic-wred-profile.yang): ecn_all marks every colour.
ECN_MODE = "ecn_all"
ECN_MODES = ("ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red", "ecn_yellow_red", "ecn_all")
ECN_GREEN_MODES = ("ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all")

# SCHEDULER type enumeration (sonic-scheduler.yang); weight range 1..100.
SCHEDULER_TYPES = ("DWRR", "WRR", "STRICT")
WEIGHT_RANGE = (1, 100)

# PFC_WD ranges and actions (sonic-pfcwd.yang).
DETECTION_TIME_MS = (100, 5000)
RESTORATION_TIME_MS = (100, 60000)
POLL_INTERVAL_MS = (100, 1000)
WATCHDOG_ACTIONS = ("drop", "forward", "alert")

# CABLE_LENGTH is one entry, named AZURE by buffers_config.j2 (sonic-buildimage files/build_templates/buffers_config.j2);
# its fields are port -> '<n>m' (sonic-cable-length.yang: length pattern '[0-9]+m').
CABLE_LENGTH_KEY = "AZURE"

# The lossless ingress pool buffers_config.j2 and the platforms' buffers_defaults_*.j2 define.
LOSSLESS_POOL = "ingress_lossless_pool"

# BUFFER_PROFILE dynamic_th of the lossless profiles we write (the static model). unverified: the value the
# platforms' pg_profile_lookup.ini files give differs per ASIC; "0" is what the traditional buffer manager uses
# when the lookup table gives none (unverified, docs/vendor-sonic.md).
LOSSLESS_DYNAMIC_TH = "0"

# DEVICE_METADATA|localhost buffer_model values (sonic-device_metadata.yang, the dynamic buffer HLD).
BUFFER_MODELS = ("traditional", "dynamic")
# The default is 'dynamic': the switch's own headroom calculation (dynamic buffer HLD) needs no value we could
# not verify, where the static profile needs a dynamic_th (LOSSLESS_DYNAMIC_TH, unverified).
DEFAULT_BUFFER_MODEL = "dynamic"

# pfcwd show stats STATUS -> the _snapshot watchdog_status words (pfcwd/main.py prints 'operational' or 'stormed').
WATCHDOG_STATUS = {"operational": "OK", "stormed": "DEADLOCK"}
