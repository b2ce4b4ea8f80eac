# SPDX-License-Identifier: GPL-3.0-or-later
"""``python -m tests.lab.switchsim --config FILE [--state-file FILE]``"""
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from switchsim.server import main
else:
    from .server import main

sys.exit(main())
