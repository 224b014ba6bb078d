"""The prompt hook's settings: the ``hook`` section of the config as one ``HookSettings``
(``recall.core.settings``: every default and every check), built once per prompt."""

from __future__ import annotations

from recall.core import config
from recall.core.settings import HookSettings

__all__ = ["HookSettings", "hook_settings"]


def hook_settings(cfg: dict | None = None) -> HookSettings:
    """The ``hook`` section with every value checked; bad values fall back to the defaults."""
    return HookSettings.from_config(cfg if cfg is not None else config.load())
