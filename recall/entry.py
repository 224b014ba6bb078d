"""The ``recall`` console script (and ``python -m recall``, through ``recall/__main__.py``).

Hook invocations (``recall hook ...``) run on every prompt, so they are dispatched here
before anything heavy is imported (no typer, rich, anthropic or mcp); everything else
goes to the typer CLI in ``recall.cli.app``, except plain ``--raw``/``--json`` searches
(``recall.cli.fast_search``) and the everyday commands' plain forms (``status``, ``log``,
``sessions``, ``show``, ``memories``: ``recall.cli.fast_commands``), which skip typer's
~0.3 s of imports and option building.
"""

from __future__ import annotations

import os
import sys

#: what the plugin's slash commands run (hooks/recall ask|--raw|remember ...)
SLASH_VERBS = ("ask", "--raw", "remember")


def _plugin_command_stands_down() -> str | None:
    """A slash command of recall's plugin where `recall setup` installed its own (/recall...):
    one install answers (issue 36), so the plugin's says which, and does nothing."""
    from recall.core.wiring import session_project, setup_commands

    where = setup_commands(session_project() or os.getcwd())
    if where is None:
        return None
    return (
        f"recall setup's /recall, /recall-search and /remember ({where.parent}) serve recall here; the "
        "plugin's /recall:... commands stand down so that one install answers. Use /recall, /recall-search "
        "or /remember (`recall doctor` says which install is active)."
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[0] == "hook":
        from recall.hooks.dispatch import run_hook

        return run_hook(args[1], args[2:])
    if (
        args
        and args[0] in SLASH_VERBS
        and os.environ.get("RECALL_PLUGIN_DATA")
        and not os.environ.get("RECALL_PLUGIN_SHELL")
    ):
        said = _plugin_command_stands_down()
        if said:
            print(said)
            return 0
    bad = next((a for a in args if any("\udc80" <= c <= "\udcff" for c in a)), None)
    if bad is not None:  # bytes that are not UTF-8 (a Latin-1 terminal): say so, never a traceback
        shown = os.fsencode(bad).decode("utf-8", "backslashreplace")
        sys.stderr.write(
            f"recall: the argument '{shown}' is not valid UTF-8: set your terminal to UTF-8 "
            "(LANG=C.UTF-8, say) and type it again.\n"
        )
        return 2
    _say_config_problem(args)
    from recall.cli import fast_search

    code = _fast(fast_search, args)
    if code is not None:
        return code
    from recall.cli import fast_commands

    code = _fast(fast_commands, args)
    if code is not None:
        return code
    from recall.cli.app import run

    return run(args)


# the commands that report a config file that does not parse themselves (a write refuses it,
# doctor checks it): every other command says it first, on stderr, in one line
_SAYS_CONFIG = (("config", "set"), ("config", "unset"), ("exclude", "add"), ("exclude", "remove"), ("doctor",))


def _say_config_problem(args: list[str]) -> None:
    if any(tuple(args[: len(c)]) == c for c in _SAYS_CONFIG) or args[:1] in (["serve"], ["--help"], ["-h"]):
        return
    try:
        from recall.core import config

        config.load()
        problem = config.problem()
    except Exception:  # noqa: BLE001 - a warning must not stop the command
        return
    if problem:
        sys.stderr.write(f"recall: {problem}\n")


def _fast(path, args: list[str]) -> int | None:
    """Run ``args`` on a fast path (a module with ``parse`` and ``run``): its exit code, or None
    when the path does not take them. Errors are one line, as in the typer CLI."""
    parsed = path.parse(args)
    if parsed is None:
        return None
    try:
        return path.run(parsed)
    except (KeyboardInterrupt, Exception) as exc:
        from recall.core.errors import report

        return report(exc)


if __name__ == "__main__":
    sys.exit(main())
