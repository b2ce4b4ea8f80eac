# SPDX-License-Identifier: GPL-3.0-or-later
"""A strict helm CLI shim for the lab (README.md)."""
