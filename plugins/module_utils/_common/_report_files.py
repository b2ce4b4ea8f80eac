# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Report files on the controller: the report-name check and an atomic write of only what changed (nccl_report, change_report, cabling_verify)."""
from __future__ import annotations

import hashlib
import os
import re
import tempfile

# Report and file names: one path component, nothing a shell or Markdown link could misread.
NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$')


def _describe(name, data):
    if name.endswith('.png'):
        return '<PNG, %d bytes, sha256 %s>\n' % (len(data), hashlib.sha256(data).hexdigest()[:16])
    return data.decode('utf-8', errors='replace')


def sync_files(directory: str, files: dict, check_mode: bool = False, mode: int = 0o644) -> dict:
    """Write each file whose content differs (atomically: temp file + rename); create ``directory`` when missing.

    Returns {changed, written: [names], unchanged: [names], created_dir, diff: [{before_header, after_header,
    before, after}]} - the diff says what a check-mode run would write. Raises OSError."""
    written, unchanged, diffs = [], [], []
    created_dir = not os.path.isdir(directory)
    if created_dir and not check_mode:
        os.makedirs(directory, exist_ok=True)
    for fname in sorted(files):
        data = files[fname]
        path = os.path.join(directory, fname)
        before = None
        if os.path.exists(path):
            with open(path, 'rb') as handle:
                before = handle.read()
        if before == data:
            unchanged.append(fname)
            continue
        written.append(fname)
        diffs.append({'before_header': path if before is not None else '%s (absent)' % path, 'after_header': path,
                      'before': _describe(fname, before) if before is not None else '', 'after': _describe(fname, data)})
        if check_mode:
            continue
        fd, tmp = tempfile.mkstemp(prefix='.%s.' % fname, dir=directory)
        try:
            with os.fdopen(fd, 'wb') as handle:
                handle.write(data)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    return {'changed': bool(written) or created_dir, 'written': written, 'unchanged': unchanged, 'created_dir': created_dir,
            'diff': diffs}
