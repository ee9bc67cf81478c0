"""A read-only dict: what events carry for configs and summaries, so no observer can change what
another one sees. It is still a `dict`, so JSON writers and `dataclasses.asdict` take it as one."""

from __future__ import annotations

from typing import Any, NoReturn


class ReadOnlyDict(dict):
    """A dict whose contents are fixed when it is made; every mutating method raises TypeError."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this mapping is read-only: it is shared by every observer of a run")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __copy__(self) -> ReadOnlyDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadOnlyDict:
        return self

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return ReadOnlyDict, (dict(self),)
