#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every Molecule scenario under extensions/molecule (ansible-creator layout).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/extensions"
export PATH=$ROOT/.venv/bin:$PATH
export ANSIBLE_COLLECTIONS_PATH=$ROOT/.deps/self:$ROOT/.deps/collections
export MOLECULE_NO_LOG=false
for scenario in molecule/*/molecule.yml; do
    name=$(basename "$(dirname "$scenario")")
    echo "molecule: scenario $name"
    # Molecule remembers "prepared" in its state between runs; our prepare
    # starts the simulators, so every run starts from a reset state.
    "$ROOT/.venv/bin/molecule" reset -s "$name" >/dev/null
    "$ROOT/.venv/bin/molecule" test -s "$name"
done
