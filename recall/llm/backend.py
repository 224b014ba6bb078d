"""Which model backend a call runs on, and why (``model.backend``).

    api          the Messages API with an Anthropic key or token (``recall.llm.messages_api``)
    claude-code  Haiku through the user's own Claude Code binary in headless print mode,
                 authenticated however Claude Code is logged in (``recall.llm.claude_code``)
    off          no model calls: raw snippets in the prompt, no memory extraction
    auto         (the default) api when a key is found, else claude-code when a usable
                 Claude Code binary is found, else off

The choice is made in the caller's environment (``recall.core.caller``): the service working
for a hook decides with the hook's variables, not its own. ``choose()`` never raises and
always says why; ``describe()`` is what ``recall status`` / ``recall doctor`` print, next to
``used_today()``: the backend each caller's calls really went to today, from the usage log (a
hook's calls run with Claude Code's environment, which may hold a key the shell lacks: issue 44).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from recall.core import config

# The per-prompt synthesis must fit the hook's budget: Claude Code takes ~0.7 s to start
# before the model even answers, so below this much time left the hook injects raw snippets.
CLAUDE_CODE_HOOK_SECONDS = 2.0

FEATURES = {
    "synthesis": "the per-prompt synthesis",
    "memory": "memory extraction and consolidation",
    "ask": "recall ask / MCP memory_ask",
}


@dataclass
class Choice:
    name: str  # api | claude-code | off
    why: str  # one line: why this one
    setting: str  # model.backend as configured
    source: str = ""  # where the key came from, or the claude binary

    def as_json(self) -> dict:
        return asdict(self)


def choose(cfg: dict | None = None, env: dict | None = None) -> Choice:
    """The backend a model call made now would use (never raises, never prints a secret)."""
    from recall.core import caller
    from recall.llm import claude_code
    from recall.llm.credentials import find_credentials

    cfg = cfg if cfg is not None else config.load()
    env = env if env is not None else caller.current()
    setting = config.backend_setting(cfg)
    if setting == "off":
        return Choice("off", "model.backend is off (turn it on with `recall config set model.backend auto`)", setting)
    if setting in ("auto", "api"):
        creds = find_credentials(cfg, env)
        if creds:
            return Choice("api", f"an Anthropic key from {creds['where']}", setting, creds["where"])
        if setting == "api":
            return Choice(
                "off",
                "model.backend is api but no Anthropic key was found (set ANTHROPIC_API_KEY "
                "or run `recall config set api_key KEY`)",
                setting,
            )
    found = claude_code.find(cfg, env)
    if found.path and not found.problem:
        why = "Claude Code's own login" + (" (no Anthropic key found)" if setting == "auto" else "")
        return Choice("claude-code", f"{why}: {found.path} {found.version}".rstrip(), setting, found.path)
    if setting == "claude-code":
        return Choice("off", f"model.backend is claude-code but {found.problem}", setting)
    if found.problem == claude_code.NOT_FOUND:
        return Choice(
            "off",
            "no Anthropic key and no Claude Code found: set ANTHROPIC_API_KEY, run "
            "`recall config set api_key KEY`, or install and log in to Claude Code",
            setting,
        )
    return Choice("off", f"no Anthropic key found, and {found.problem}", setting)


def available(cfg: dict | None = None) -> bool:
    return choose(cfg).name != "off"


def require(cfg: dict | None = None) -> Choice:
    """The backend to use, or NoKey with the reason there is none."""
    from recall.llm.errors import NoKey

    choice = choose(cfg)
    if choice.name == "off":
        raise NoKey(f"Model calls are off: {choice.why} (search works without them).")
    return choice


def complete(
    system: str,
    prompt: str,
    *,
    purpose: str,
    max_tokens: int = 1024,
    timeout: float = 30.0,
    model: str | None = None,
    cap: int | None = None,
) -> str:
    """One model call on the backend ``choose()`` picks (``model.backend``); returns the text.
    Raises NoKey, CapReached (``cap`` counts every backend's calls today), ModelError."""
    from recall.llm.errors import CapReached
    from recall.llm.usage import calls_today

    if cap is not None and calls_today() >= cap:
        raise CapReached(cap)
    choice = require()
    if choice.name == "claude-code":
        from recall.llm import claude_code

        return claude_code.complete(system, prompt, purpose=purpose, timeout=timeout, model=model, path=choice.source)
    from recall.llm import messages_api

    return messages_api.api_complete(
        system, prompt, purpose=purpose, max_tokens=max_tokens, timeout=timeout, model=model
    )


def describe(cfg: dict | None = None, env: dict | None = None) -> dict:
    """Per feature: the backend it would use right now and why."""
    cfg = cfg if cfg is not None else config.load()
    choice = choose(cfg, env)
    out = {"setting": choice.setting, "backend": choice.name, "why": choice.why, "features": {}}
    from recall.core.settings import HookSettings, MemorySettings

    synthesize, memory = HookSettings.from_config(cfg).synthesize, MemorySettings.from_config(cfg).enabled
    for feature in FEATURES:
        name, why = choice.name, choice.why
        if feature == "synthesis" and not synthesize:
            name, why = "off", "hook.synthesize is false"
        elif feature == "memory" and not memory:
            name, why = "off", "memory.enabled is false"
        elif feature == "synthesis" and name == "claude-code":
            why = (
                f"{why}; used when at least {CLAUDE_CODE_HOOK_SECONDS:g} s of the hook budget are left, "
                "else raw snippets"
            )
        out["features"][feature] = {"backend": name, "why": why}
    return out


#: who makes a model call of each purpose (``recall.llm.usage``): what ``used_today`` names
CALLERS = {
    "recall": "prompt hook",
    "extraction": "memory",
    "consolidation": "memory",
    "summary": "memory",
    "answer": "recall ask",
}


def used_today(summary: dict | None = None) -> list[dict]:
    """The backends today's model calls succeeded on, most first: ``{"backend", "ok", "failed",
    "callers": {caller: calls}, "keys": {where the key came from: calls}}`` (the usage log)."""
    from recall.llm.usage import usage_summary

    if summary is None:
        try:
            summary = usage_summary(days=1)
        except Exception:  # noqa: BLE001 - an unreadable log: no evidence either way
            return []
    out = []
    for name, b in (summary.get("today_by_backend") or {}).items():
        ok = int(b.get("calls", 0)) - int(b.get("failed", 0))
        if ok <= 0:
            continue
        callers: dict[str, int] = {}
        for purpose, n in (b.get("ok_purposes") or {}).items():
            who = CALLERS.get(purpose, purpose)
            callers[who] = callers.get(who, 0) + int(n)
        out.append(
            {
                "backend": name,
                "ok": ok,
                "failed": int(b.get("failed", 0)),
                "callers": callers,
                "keys": b.get("keys") or {},
            }
        )
    return sorted(out, key=lambda u: -u["ok"])


def used_text(used: dict) -> str:
    """``api: 33 calls succeeded today (prompt hook 30, memory 3; key ANTHROPIC_API_KEY from a
    hook's environment)``."""
    from recall.core.text import counted

    callers = ", ".join(f"{who} {n}" for who, n in sorted(used["callers"].items(), key=lambda kv: -kv[1]))
    keys = ", ".join(sorted(used["keys"], key=lambda k: -used["keys"][k]))
    more = "; ".join(x for x in (callers, f"key {keys}" if keys else "") if x)
    return f"{used['backend']}: {counted(used['ok'], 'call')} succeeded today" + (f" ({more})" if more else "")
