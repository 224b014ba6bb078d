"""Service ops behind the MCP tools (see ``recall.service.registry``): the same ``recall.mcp.tools``
functions, run inside the service with its warm searcher and model client.

    mcp.memory_search   {text, limit, mtype, project, cwd, team}
    mcp.memory_related  {tags, limit, cwd}
    mcp.memory_ask      {question, project, cwd}
    mcp.recall_search   {text, since, limit, messages, project, cwd}

Each returns the dict its ``recall.mcp.tools`` function returns; a bad argument is a
``UsageError`` whose message reaches the MCP client as the tool error.
"""

from __future__ import annotations

from recall.core.errors import UsageError
from recall.mcp import tools
from recall.service.registry import op, searcher


def _args(args, allowed: tuple[str, ...]) -> dict:
    if not isinstance(args, dict):
        raise UsageError("this op takes an object of arguments.")
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise UsageError(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; this op takes {', '.join(allowed)}."
        )
    for name in ("project", "cwd", "mtype", "since"):
        if args.get(name) is not None and not isinstance(args[name], str):
            raise UsageError(f"{name} must be a string.")
    return dict(args)


@op("mcp.memory_search")
def memory_search(args: dict) -> dict:
    a = _args(args, ("text", "limit", "mtype", "project", "cwd", "team"))
    return tools.memory_search(
        str(a.get("text") or ""),
        limit=a.get("limit", 10),
        mtype=a.get("mtype"),
        project=a.get("project"),
        cwd=a.get("cwd"),
        searcher=searcher(),
        team=bool(a.get("team")),
    )


@op("mcp.memory_related")
def memory_related(args: dict) -> dict:
    a = _args(args, ("tags", "limit", "cwd"))
    tags = a.get("tags")
    if not isinstance(tags, (list, str)):
        raise UsageError('tags must be a list of strings, e.g. ["stripe", "webhooks"].')
    return tools.memory_related(tags, limit=a.get("limit", 20), cwd=a.get("cwd"), searcher=searcher())


@op("mcp.memory_ask")
def memory_ask(args: dict) -> dict:
    a = _args(args, ("question", "project", "cwd"))
    return tools.memory_ask(
        str(a.get("question") or ""), project=a.get("project"), cwd=a.get("cwd"), searcher=searcher()
    )


@op("mcp.recall_search")
def recall_search(args: dict) -> dict:
    a = _args(args, ("text", "since", "limit", "messages", "project", "cwd"))
    return tools.recall_search(
        str(a.get("text") or ""),
        since=a.get("since"),
        limit=a.get("limit", 5),
        messages=bool(a.get("messages")),
        project=a.get("project"),
        cwd=a.get("cwd"),
        searcher=searcher(),
    )
