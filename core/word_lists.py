"""Lists inside sentences for people ('a; b; c', 'x= and y='), as nested `core.message.Message`s.

A list glued with English separators would reach the window as one untranslatable string; nesting keeps
each part that is a `Message` translatable, and the separators become the user's language's own (Chinese
punctuation, 和). The English they render is the same as a plain join.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.message import Message


def semicolon_list(items: Sequence[str]) -> str:
    """'a; b; c' (empty for no items)."""
    if len(items) <= 1:
        return items[0] if items else ""
    return Message("{first}; {second}", first=semicolon_list(items[:-1]), second=items[-1])


def and_list(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a and b and c' (empty for no items)."""
    if len(items) <= 1:
        return items[0] if items else ""
    return Message("{first} and {second}", first=and_list(items[:-1]), second=items[-1])
