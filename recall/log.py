"""Logging to ``$RECALL_HOME/logs/recall.log`` (rotating, 0600). Never to stdout: stdout
belongs to the CLI's output, the hook's JSON and the MCP protocol."""

from __future__ import annotations

import logging
import logging.handlers
import os

from recall import paths

_configured = False


def log_file():
    return paths.log_dir() / "recall.log"


def setup(stderr: bool = False, level: int = logging.INFO) -> logging.Logger:
    """Configure the ``recall`` logger once per process; returns it."""
    global _configured
    logger = logging.getLogger("recall")
    if _configured:
        return logger
    _configured = True
    logger.setLevel(level)
    logger.propagate = False
    try:
        paths.ensure_dir(paths.log_dir())
        handler = logging.handlers.RotatingFileHandler(log_file(), maxBytes=2_000_000, backupCount=3,
                                                       encoding="utf-8")
        try:
            os.chmod(log_file(), 0o600)
        except OSError:
            pass
        handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    except OSError:
        pass  # an unwritable RECALL_HOME must not break the caller
    if stderr:
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(h)
    return logger


def get(name: str = "") -> logging.Logger:
    setup()
    return logging.getLogger("recall" + (f".{name}" if name else ""))
