# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NVIDIA Cumulus Linux NVUE: the driver (revisions, apply --confirm) and its vendor table."""
