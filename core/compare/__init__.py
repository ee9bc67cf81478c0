"""Compare mode: the plan (which contenders), the race that runs them, the result and its verdict, and the
events that only a comparison emits.

May import: core.distributed, core.finder, core.engine and everything below them.
"""
