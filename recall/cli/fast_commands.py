"""``recall status | log | stats | sessions | show | memories`` without typer.

Like ``recall.cli.fast_search`` for searches: these are the commands a user runs to glance at
recall, so they should start as fast as a search, not pay typer's ~0.3 s of imports and option
building. ``parse`` accepts exactly their plain forms; anything else (help, a subcommand such as
``memories add``, an unknown option, a value that is not a number) returns None and the typer
CLI handles it, errors included. Both paths call the same functions (``recall.cli.everyday``).
"""

from __future__ import annotations

#: command -> (flags: option -> (name, value), options taking a value: option -> (name, int?), positionals)
SPECS: dict[str, tuple[dict, dict, tuple[str, ...]]] = {
    "status": ({"--json": ("as_json", True)}, {}, ()),
    "log": (
        {"--json": ("as_json", True)},
        {"--limit": ("limit", True), "-n": ("limit", True), "--show": ("show", True)},
        (),
    ),
    "stats": ({"--json": ("as_json", True)}, {"--weeks": ("weeks", True)}, ()),
    "sessions": (
        {"--json": ("as_json", True)},
        {
            "--project": ("project", False),
            "--since": ("since", False),
            "--limit": ("limit", True),
            "-n": ("limit", True),
        },
        (),
    ),
    "show": (
        {"--json": ("as_json", True), "--pager": ("pager", True), "--no-pager": ("pager", False)},
        {},
        ("session",),
    ),
    "memories": (
        {"--json": ("as_json", True), "--all": ("all_", True), "--stale": ("stale", True)},
        {"--type": ("mtype", False), "-t": ("mtype", False), "--project": ("project", False)},
        (),
    ),
}


def parse(args: list[str]) -> tuple[str, dict] | None:
    """(command, keyword arguments of its ``recall.cli.everyday`` function), or None."""
    if not args or args[0] not in SPECS:
        return None
    name, rest = args[0], args[1:]
    flags, values, positionals = SPECS[name]
    kw: dict = {}
    words: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if not a.startswith("-") or a == "-":
            words.append(a)
            continue
        if a in flags:
            key, value = flags[a]
            kw[key] = value
            continue
        opt, eq, value = a.partition("=") if a.startswith("--") else (a[:2], "", a[2:])
        if opt not in values:
            return None  # --help, -h, an unknown option: typer answers
        if not eq and not value:
            if i >= len(rest):
                return None
            value = rest[i]
            i += 1
        key, numeric = values[opt]
        if numeric:
            try:
                value = int(value)
            except ValueError:
                return None
        kw[key] = value
    if len(words) != len(positionals):
        return None
    kw.update(zip(positionals, words))
    return name, kw


def run(parsed: tuple[str, dict]) -> int:
    from recall.cli import everyday

    name, kw = parsed
    return getattr(everyday, name)(**kw)
