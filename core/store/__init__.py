"""The SQLite run store: where it lives, its connection and schema migrations, the rows read back, the one
search rule, and the recorder that writes a run's events from its own thread.

May import: core.base, core.config, core.run. Imports no torch at module level.
"""
