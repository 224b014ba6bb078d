"""The few error classes recall raises. Each carries a one-line message that says what to do
next; the edges (CLI, hooks, MCP tools) translate them to user output once."""

from __future__ import annotations


class RecallError(Exception):
    """Base class: ``str(err)`` is a complete user-facing sentence naming the next step."""

    exit_code = 1


class UsageError(RecallError):
    """The user asked for something malformed (a bad --since, an unknown project...)."""

    exit_code = 2


class IndexMissing(RecallError):
    def __init__(self, path) -> None:
        super().__init__(f"No index at {path} yet: run `recall index` to build it.")


class IndexBusy(RecallError):
    def __init__(self, holder: str = "") -> None:
        who = f" ({holder})" if holder else ""
        super().__init__(
            f"The index is being written by another recall process{who}: "
            "wait for it to finish, or stop it with `recall service stop`."
        )


def report(exc: BaseException) -> int:
    """Print one line on stderr for an error that reached a command-line edge (never a
    traceback: unexpected ones go to the log file) and return the exit code."""
    import sys

    if isinstance(exc, RecallError):
        message, code = f"recall: {exc}", exc.exit_code
    elif isinstance(exc, KeyboardInterrupt):
        message, code = "recall: interrupted; nothing was lost (indexing resumes where it stopped).", 130
    elif isinstance(exc, BrokenPipeError):
        return 0
    else:
        from recall.core import log

        log.get("cli").exception("unexpected error")
        message, code = (f"recall: unexpected error ({type(exc).__name__}: {exc}); details in "
                         f"{log.log_file()}. Please report it."), 1
    print(message, file=sys.stderr)
    return code
