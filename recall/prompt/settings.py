"""The prompt hook's settings: the ``hook`` section of the config, every value checked."""

from __future__ import annotations

import math

from recall.core import config


def hook_settings(cfg: dict | None = None) -> dict:
    """The ``hook`` section with every value checked; bad values fall back to the defaults."""
    cfg = cfg if cfg is not None else config.load()
    defaults = config.DEFAULTS["hook"]
    raw = cfg.get("hook") if isinstance(cfg.get("hook"), dict) else {}
    out = dict(defaults)
    for key, value in raw.items():
        default = defaults.get(key)
        if default is None:
            out[key] = value
        elif isinstance(default, bool):
            if isinstance(value, bool):
                out[key] = value
        elif isinstance(default, (int, float)):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
                out[key] = value
        elif isinstance(default, list):
            if isinstance(value, list):
                out[key] = [str(v) for v in value]
        elif isinstance(default, str):
            if isinstance(value, str):
                out[key] = value
    out["max_chars"] = int(min(max(out["max_chars"], 300), 9000))  # Claude Code caps at 10,000
    out["limit"] = int(min(max(out["limit"], 1), 50))
    out["raw_limit"] = int(min(max(out["raw_limit"], 1), 50))
    out["raw_max_chars"] = int(min(max(out["raw_max_chars"], 300), out["max_chars"]))
    out["semantic_sessions"] = int(min(max(out["semantic_sessions"], 0), 10))
    out["semantic_min_similarity"] = float(min(out["semantic_min_similarity"], 1.0))
    out["budget_seconds"] = float(min(max(out["budget_seconds"], 0.5), 120))
    out["background_seconds"] = float(min(max(out["background_seconds"], out["budget_seconds"]), 300))
    if out.get("scope") not in ("project", "all"):
        out["scope"] = "project"
    return out
