# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS: the driver (configure replace with commit-timeout), its show readers and vendor table."""
