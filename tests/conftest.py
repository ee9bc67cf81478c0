"""Test configuration shared by tests/core and tests/gui."""

import os

# Qt needs no display in tests: the offscreen platform renders pyqtgraph widgets too (FIELD-NOTES).
# Set before anything imports Qt; a value already in the environment (xcb under Xvfb) wins.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
