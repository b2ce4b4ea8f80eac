# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NCCL benchmarks: vocabulary, output parser, gate, statistics, launchers and runners, report."""
