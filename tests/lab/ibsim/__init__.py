# SPDX-License-Identifier: GPL-3.0-or-later
"""Simulated InfiniBand fabric for the lab and tests: ibsim + OpenSM (see README.md)."""
