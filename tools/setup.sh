#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `make setup`: everything lossless.fabric needs to run the lab and the tests,
# installed from the package registries only (Galaxy is not reachable here).
# Idempotent: each step is skipped when its inputs have not changed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV=$ROOT/.venv
DEPS=$ROOT/.deps
STAMPS=$DEPS/stamps
# carries kubernetes.core 6.2.0, netcommon 8.2.0, utils 6.0.0, and the vendors' collections the lab is
# checked against (tests/integration/test_peer_*.py): arista.eos 12.0.0, cisco.nxos 11.1.0, junipernetworks.junos 11.0.0
ANSIBLE_WHEEL_VERSION=12.3.0
COLLECTIONS="kubernetes/core ansible/netcommon ansible/utils arista/eos cisco/nxos junipernetworks/junos"
DEBIAN_PACKAGES="opensm ibsim-utils infiniband-diags shellcheck"

mkdir -p "$STAMPS"
say() { printf 'setup: %s\n' "$*"; }

# A step runs again only when the hash of what it depends on changed.
fresh() {
    local name=$1; shift
    local want
    want=$(cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1)
    [ -f "$STAMPS/$name" ] && [ "$(cat "$STAMPS/$name")" = "$want" ]
}
stamp() {
    local name=$1; shift
    cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1 > "$STAMPS/$name"
}

# 1. Debian packages for the lab and the tests.
missing=""
for pkg in $DEBIAN_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        say "installing Debian packages:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086  # word splitting wanted: one argument per package
        apt-get install -y -qq $missing >/dev/null
    else
        say "WARNING: not root; install these Debian packages for the InfiniBand lab and shellcheck:"
        say "  sudo apt-get install -y$missing"
    fi
fi

# 2. The virtualenv with pinned Python packages.
if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
# requirements.txt is the collection's runtime needs (ranges, what an execution
# environment installs); requirements-dev.txt adds ansible-core and the lab and
# test toolchain; constraints.txt pins every package of both.
if ! fresh venv requirements.txt requirements-dev.txt constraints.txt; then
    say "installing Python packages (requirements-dev.txt, constraints.txt)"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
    stamp venv requirements.txt requirements-dev.txt constraints.txt
fi

# 3. Collections, offline, from the `ansible` wheel on PyPI.
echo "$ANSIBLE_WHEEL_VERSION $COLLECTIONS" > "$DEPS/collections.want"
if ! fresh collections "$DEPS/collections.want" || [ ! -d "$DEPS/collections/ansible_collections/kubernetes/core" ]; then
    say "installing collections from ansible==$ANSIBLE_WHEEL_VERSION ($COLLECTIONS)"
    mkdir -p "$DEPS/wheels"
    wheel=$DEPS/wheels/ansible-$ANSIBLE_WHEEL_VERSION-py3-none-any.whl
    if [ ! -f "$wheel" ]; then
        "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
            "ansible==$ANSIBLE_WHEEL_VERSION" -d "$DEPS/wheels"
    fi
    rm -rf "$DEPS/unpacked"
    mkdir -p "$DEPS/unpacked"
    reqs="$DEPS/requirements-offline.yml"
    echo "collections:" > "$reqs"
    for c in $COLLECTIONS; do
        "$VENV/bin/python" - "$wheel" "$DEPS/unpacked" "ansible_collections/$c/" <<'PY'
import sys
import zipfile
wheel, dest, prefix = sys.argv[1:]
with zipfile.ZipFile(wheel) as zf:
    zf.extractall(dest, [n for n in zf.namelist() if n.startswith(prefix)])
PY
        echo "  - {name: $DEPS/unpacked/ansible_collections/$c, type: dir}" >> "$reqs"
    done
    rm -rf "$DEPS/collections"
    "$VENV/bin/ansible-galaxy" collection install --offline --force -r "$reqs" -p "$DEPS/collections" >/dev/null
    rm -rf "$DEPS/unpacked"
    stamp collections "$DEPS/collections.want"
fi

# 4. This collection, found by ansible.cfg and pytest through a symlink farm.
mkdir -p "$DEPS/self/ansible_collections/lossless"
ln -sfn "$ROOT" "$DEPS/self/ansible_collections/lossless/fabric"

# 5. ansible-test sanity bootstraps pip in each of its venvs with a script it
# downloads from a host we cannot reach; a stand-in that runs pip from its
# PyPI wheel works offline (shared/reference/toolchain.md section 2).
ATHOME=$DEPS/ansible-test-home
cache=$ATHOME/.ansible/test/cache
if [ ! -f "$cache/get_pip_24_2.py" ]; then
    mkdir -p "$cache"
    "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps pip==24.2 -d "$cache"
    cat > "$cache/get_pip_24_2.py" <<'PY'
import glob, os, runpy, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, glob.glob(os.path.join(here, 'pip-24.2-*.whl'))[0])
args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
sys.argv = ['pip', 'install', '--upgrade', '--force-reinstall'] + args
runpy.run_module('pip', run_name='__main__', alter_sys=True)
PY
fi

say "ready: $("$VENV/bin/ansible" --version | sed -n 1p)"
