# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC: the driver (checkpoint, apply-patch, rollback timer) and its vendor table."""
