# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""What several subsystems share: counter snapshots and deltas, text safety, Markdown and file writing, the host rollback timer."""
