"""Regular expressions compiled when first used.

A pattern at a module's top is compiled when the module is imported, and some cost
milliseconds each (a class of the CJK ranges ~3 ms, a long alternation ~4 ms, redaction's
~200 ~50 ms in all), while many importers never use them: ``recall status`` imports the
transcript reader for its record type and the redaction rules for their version, a shell
search imports the analyzer's CJK handling for English words. ``lazy(pattern, flags)`` stands
in for ``re.compile(pattern, flags)``: it compiles on first use and from then on holds the
compiled pattern's methods as its own attributes, so a match costs what it costs on the
compiled pattern. ``.pattern`` is there from the start (other patterns are built from it).
"""

from __future__ import annotations

import re

_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled when first used (see the module doc)."""

    def __init__(self, pattern, flags: int = 0) -> None:
        self.pattern = pattern
        self._args = (pattern, flags)

    def __getattr__(self, name: str):  # only for what is not set yet: the first use
        rx = re.compile(*self._args)
        for method in _METHODS:
            setattr(self, method, getattr(rx, method))
        return getattr(rx, name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern, flags: int = 0) -> LazyPattern:
    """A stand-in for ``re.compile(pattern, flags)`` that compiles on first use."""
    return LazyPattern(pattern, flags)
