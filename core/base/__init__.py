"""The floor every other part of core stands on: text for people that survives translation (`Message`),
the user-error family, read-only mappings, atomic and strict JSON writes, and which output paths may be written.

May import: the standard library only (no torch, no other core package).
"""
