"""``recall config show|get|set|unset``: the settings in ``$RECALL_HOME/config.json``."""

from __future__ import annotations

import json

import typer

from recall.core import config
from recall.core.errors import UsageError

commands = typer.Typer()  # merged into the app by recall.cli.app


config_app = typer.Typer(
    help="Show or change settings in $RECALL_HOME/config.json.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
commands.add_typer(config_app, name="config")

_SECRET_KEYS = {"api_key"}


def _mask(value):
    if isinstance(value, str) and value:
        return value[:7] + "…" + value[-4:] if len(value) > 16 else "…"
    return value


def _masked(cfg: dict) -> dict:
    out = dict(cfg)
    for k in _SECRET_KEYS:
        if out.get(k):
            out[k] = _mask(out[k])
    return out


def _lookup(cfg: dict, dotted: str):
    node = cfg
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise UsageError(f"no setting {dotted!r}: `recall config show` lists them.")
        node = node[part]
    return node


def _default_of(dotted: str):
    node = config.DEFAULTS
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None, False
        node = node[part]
    return node, True


def parse_value(dotted: str, text: str):
    """The typed value of ``text`` for setting ``dotted`` (checked against its default's type)."""
    default, known = _default_of(dotted)
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if dotted == "model.backend":
        if text not in config.BACKENDS:
            raise UsageError(f"model.backend is one of {', '.join(config.BACKENDS)}, not {text!r}.")
        return text
    if not known or default is None:
        return text if known else value  # api_key and other free-text settings stay strings
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if str(text).lower() in ("on", "yes", "true", "1"):
            return True
        if str(text).lower() in ("off", "no", "false", "0"):
            return False
        raise UsageError(f"{dotted} is true or false, not {text!r}.")
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise UsageError(f"{dotted} is a number >= 0, not {text!r}.")
        return float(value) if isinstance(default, float) else int(value)
    if isinstance(default, list):
        if isinstance(value, list):
            return [str(v) for v in value]
        return [s.strip() for s in str(text).split(",") if s.strip()]
    if isinstance(default, dict):
        raise UsageError(
            f"{dotted} is a group of settings: set one of its keys, e.g. {dotted}.{next(iter(default), 'key')}."
        )
    return str(text)


@config_app.command("show", help="Print every setting (defaults merged with your file; the key masked).")
def config_show() -> None:
    problems = config.problems()
    for p in problems:
        typer.echo(f"recall: {p}", err=True)
    typer.echo(json.dumps(_masked(config.load()), indent=2))


@config_app.command("get", help="Print one setting: `recall config get hook.max_chars`.")
def config_get(key: str = typer.Argument(..., help="Dotted name, like hook.budget_seconds.")) -> None:
    value = _lookup(config.load(), key)
    if key in _SECRET_KEYS:
        value = _mask(value)
    typer.echo(value if isinstance(value, str) else json.dumps(value))


@config_app.command(
    "set",
    help="Change one setting: `recall config set hook.max_chars 2000` or `recall config set api_key KEY`.",
    # a value that starts with "-" (-5) is the value, not an option: its check says what is wrong
    context_settings={"ignore_unknown_options": True},
)
def config_set(
    key: str = typer.Argument(..., help="Dotted name."),
    value: str = typer.Argument(..., help="New value (JSON or plain text)."),
) -> None:
    if not key or any(not part for part in key.split(".")):
        raise UsageError(f"{key!r} is not a setting name: use a dotted name like hook.max_chars.")
    _, known = _default_of(key)
    if not known and key.split(".")[0] not in config.DEFAULTS:
        raise UsageError(f"no setting {key!r}: `recall config show` lists them.")
    config.user_settings()  # a file that does not parse is never replaced by this one value: one line
    if key == "model":
        key = "model.name"  # older versions had the model id here
    parts = key.split(".")
    current = config.load()
    for i in range(1, len(parts)):  # every prefix must be a group, in the defaults and in the file
        prefix = ".".join(parts[:i])
        default, has = _default_of(prefix)
        node = current
        for part in parts[:i]:
            node = node.get(part) if isinstance(node, dict) else None
        if (has and not isinstance(default, dict)) or (node is not None and not isinstance(node, dict)):
            raise UsageError(
                f"{prefix} is a single setting, not a group: `recall config set {prefix} VALUE` changes it."
            )
    parsed = parse_value(key, value)
    path = config.set_value(key, parsed)
    shown = _mask(parsed) if key in _SECRET_KEYS else json.dumps(parsed)
    typer.echo(f"{key} = {shown} (saved in {path})")


@config_app.command("unset", help="Go back to the default for one setting.")
def config_unset(key: str = typer.Argument(..., help="Dotted name.")) -> None:
    if not config.unset_value(key):
        typer.echo(f"{key} was not set; it is at its default.")
        return
    typer.echo(f"{key} is back to its default.")
