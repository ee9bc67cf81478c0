"""The one search rule for recorded runs, used by `runs list --search` and the window's Runs tab alike.

Every whitespace-separated word of the search must appear in one of the run's fields, ignoring case; the
words are literal text (`%`, `_`, `*` match only themselves). A word `#N` is run N (not N0 or 1N).
"""

from __future__ import annotations

from .rows import RunRow


def search_fields(row: RunRow, *more: str) -> tuple[str, ...]:
    """What a search looks in, case-folded: name, note, model, dataset, device, device name, status ('live'
    while it trains), label, '#id', the machine (its host name, and for a run copied from another machine the name
    it was reached by), and `more` (the window adds the status in the user's language and a watched run's script)."""
    return tuple(
        text.casefold()
        for text in (
            row.name,
            row.note,
            row.model,
            row.dataset,
            row.device,
            row.device_name,
            row.status,
            "live" if row.live else "",
            row.label,
            f"#{row.id}",
            row.host,
            row.origin,
            *more,
        )
    )


def run_matches(row: RunRow, search: str, *more: str) -> bool:
    """Whether `row` matches `search` (an empty search matches every run); `more`: extra fields to look in."""
    fields = search_fields(row, *more)
    for word in search.casefold().split():
        if word.startswith("#") and word[1:].isdigit():
            if int(word[1:]) != row.id:
                return False
        elif not any(word in text for text in fields):
            return False
    return True
