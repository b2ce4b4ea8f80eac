# SPDX-License-Identifier: GPL-3.0-or-later
"""Rewrite the key tables of docs/intent.md from the intent schema (plugins/module_utils/_intent/_schema.py).

    .venv/bin/python tools/intent_docs.py          rewrite docs/intent.md in place
    .venv/bin/python tools/intent_docs.py --check  exit 1 (and say which tables) when docs/intent.md is not what the schema gives

Each table sits between ``<!-- intent-schema:NAME begin ... -->`` and ``<!-- intent-schema:NAME end -->``;
text outside the markers is left alone. The unit test test_intent_schema.py runs the --check comparison.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FARM = os.path.join(ROOT, ".deps", "self")
_LINK = os.path.join(_FARM, "ansible_collections", "lossless", "fabric")
if not os.path.islink(_LINK):  # the same symlink farm conftest.py and `make setup` keep
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(ROOT, _LINK)
sys.path.insert(0, _FARM)

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema  # noqa: E402

DOC = os.path.join(ROOT, "docs", "intent.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when docs/intent.md differs")
    args = parser.parse_args(argv)
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    try:
        new = _schema.rewrite_docs(text)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.check:
        stale = [name for name in _schema.TABLES if _schema.render_table(name) not in text]
        if new != text:
            print("docs/intent.md differs from the schema in table(s) %s: run tools/intent_docs.py" % ", ".join(stale or ["(markers)"]), file=sys.stderr)
            return 1
        return 0
    if new != text:
        with open(DOC, "w", encoding="utf-8") as handle:
            handle.write(new)
        print("docs/intent.md: tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
