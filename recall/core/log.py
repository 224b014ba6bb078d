"""Logging to ``$RECALL_HOME/logs/recall.log`` (rotating, 0600). Never to stdout: stdout
belongs to the CLI's output, the hook's JSON and the MCP protocol."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys

from recall.core import paths

_file_handler: logging.Handler | None = None
_file_path: str | None = None
_stderr_handler: logging.Handler | None = None
_said_unwritable = False  # this process has said once that its log cannot be written


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file (the new one after each rollover too) is 0600."""

    def _open(self):
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.chmod(self.baseFilename, 0o600)  # a file created 0644 by an older recall
        except OSError:
            pass
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)

    def handleError(self, record: logging.LogRecord) -> None:
        """A record that could not be written (a full disk: ENOSPC on the write, the flush or a
        rollover; the log's folder gone): one short line on stderr, once per process, never
        logging's traceback. The caller goes on (a hook still answers, exit 0); the next record
        is tried again, so the log resumes once there is room."""
        global _said_unwritable
        if _said_unwritable or not logging.raiseExceptions:
            return
        _said_unwritable = True
        exc = sys.exc_info()[1]
        why = (getattr(exc, "strerror", None) or type(exc).__name__) if exc is not None else "unknown error"
        try:
            sys.stderr.write(f"recall: the log {self.baseFilename} cannot be written ({why}); going on without it\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - stderr itself is gone: say nothing
            pass


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
            try:
                _file_handler.close()  # its last buffered record may not fit on a full disk
            except (OSError, ValueError):
                pass
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
