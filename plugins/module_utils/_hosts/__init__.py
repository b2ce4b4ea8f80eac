# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""GPU hosts: NIC QoS settings and counters, host links, perftest."""
