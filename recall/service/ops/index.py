"""The service's ops on its index (see ``recall.service.registry``): all run on the one
writer thread through ``Service.run_in_writer``.

    status       {}                                   -> Service.status()
    index        {"sources": [dirs], "rebuild": bool} -> Summary.as_dict()
    memory_docs  {"upsert": [memory dicts], "delete": [ids]} -> {"upserted", "deleted"}
    forget       indexer.forgetting.Selection.as_args() ({"sessions", "project", "before", "match",
                 "secret"}; {"session": id} too) -> what was removed from every store;
                 {"resume": true} -> {"resumed": [what each interrupted forget removed]}
"""

from __future__ import annotations

from pathlib import Path

from indexer.forgetting import Selection
from recall.core.errors import RecallError, UsageError
from recall.memory.index_docs import apply_memory_docs
from recall.service.registry import op, service


def _svc():
    svc = service()
    if svc is None:
        raise RecallError("This op needs the running service.")
    return svc


@op("status")
def _op_status(args: dict) -> dict:
    return _svc().status()


@op("index")
def _op_index(args: dict) -> dict:
    """args: {"sources": [absolute dirs], "rebuild": bool} -> Summary.as_dict()."""
    sources = []
    for s in args.get("sources") or []:
        p = Path(str(s))
        if not p.is_absolute() or not p.is_dir():
            raise UsageError(f"--source {s} is not a directory: pass a folder of Claude Code transcripts.")
        sources.append(p)
    rebuild = bool(args.get("rebuild"))
    svc = _svc()
    return svc.run_in_writer(lambda ix: svc.index_request(sources, rebuild), timeout=None, heavy=True)


@op("memory_docs")
def _op_memory_docs(args: dict) -> dict:
    upsert = args.get("upsert") or []
    delete = args.get("delete") or []
    svc = _svc()

    return svc.run_in_writer(lambda ix: apply_memory_docs(ix, upsert, delete), timeout=60.0)


@op("forget")
def _op_forget(args: dict) -> dict:
    """args: a Selection (sessions, project, before, match, secret); ``{"resume": true}``
    only finishes the forgets an interruption left unfinished."""
    from recall.privacy.forget import forget_everywhere, resume

    svc = _svc()
    if isinstance(args, dict) and args.get("resume"):
        return svc.run_in_writer(lambda ix: {"resumed": resume(ix)}, timeout=600.0)
    sel = Selection.from_args(args if isinstance(args, dict) else {})

    return svc.run_in_writer(lambda ix: forget_everywhere(ix, sel), timeout=600.0)
