# SPDX-License-Identifier: GPL-3.0-or-later
"""Lab NCCL replay: recorded real nccl-tests logs, the mpirun/srun shims and their lab plug-in (README.md)."""
