# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The fabric intent: schema, validation and every derived value.

One description of the fabric (inventory variable ``lossless_fabric``) plus
one per device (``lossless_fabric_device``) go in; a plan comes out that
names every priority, DSCP, threshold, OpenSM file and NCCL variable each
device or benchmark gets.  Nothing downstream re-derives these values, so a
switch, a NIC and an NCCL job cannot disagree (see docs/intent.md).

Pure Python standard library: the action plugin, filters and unit tests all
import it without Ansible.  This package re-exports nothing: import the module
that defines a name (``from ...module_utils._intent import _plan``;
``_plan.build_plan(intent, devices)``).  Each module imports only those above it:

- ``_contract``: the plan's shape as TypedDicts (``SwitchPlan``, ``SwitchQos``, ``RoceHostPlan``,
  ``NicQos``, ``IbHostPlan``, ``SubnetManagerPlan`` and their parts; ``keys``, ``required``); it
  imports nothing of the collection, so host code (``_hosts``) reads it without the rest of the intent;
- ``_tables``: speeds, pause quanta, vocabularies (``COLLECTIVES``, ``TRANSPORTS``, ``PATTERNS``,
  ``K8S_*``), the platform registry (``PLATFORMS``, read through ``platforms()``), name patterns,
  ``BAD`` (a value that failed validation), ``UINT32_MAX`` and ``IntentError``;
- ``_schema``: every leaf key as data (``LEAVES``, ``BY_PATH``, ``value``): validation of the scalar
  keys and the tables of docs/intent.md (tools/intent_docs.py) both come from it;
- ``_derive``: ``parse_speed``, ``roce_tos``, ``ecn_defaults``, ``headroom``;
- ``_checks``: the error collector ``Ctx`` and its type/range/text checks, ``key_repr``, ``type_name``;
- ``_roce``, ``_infiniband``, ``_targets`` (``validate_targets``, ``fabric_targets``
  for the NCCL gate), ``_kubernetes`` (``K8S_DEFAULTS``): the sections of ``lossless_fabric``;
- ``_devices``: ``lossless_fabric_device`` (switches, hosts, subnet managers): ``canonical_port``,
  ``check_port_names``, ``check_speed``;
- ``_topology``: the cabling (``check``, ``plan``, ``generate``, ``Cabling``);
- ``_plan``: ``validate``, ``build_plan`` and every per-device plan;
- ``_scope``: one intent for the whole fabric (``check``: every host in scope sees the same one).

The intent reads only packages below it: ``_nccl`` (``_vocab``), ``_ib`` (``_opensm``: OpenSM's
vocabulary and files), ``_platforms`` (the registry's records and vendor tables) and ``_common``
(``_text.unsafe_reason``); none of them imports the intent.  Above it, ``_window``, ``_localize``,
``_switches``, ``_cabling`` and ``_hosts`` may import it (``_hosts`` only ``_contract``).
"""
