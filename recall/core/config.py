"""User settings in ``$RECALL_HOME/config.json`` merged over defaults.

Import-light on purpose (the prompt hook reads it on every prompt). Unknown keys are kept.

A file that is not valid JSON (a trailing comma, bytes that are not UTF-8) never lifts what
the user set, exclusions above all: every reader (the hook, the service, the CLI) then uses
the last good settings, ``config.last-good.json`` beside it (written, atomically, whenever a
good file is read or saved), and says so: ``problem()`` is the one line naming the file, what
is wrong and the next step (the CLI prints it, the hook shows it once, the service logs it
once, ``recall doctor`` fails on it). No command writes over a file it could not read
(``set_value``/``unset_value`` raise a one-line ``UsageError``).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from recall.core import paths, settings

DEFAULT_MODEL = "claude-haiku-4-5"
BACKENDS = ("auto", "api", "claude-code", "off")

# $ per million tokens (input, output) for the cost estimate in `recall status`
PRICES = {"haiku": (1.0, 5.0), "sonnet": (3.0, 15.0), "opus": (5.0, 25.0)}

DEFAULTS: dict = {
    "api_key": None,
    "model": {
        "name": DEFAULT_MODEL,  # the model id (a plain string here means this: older files)
        "backend": "auto",  # auto | api | claude-code | off (see recall.llm.backend)
        "claude_path": None,  # the Claude Code binary for the claude-code backend (PATH when unset)
    },
    "tool_result_chars": 2000,
    "hook": settings.HookSettings.defaults(),  # every default and its meaning: recall.core.settings
    "exclude": [],  # projects (paths, globs) never captured: `recall exclude`
    "memory": settings.MemorySettings.defaults(),  # ... and recall.core.settings
}


def _legacy(data: dict) -> dict:
    """Older files said ``"model": "claude-…"``: that is ``model.name`` now."""
    if isinstance(data.get("model"), str):
        data = dict(data)
        data["model"] = {"name": data["model"]}
    return data


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


_problem: str | None = None
_logged: str | None = None
_kept: tuple[str, str] | None = None  # (where, body) of the last good copy this process wrote or saw


def last_good_path() -> Path:
    return paths.config_path().with_name("config.last-good.json")


def _parse(raw: bytes) -> dict:
    """The settings object ``raw`` holds; ValueError saying what is wrong (and where)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"byte {exc.start} is not UTF-8") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("it is nested too deep") from None
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(data, dict):
        raise ValueError("its top level is not an object {...}")
    return data


def _read_user() -> tuple[dict | None, str | None]:
    """(the user's file as written or None when absent, the problem reading it or None)."""
    path = paths.config_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path} cannot be read ({exc.strerror or exc}): fix its permissions"
    try:
        return _parse(raw), None
    except ValueError as exc:
        return None, f"{path} is not valid JSON ({exc})"


def _keep_last_good(raw_data: dict) -> None:
    """Remember ``raw_data`` as the last good settings (only when it changed)."""
    global _kept
    body = json.dumps(raw_data, indent=2, sort_keys=True) + "\n"
    target = last_good_path()
    if _kept == (str(target), body):
        return
    try:
        if target.read_text(encoding="utf-8") == body:
            _kept = (str(target), body)
            return
    except (OSError, ValueError):
        pass
    try:
        paths.atomic_write(target, body)
        _kept = (str(target), body)
    except OSError:
        pass  # a read-only home: the settings still apply, there is just no copy


def _last_good() -> dict:
    try:
        return _parse(last_good_path().read_bytes())
    except (OSError, ValueError):
        return {}


def load() -> dict:
    """Defaults merged with the user's config file; a file that does not parse gives the last
    good settings instead, and ``problem()`` says so (never raises)."""
    global _problem, _logged
    data, _problem = _read_user()
    if _problem is None:
        if data is None:
            return copy.deepcopy(DEFAULTS)
        _keep_last_good(data)
        return _merge(DEFAULTS, _legacy(data))
    if _problem != _logged:  # the service (or a CLI run) says it once in the log, never per read
        _logged = _problem
        try:
            from recall.core import log

            log.get("config").warning("%s", problem())
        except Exception:  # noqa: BLE001 - logging must not break a read
            pass
    return _merge(DEFAULTS, _legacy(_last_good()))


def problem() -> str | None:
    """The one line saying what is wrong with the config file, where, and what to do; None
    when it is fine (as of the last ``load()``)."""
    if _problem is None:
        return None
    kept = "the last good settings, its exclusions too," if last_good_path().exists() else "the defaults"
    return (
        f"{_problem}: recall uses {kept} until you fix it; fix the file (`recall doctor` checks it) "
        "and recall reads it again by itself."
    )


def problems() -> list[str]:
    cfg = load()
    if _problem:
        return [problem()]
    node = cfg.get("model")
    value = node.get("backend") if isinstance(node, dict) else None
    if value not in BACKENDS:
        return [
            f"model.backend in {paths.config_path()} is {value!r}, not one of {', '.join(BACKENDS)} (auto is "
            f"used): run `recall config set model.backend auto`."
        ]
    return []


def save(data: dict) -> Path:
    path = paths.config_path()
    paths.atomic_write(path, json.dumps(data, indent=2) + "\n")
    _keep_last_good(data)
    return path


def _user_data() -> dict:
    """The user's own settings file as written (no defaults); {} when absent. A file that
    does not parse is never written over: UsageError, one line."""
    from recall.core.errors import UsageError

    data, why = _read_user()
    if why:
        raise UsageError(
            f"{why}: recall will not write over a file it cannot read; fix it (or move it away) and "
            "run the command again."
        )
    return _legacy(data or {})


def user_settings() -> dict:
    """The user's file as written; UsageError when it does not parse (before a write)."""
    return _user_data()


def set_value(dotted: str, value) -> Path:
    """``recall config set hook.max_chars 2000`` style update of the user's file."""
    data = _user_data()
    node = data
    keys = dotted.split(".")
    if keys == ["model"] and isinstance(value, str):
        keys = ["model", "name"]  # `set model claude-…`: the name, as older versions stored it
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    return save(data)


def unset_value(dotted: str) -> bool:
    """Back to the default for one setting; False if the user's file did not set it."""
    data = _user_data()
    node = data
    keys = dotted.split(".")
    for k in keys[:-1]:
        node = node.get(k) if isinstance(node, dict) else None
    if not isinstance(node, dict) or keys[-1] not in node:
        return False
    del node[keys[-1]]
    save(data)
    return True


def model(cfg: dict | None = None) -> str:
    """The model id: ``RECALL_MODEL``, else ``model.name``."""
    node = (cfg or load()).get("model")
    name = node.get("name") if isinstance(node, dict) else node
    return os.environ.get("RECALL_MODEL") or (name if isinstance(name, str) and name.strip() else DEFAULT_MODEL)


def backend_setting(cfg: dict | None = None) -> str:
    """``model.backend`` (auto when unset or not one of BACKENDS: `recall doctor` says so)."""
    node = (cfg or load()).get("model")
    value = node.get("backend") if isinstance(node, dict) else None
    return value if value in BACKENDS else "auto"


def price_per_mtok(model_id: str) -> tuple[float, float]:
    for family, price in PRICES.items():
        if family in model_id:
            return price
    return PRICES["haiku"]
