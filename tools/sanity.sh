#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# ansible-test needs the collection at a real .../ansible_collections/lossless/fabric
# path (a symlink is not enough), so it runs in a copy of the tracked and
# untracked-but-not-ignored files (shared/reference/toolchain.md section 2).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# Outside the repo: inside it, ansible-test would see the git checkout and its ignores.
TOP=$(mktemp -d "${TMPDIR:-/tmp}/lossless-fabric-sanity.XXXXXX")
trap 'rm -rf "$TOP"' EXIT
DEST=$TOP/ansible_collections/lossless/fabric
mkdir -p "$DEST"
# Files deleted in the work tree but still in the index are left out.
cd "$ROOT"
git ls-files -z --cached --others --exclude-standard \
    | "$ROOT/.venv/bin/python" -c 'import os,sys; [sys.stdout.buffer.write(p + b"\0") for p in sys.stdin.buffer.read().split(b"\0") if p and os.path.lexists(p)]' \
    | tar --null -T - -cf - | tar -xf - -C "$DEST"
cd "$DEST"
# A git checkout makes ansible-test lint only tracked files; the copy is not one.
export HOME=$ROOT/.deps/ansible-test-home
export ANSIBLE_COLLECTIONS_PATH=$ROOT/.deps/collections
"$ROOT/.venv/bin/ansible-test" sanity --local --python 3.11 --color no "$@"
