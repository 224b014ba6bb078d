"""UserPromptSubmit: inject what past sessions know about the prompt (see recall.prompt.context).

Run as ``recall hook user-prompt-submit`` (or ``python -m recall.hooks.user_prompt_submit``).
"""

from __future__ import annotations

from recall.hooks import dispatch


def handle(payload: dict) -> dict | None:
    from recall.prompt.context import run_hook

    return run_hook(payload, dispatch.process_start(), dispatch.emit, dispatch.emit_async)


if __name__ == "__main__":
    import sys

    sys.exit(dispatch.run_hook("user-prompt-submit", sys.argv[1:]))
