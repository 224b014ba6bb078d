"""Logging to ``$RECALL_HOME/logs/recall.log`` (rotating, 0600). Never to stdout: stdout
belongs to the CLI's output, the hook's JSON and the MCP protocol."""

from __future__ import annotations

import logging
import logging.handlers
import os

from recall.core import paths

_file_handler: logging.Handler | None = None
_file_path: str | None = None
_stderr_handler: logging.Handler | None = None


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file (the new one after each rollover too) is 0600."""

    def _open(self):
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.chmod(self.baseFilename, 0o600)  # a file created 0644 by an older recall
        except OSError:
            pass
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)


def log_file():
    return paths.log_dir() / "recall.log"


def setup(stderr: bool = False, level: int = logging.INFO) -> logging.Logger:
    """Point the ``recall`` logger at this RECALL_HOME's log file (and stderr if asked).

    Cheap to call repeatedly; when RECALL_HOME changes (tests do this), the file handler
    follows it.
    """
    global _file_handler, _file_path, _stderr_handler
    logger = logging.getLogger("recall")
    logger.setLevel(level)
    logger.propagate = False
    target = str(log_file())
    if target != _file_path:
        if _file_handler is not None:
            logger.removeHandler(_file_handler)
            _file_handler.close()
            _file_handler = None
        _file_path = target
        try:
            paths.ensure_dir(paths.log_dir())
            handler = PrivateRotatingFileHandler(
                target, maxBytes=2_000_000, backupCount=3, encoding="utf-8", errors="backslashreplace"
            )
            handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
            logger.addHandler(handler)
            _file_handler = handler
        except OSError:
            pass  # an unwritable RECALL_HOME must not break the caller
    if stderr and _stderr_handler is None:
        _stderr_handler = logging.StreamHandler()
        _stderr_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(_stderr_handler)
    return logger


def get(name: str = "") -> logging.Logger:
    setup()
    return logging.getLogger("recall" + (f".{name}" if name else ""))
