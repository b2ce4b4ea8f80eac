# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos: the driver (private candidate, commit confirmed) and its vendor table."""
