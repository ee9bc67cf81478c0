"""A dropped connection to the machine a copied run comes from, as a recorded run's window
(`gpu_train_monitor.gui.history.run_window`) sees it: while the window's connection to that machine is reconnecting,
and for a grace period once it is back, the run is not taken for ended because the store marked it interrupted
(no news came while the connection was down).
"""

from __future__ import annotations

import time

from gpu_train_monitor.store.run_store import RunRow

# after the connection to a copied run's machine is back: how long an `interrupted` the store marked during the
# drop (its heartbeat went stale) waits for the mirror to write the run as it is there (it sends one every 10 s)
RECONNECTED_GRACE_S = 30.0


class ConnectionOutage:
    """Which machine's connection is down (`host`, None: none), and the grace period after it came back."""

    def __init__(self) -> None:
        self.host: str | None = None  # the machine whose connection dropped
        self._grace_until = 0.0  # an interrupted copy waits this long (monotonic) after the connection is back

    def set_host(self, host: str | None) -> bool:
        """The window's connection to `host` dropped and is reconnecting (None: no connection is down); whether
        that changed anything."""
        if host == self.host:
            return False
        if host is None and self.host is not None:
            self._grace_until = time.monotonic() + RECONNECTED_GRACE_S
        self.host = host
        return True

    def holds(self, row: RunRow) -> bool:
        """Whether `row`, copied from another machine, is in an outage of the connection to it: the connection is
        reconnecting, or came back a moment ago and the store still has the run as the drop left it (marked
        interrupted: no news while it lasted)."""
        if not row.origin or row.status not in ("running", "interrupted"):
            return False
        if self.host == row.origin:
            return True
        return row.status == "interrupted" and time.monotonic() < self._grace_until
