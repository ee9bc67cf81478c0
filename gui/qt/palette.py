"""The window's colours, named by what they say, so one meaning has one colour in every view.

Text colours are "#rrggbb" strings for style sheets and rich text; plot colours are (r, g, b) tuples for
pyqtgraph pens and QColor.
"""

from __future__ import annotations

# ---- text: states and messages ----------------------------------------------------------------------------
GOOD = "#2e7d32"  # live, running, a message that something worked
DONE = "#1565c0"  # completed, finished
WARNING = "#ef6c00"  # paused, stopping, interrupted
ERROR = "#c62828"  # diverged, out of memory, failed, a store that cannot be read
ERROR_BACKGROUND = "#fdecea"  # behind an error's text (the out-of-memory banner)
ALERT = "#b00020"  # a result not to trust (a comparison whose runs disagree)
NEUTRAL = "#444444"  # stopped, a state with nothing to say, secondary labels
QUIET = "#555555"  # descriptions under a control

# ---- plots: matplotlib's tab10 colours (as "tab:blue" ...), so a line reads as it does in other tools ----
TAB_BLUE = (31, 119, 180)
TAB_ORANGE = (255, 127, 14)
TAB_GREEN = (44, 160, 44)
TAB_RED = (214, 39, 40)
TAB_PURPLE = (148, 103, 189)
TAB_BROWN = (140, 86, 75)
TAB_PINK = (227, 119, 194)
TAB_OLIVE = (188, 189, 34)
TAB_CYAN = (23, 190, 207)
AXIS_GREY = (90, 90, 90)  # a reference line's label: a device's capacity, an epoch
