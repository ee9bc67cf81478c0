"""The recorder's own rules for the values it stores."""

from __future__ import annotations

import math
import sqlite3

from core.store.recorder import _nan_as_null


def test_nan_is_stored_as_null_and_inf_as_itself() -> None:
    assert [_nan_as_null(value) for value in (None, math.nan, 1.5, 0.0)] == [None, None, 1.5, 0.0]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x REAL)")
    db.executemany("INSERT INTO t VALUES (?)", [(_nan_as_null(v),) for v in (math.inf, -math.inf, math.nan)])
    assert db.execute("SELECT x FROM t").fetchall() == [(math.inf,), (-math.inf,), (None,)]
