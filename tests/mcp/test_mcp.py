"""The MCP server (issue #6): every tool in-process (``mcp.Client``) and over stdio
(``stdio_client`` + ``ClientSession``), good and bad input, size caps, the service path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client

from indexer.ingest import Indexer, index_all
from recall.mcp import tools as memory_tools
from recall.mcp.server import RESULT_CHARS, build_server
from tests.support.factory import Session
from tests.support.standin import StandIn, error, request_text, text

RECALL_BIN = Path(sys.executable).with_name("recall")
NOW = datetime.now(timezone.utc)


# the world: two projects, a few sessions, typed memories ------------------------------------------
def add_memories(docs: list[dict]) -> None:
    """Memory documents as the typed-memory store writes them (doctype "memory", "mem:<id>")."""
    with Indexer() as ix:
        if hasattr(ix, "upsert_memory_docs"):
            ix.upsert_memory_docs(docs)
        else:  # the writer of the memory store is not there yet: write the documents directly
            import tantivy

            from indexer.schema import prepare_content

            for d in docs:
                ix.writer.delete_documents_by_term("key", "mem:" + d["id"])
                doc = tantivy.Document(
                    key="mem:" + d["id"],
                    doctype="memory",
                    session_id=(d.get("session_ids") or [""])[0],
                    project=d["project"],
                    role="memory",
                    mtype=d["type"],
                    ts=int(d["updated"]),
                    text=d["content"].encode(),
                    cwd=b"",
                    branch=b"",
                    content=prepare_content(d["content"] + " " + " ".join(d["tags"])),
                )
                doc.add_text("tags", " ".join(d["tags"]))
                ix.writer.add_document(doc)
            ix.writer.commit()


class World:
    def __init__(self, root: Path, claude_projects: Path) -> None:
        self.app = root / "work" / "app"
        self.other = root / "work" / "other"
        self.empty = root / "work" / "empty"
        for p in (self.app / ".git", self.app / "src" / "billing", self.other / ".git", self.empty):
            p.mkdir(parents=True, exist_ok=True)
        old = Session(cwd=str(self.app))
        old.user("why does the stripe webhook fail signature verification?")
        old.assistant(
            "The stripe webhook handler parsed the JSON before verifying the signature; "
            "verification needs the raw request body. Fixed in src/billing/webhooks.py."
        )
        old.user("and the redis cache eviction warning?")
        old.assistant("The redis maxmemory policy was noeviction; switched to allkeys-lru.")
        old.write(claude_projects)
        recent = Session(cwd=str(self.app), start=NOW - timedelta(hours=20))
        recent.user("CI is flaky: redis timeout in the integration pipeline")
        recent.assistant("The redis container starts after the tests; added a healthcheck wait to the pipeline.")
        recent.write(claude_projects)
        other = Session(cwd=str(self.other))
        other.user("set up the celery beat scheduler and a stripe webhook for refunds")
        other.assistant("celery beat now runs from scheduler.py; the stripe webhook for refunds posts to /refunds.")
        other.write(claude_projects)
        self.sessions = {"old": old.session_id, "recent": recent.session_id, "other": other.session_id}
        index_all()
        add_memories(
            [
                {
                    "id": "m-stripe",
                    "project": str(self.app),
                    "type": "gotcha",
                    "content": "Stripe webhooks: verify the signature on the raw request body before parsing JSON.",
                    "tags": ["stripe", "webhooks", "payments"],
                    "updated": time.time() - 3600,
                    "session_ids": [old.session_id],
                },
                {
                    "id": "m-queue",
                    "project": str(self.app),
                    "type": "decision",
                    "content": "We chose SQS over redis streams for the job queue: at-least-once delivery and a DLQ.",
                    "tags": ["queue", "sqs", "infrastructure"],
                    "updated": time.time() - 7200,
                    "session_ids": [],
                },
                {
                    "id": "m-celery",
                    "project": str(self.other),
                    "type": "pattern",
                    "content": "Celery tasks are idempotent; payment retries use exponential backoff.",
                    "tags": ["celery", "retries", "payments"],
                    "updated": time.time() - 60,
                    "session_ids": [],
                },
            ]
        )


@pytest.fixture
def world(tmp_path, claude_projects) -> World:
    return World(tmp_path, claude_projects)


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


async def _calls(server, calls: list[tuple[str, dict]]):
    out = []
    async with Client(server) as c:
        for name, args in calls:
            out.append(await c.call_tool(name, args))
    return out


def call(server, name: str, args: dict):
    return run(_calls, server, [(name, args)])[0]


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def err(result) -> str:
    assert result.is_error, result
    return result.content[0].text


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


# listing ---------------------------------------------------------------------------------------------
def test_tools_are_listed_with_schemas_annotations_and_descriptions(world):
    async def go():
        async with Client(build_server(str(world.app))) as c:
            return (await c.list_tools()).tools, c.instructions

    tools, instructions = run(go)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"memory_search", "memory_related", "memory_ask", "recall_search", "rule_add", "rule_update"}
    for t in tools:
        writes = t.name.startswith("rule_")  # the two rule tools write a rule file
        assert t.annotations.read_only_hint is (not writes) and t.annotations.destructive_hint is False
        assert t.output_schema and ("rule" if writes else "matches") in t.output_schema["properties"]
        assert len(t.description) > 100
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), (t.name, name)
    search = by_name["memory_search"].input_schema["properties"]
    assert search["limit"]["minimum"] == 1 and search["limit"]["maximum"] == 50
    type_enum = next(a["enum"] for a in search["type"]["anyOf"] if "enum" in a)
    assert set(type_enum) == set(memory_tools.MEMORY_TYPES)
    from recall.memory import TYPES

    assert memory_tools.MEMORY_TYPES == TYPES  # the typed-memory store's types, in its order
    assert by_name["memory_search"].input_schema["required"] == ["query"]
    assert by_name["memory_related"].input_schema["required"] == ["tags"]
    assert by_name["recall_search"].input_schema["properties"]["messages"]["type"] == "boolean"
    assert "memory_search" in (instructions or "")


# memory_search ----------------------------------------------------------------------------------------
def test_memory_search_ranks_memories_with_transcript_hits_in_the_current_project(world):
    result = call(
        build_server(str(world.app / "src" / "billing")), "memory_search", {"query": "stripe webhook signature"}
    )
    data = ok(result)
    assert data["project"] == str(world.app)  # a subfolder means its repository
    kinds = [m["kind"] for m in data["matches"]]
    assert "memory" in kinds and ("message" in kinds or "session" in kinds)
    top = data["matches"][0]
    assert top["kind"] == "memory" and top["id"] == "m-stripe" and top["type"] == "gotcha"
    assert top["tags"] == ["stripe", "webhooks", "payments"]
    assert top["session_id"] == world.sessions["old"] and top["date"].startswith(str(NOW.year)[:2])
    hits = [m for m in data["matches"] if m["kind"] != "memory"]
    assert hits[0]["session_id"] == world.sessions["old"]
    assert all(m["project"] == str(world.app) for m in data["matches"])  # not the other project
    assert [m["n"] for m in data["matches"]] == list(range(1, len(data["matches"]) + 1))
    readable = text_of(result)
    assert "m-stripe" in readable and world.sessions["old"] in readable and "gotcha" in readable


def test_recall_ask_and_the_mcp_tools_rank_with_the_one_merged_ranking(world, monkeypatch):
    """`recall ask` and memory_search/memory_ask merge memories and transcripts with the same
    function and the same weight: changing ``MERGED_MEMORY_WEIGHT`` moves both alike."""
    from recall.cli.commands.ask import gather
    from recall.search import merged

    def orders():
        ask = [h.uuid for h in gather("stripe webhook signature", str(world.app))]
        mcp = [
            m["id"]
            for m in memory_tools.memory_search("stripe webhook signature", limit=30, cwd=str(world.app))["matches"]
        ]
        asked = [m["id"] for m in memory_tools.memory_ask("stripe webhook signature", cwd=str(world.app))["matches"]]
        return ask, mcp, asked

    ask, mcp, asked = orders()
    assert ask == mcp == asked and ask[0] == "m-stripe"
    monkeypatch.setattr(merged, "MERGED_MEMORY_WEIGHT", 1e-6)  # memories below every transcript hit
    ask, mcp, asked = orders()
    assert ask == mcp == asked and ask[-1] == "m-stripe" and ask[0] != "m-stripe"


def test_memory_search_project_all_and_explicit_project(world):
    server = build_server(str(world.app))
    everywhere = ok(call(server, "memory_search", {"query": "stripe webhook", "project": "all"}))
    assert everywhere["project"] == "all"
    assert {m["project"] for m in everywhere["matches"]} == {str(world.app), str(world.other)}
    other = ok(call(server, "memory_search", {"query": "stripe webhook", "project": str(world.other)}))
    assert other["project"] == str(world.other)
    assert {m["session_id"] for m in other["matches"] if m["kind"] != "memory"} == {world.sessions["other"]}
    by_name = ok(call(server, "memory_search", {"query": "celery", "project": "other"}))
    assert by_name["project"] == str(world.other)
    relative = ok(call(server, "memory_search", {"query": "celery", "project": "../other"}))
    assert relative["project"] == str(world.other)


def test_memory_search_by_type_returns_only_those_memories(world):
    data = ok(call(build_server(str(world.app)), "memory_search", {"query": "redis queue", "type": "decision"}))
    assert [(m["kind"], m["id"], m["type"]) for m in data["matches"]] == [("memory", "m-queue", "decision")]
    data = ok(call(build_server(str(world.app)), "memory_search", {"query": "redis", "type": "gotcha"}))
    assert data["matches"] == []


def test_default_project_with_nothing_indexed_searches_everywhere(world):
    data = ok(call(build_server(str(world.empty)), "memory_search", {"query": "celery"}))
    assert data["project"] == "all" and "every project" in data["note"]
    assert any(m["project"] == str(world.other) for m in data["matches"])


def test_bad_inputs_are_tool_errors_and_the_server_keeps_answering(world):
    server = build_server(str(world.app))
    results = run(
        _calls,
        server,
        [
            ("memory_search", {"query": ""}),
            ("memory_search", {"query": "   "}),
            ("memory_search", {"query": "?!"}),
            ("memory_search", {"query": "x", "limit": 0}),
            ("memory_search", {"query": "x", "limit": 51}),
            ("memory_search", {"query": "x", "limit": "many"}),
            ("memory_search", {"query": "x", "type": "bogus"}),
            ("memory_search", {"query": "x", "project": str(world.app / "nope")}),
            ("memory_search", {"query": "x", "project": str(world.empty)}),
            ("memory_search", {}),
            ("memory_related", {"tags": []}),
            ("memory_related", {"tags": ["  "]}),
            ("memory_related", {"tags": "stripe"}),
            ("memory_ask", {"question": ""}),
            ("recall_search", {"query": "redis", "since": "yesterday-ish"}),
            ("recall_search", {"query": "redis", "limit": 500}),
            ("no_such_tool", {"query": "x"}),
            ("memory_search", {"query": "stripe"}),
        ],
    )
    *bad, good = results
    assert [r.is_error for r in bad] == [True] * len(bad)
    messages = [err(r) for r in bad]
    assert messages[3].startswith("Invalid arguments for memory_search: limit:") and "(got 0)" in messages[3]
    assert "limit" in messages[4] and "(got 51)" in messages[4]
    assert not any("pydantic" in m for m in messages)  # plain sentences, no library boilerplate
    assert "query is empty" in messages[1]
    assert "no searchable words" in messages[2]
    assert "architecture" in messages[6] and "gotcha" in messages[6]  # names the allowed types
    assert "does not exist" in messages[7] and str(world.app) in messages[7]  # and lists indexed projects
    assert "Nothing of project" in messages[8] and "all" in messages[8]
    assert "query" in messages[9]
    assert "tags" in messages[10] and "tags" in messages[11]
    assert "2h, 3d or 1w" in messages[14]
    assert "no_such_tool" in messages[16]
    assert ok(good)["matches"]


def test_missing_index_says_how_to_build_it(tmp_path):
    result = call(build_server(str(tmp_path)), "memory_search", {"query": "anything"})
    assert "recall index" in err(result)


def test_unexpected_failure_is_a_tool_error_not_a_crash(world, monkeypatch):
    def boom(*a, **kw):
        raise RuntimeError("disk on fire")

    server = build_server(str(world.app))
    monkeypatch.setitem(server.backend.local_ops, "mcp.memory_search", boom)
    bad, good = run(_calls, server, [("memory_search", {"query": "stripe"}), ("recall_search", {"query": "stripe"})])
    assert "disk on fire" in err(bad) and "recall.log" in err(bad)
    assert ok(good)["matches"]


# memory_related ---------------------------------------------------------------------------------------
def test_memory_related_any_tag_most_matched_then_current_project(world):
    server = build_server(str(world.app))
    data = ok(call(server, "memory_related", {"tags": ["payments"]}))
    assert [m["id"] for m in data["matches"]] == ["m-stripe", "m-celery"]  # app first, though older
    assert data["total"] == 2 and data["matches"][0]["matched_tags"] == ["payments"]
    data = ok(call(server, "memory_related", {"tags": ["retries", "celery", "Payments"]}))
    assert [m["id"] for m in data["matches"]] == ["m-celery", "m-stripe"]  # three tags beat one
    assert data["matches"][0]["matched_tags"] == ["retries", "celery", "Payments"]
    data = ok(call(server, "memory_related", {"tags": ["webhook"], "limit": 1}))  # stemmed
    assert [m["id"] for m in data["matches"]] == ["m-stripe"]
    assert data["matches"][0]["text"].startswith("Stripe webhooks: verify")
    data = ok(call(server, "memory_related", {"tags": ["kubernetes"]}))
    assert data["total"] == 0 and data["matches"] == []
    assert "No memory carries" in text_of(call(server, "memory_related", {"tags": ["kubernetes"]}))


# memory_ask -------------------------------------------------------------------------------------------
def test_memory_ask_without_a_key_returns_raw_matches_and_says_how_to_enable(world):
    result = call(build_server(str(world.app)), "memory_ask", {"question": "how do we verify stripe webhooks?"})
    data = ok(result)
    assert data["synthesized"] is False and "answer" not in data  # null fields are left out
    assert "Synthesis is off" in data["note"] and "ANTHROPIC_API_KEY" in data["note"]
    assert data["matches"][0]["id"] == "m-stripe"
    assert "Synthesis is off" in text_of(result)


def test_memory_ask_synthesizes_with_the_model(world, monkeypatch):
    with StandIn() as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        api.script(text("Verify the signature on the raw body before parsing [2026-11-01 memory]."))
        result = call(build_server(str(world.app)), "memory_ask", {"question": "how do we verify stripe webhooks?"})
        data = ok(result)
        assert data["synthesized"] is True
        assert data["answer"].startswith("Verify the signature on the raw body")
        assert data["matches"] and data["matches"][0]["id"] == "m-stripe"
        sent = request_text(api.messages_requests()[0])
        assert "how do we verify stripe webhooks?" in sent and "raw request body" in sent
        assert "Verify the signature on the raw body" in text_of(result)
        # a failing model call falls back to the raw matches, with the reason
        api.script(error(500, "stand-in is down", should_retry=False))
        data = ok(call(build_server(str(world.app)), "memory_ask", {"question": "what about redis timeouts?"}))
        assert data["synthesized"] is False and "Synthesis failed" in data["note"]
        assert data["matches"]


# recall_search ----------------------------------------------------------------------------------------
def test_recall_search_has_the_cli_options(world):
    server = build_server(str(world.app))
    every = ok(call(server, "recall_search", {"query": "redis"}))
    assert {m["session_id"] for m in every["matches"]} == {world.sessions["old"], world.sessions["recent"]}
    assert all(m["kind"] != "memory" for m in every["matches"])  # raw transcripts only
    recent = ok(call(server, "recall_search", {"query": "redis", "since": "3d"}))
    assert {m["session_id"] for m in recent["matches"]} == {world.sessions["recent"]}
    assert recent["since"] == "3d"
    singles = ok(call(server, "recall_search", {"query": "redis", "messages": True, "limit": 10}))
    assert len([m for m in singles["matches"] if m["session_id"] == world.sessions["recent"]]) == 2
    assert all(m["kind"] == "message" for m in singles["matches"])
    one = ok(call(server, "recall_search", {"query": "redis", "messages": True, "limit": 1}))
    assert len(one["matches"]) == 1
    dated = ok(
        call(
            server,
            "recall_search",
            {"query": "stripe", "since": (NOW - timedelta(days=2)).date().isoformat(), "project": "all"},
        )
    )
    assert dated["matches"] == []  # both stripe sessions are older
    # the same engine as the CLI (whose search also shows typed memories)
    cli = subprocess.run(
        [str(RECALL_BIN), "--json", "--project", str(world.app), "--since", "3d", "redis"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    cli_hits = json.loads(cli.stdout)["hits"]
    assert any(h["kind"] == "memory" for h in cli_hits)
    assert [h["session_id"] for h in cli_hits if h["kind"] != "memory"] == [m["session_id"] for m in recent["matches"]]


# size caps ---------------------------------------------------------------------------------------------
def test_results_are_capped_and_say_how_many_more(world, claude_projects):
    filler = " ".join(f"zebra crossing detail number {i} with a long explanation" for i in range(60))
    for n in range(12):
        s = Session(cwd=str(world.app))
        for k in range(5):
            s.user(f"zebra question {n}-{k}: {filler}")
        s.write(claude_projects)
    index_all()
    add_memories(
        [
            {
                "id": f"m-zebra-{i}",
                "project": str(world.app),
                "type": "context",
                "content": f"zebra memory {i}: " + filler,
                "tags": ["zebra"],
                "updated": time.time(),
                "session_ids": [],
            }
            for i in range(40)
        ]
    )
    server = build_server(str(world.app))
    cases = [
        ("recall_search", {"query": "zebra crossing", "messages": True, "limit": 50}),
        ("memory_search", {"query": "zebra crossing", "limit": 50}),
        ("memory_related", {"tags": ["zebra"], "limit": 100}),
        ("memory_ask", {"question": "what about the zebra crossing?"}),
    ]

    async def schemas():
        async with Client(server) as c:
            return {t.name: t.output_schema for t in (await c.list_tools()).tools}

    import jsonschema

    output_schemas = run(schemas)
    for (name, args), result in zip(cases, run(_calls, server, cases)):
        data = ok(result)
        jsonschema.validate(data, output_schemas[name])  # Claude Code checks structuredContent too
        assert len(text_of(result)) <= RESULT_CHARS, name
        assert len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) <= RESULT_CHARS, name
        assert data["shown"] == len(data["matches"]) >= 5, name
        assert data["more"] > 0 and f"{data['more']} more not shown" in text_of(result), name
        assert all(len(m["snippet"]) <= 240 for m in data["matches"]), name


def test_fit_cuts_texts_before_dropping_matches():
    from recall.mcp.server import SearchOut, fit, render_search

    match = {
        "kind": "memory",
        "id": "m1",
        "type": "gotcha",
        "tags": ["a"],
        "date": "2026-11-01T00:00:00Z",
        "project": "/p",
        "session_id": "",
        "role": "memory",
        "snippet": "short",
        "score": 1.0,
        "text": "word " * 2000,
    }
    page = fit(
        {"query": "q", "project": "/p", "matches": [dict(match, id=f"m{i}") for i in range(3)]},
        SearchOut,
        render_search,
    )
    assert page.shown == 3 and page.more == 0
    assert all(m.text and m.text.endswith("…") and len(m.text) <= 1200 for m in page.matches)


# the service path ---------------------------------------------------------------------------------------
def test_uses_the_service_when_it_runs(world, monkeypatch):
    from recall.core import service_client as client
    from recall.service import registry as ops

    ops.load_modules()
    assert "mcp.memory_search" in ops.OPS
    seen = []

    def fake_call(op, args=None, timeout=2.0, credentials=False):
        seen.append(op)
        # only memory_ask may call the model: it alone sends the MCP server's credentials
        assert credentials == (op == "mcp.memory_ask")
        payload = json.loads(json.dumps(args))  # over the wire: JSON both ways
        try:
            return json.loads(json.dumps(ops.OPS[op](payload)))
        except Exception as exc:
            from recall.core.errors import RecallError

            if isinstance(exc, RecallError):
                raise client.RemoteError(str(exc)) from None
            raise client.Unavailable(str(exc)) from None

    monkeypatch.setattr(client, "call", fake_call)
    server = build_server(str(world.app))
    local = build_server(str(world.app), use_service=False)
    results = run(
        _calls,
        server,
        [
            ("memory_search", {"query": "stripe webhook"}),
            ("memory_related", {"tags": ["payments"]}),
            ("memory_ask", {"question": "stripe webhooks?"}),
            ("recall_search", {"query": "redis", "since": "3d"}),
            ("memory_search", {"query": "stripe", "project": "/definitely/not/here"}),
        ],
    )
    assert seen == [
        "mcp.memory_search",
        "mcp.memory_related",
        "mcp.memory_ask",
        "mcp.recall_search",
        "mcp.memory_search",
    ]
    assert ok(results[0]) == ok(call(local, "memory_search", {"query": "stripe webhook"}))
    assert [m["id"] for m in ok(results[1])["matches"]] == ["m-stripe", "m-celery"]
    assert ok(results[2])["synthesized"] is False
    assert {m["session_id"] for m in ok(results[3])["matches"]} == {world.sessions["recent"]}
    assert "does not exist" in err(results[4])  # the service's refusal reaches the model

    def down(op, args=None, timeout=2.0, credentials=False):
        raise client.Unavailable("the recall service is not running")

    monkeypatch.setattr(client, "call", down)
    assert ok(call(server, "memory_search", {"query": "stripe webhook"}))["matches"][0]["id"] == "m-stripe"


def test_through_the_real_service(world, tmp_path, monkeypatch):
    from recall.core import service_client as client

    monkeypatch.setenv("RECALL_WRITER_HEAP_MB", "48")
    with open(tmp_path / "serve.log", "wb") as out:
        proc = subprocess.Popen(
            [str(RECALL_BIN), "serve"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            info = client.ping()
            if info and info.get("pid") == proc.pid:
                break
            assert time.monotonic() < deadline, "the service did not come up"
            time.sleep(0.1)
        assert {"mcp.memory_search", "mcp.memory_related", "mcp.memory_ask", "mcp.recall_search"} <= set(info["ops"])
        server = build_server(str(world.app))
        server.backend.local_ops.clear()  # only the service can answer now
        results = run(
            _calls,
            server,
            [
                ("memory_search", {"query": "stripe webhook"}),
                ("memory_related", {"tags": ["payments"]}),
                ("memory_ask", {"question": "stripe webhooks?"}),
                ("recall_search", {"query": "redis", "since": "3d"}),
                ("memory_search", {"query": "stripe", "project": str(world.app / "gone")}),
            ],
        )
        assert ok(results[0])["matches"][0]["id"] == "m-stripe"
        assert [m["id"] for m in ok(results[1])["matches"]] == ["m-stripe", "m-celery"]
        assert "Synthesis is off" in ok(results[2])["note"]
        assert {m["session_id"] for m in ok(results[3])["matches"]} == {world.sessions["recent"]}
        assert "does not exist" in err(results[4])
    finally:
        proc.terminate()
        proc.wait(60)


# over stdio -----------------------------------------------------------------------------------------------
def _stdio_params(cwd: Path) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("RECALL_HOME", "HOME", "CLAUDE_CONFIG_DIR", "PATH") if k in os.environ}
    return StdioServerParameters(command=str(RECALL_BIN), args=["mcp"], cwd=str(cwd), env=env)


def test_every_tool_over_stdio(world, tmp_path):
    errlog_path = tmp_path / "server-stderr.txt"

    async def go():
        with open(errlog_path, "w") as errlog:
            async with stdio_client(_stdio_params(world.app / "src"), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = await session.list_tools()
                    out = {"tools": sorted(t.name for t in tools.tools)}
                    out["search"] = await session.call_tool("memory_search", {"query": "stripe webhook"})
                    out["bad"] = await session.call_tool("memory_search", {"query": "x", "limit": 0})
                    out["bad_type"] = await session.call_tool("memory_search", {"query": "x", "type": "nope"})
                    out["related"] = await session.call_tool("memory_related", {"tags": ["payments"]})
                    out["ask"] = await session.call_tool("memory_ask", {"question": "stripe webhooks?"})
                    out["bad_since"] = await session.call_tool("recall_search", {"query": "redis", "since": "soon"})
                    out["recall"] = await session.call_tool("recall_search", {"query": "redis", "since": "3d"})
                    return out

    out = run(go)
    assert out["tools"] == ["memory_ask", "memory_related", "memory_search", "recall_search", "rule_add", "rule_update"]
    search = ok(out["search"])
    assert search["project"] == str(world.app) and search["matches"][0]["id"] == "m-stripe"
    assert "limit" in err(out["bad"]) and "gotcha" in err(out["bad_type"])
    assert [m["id"] for m in ok(out["related"])["matches"]] == ["m-stripe", "m-celery"]
    assert "Synthesis is off" in ok(out["ask"])["note"]
    assert "2h, 3d or 1w" in err(out["bad_since"])
    assert {m["session_id"] for m in ok(out["recall"])["matches"]} == {world.sessions["recent"]}
    log = Path(os.environ["RECALL_HOME"]) / "logs" / "recall.log"
    assert "mcp server" in log.read_text() and "memory_search" in log.read_text()


def test_stdout_carries_only_the_protocol_and_garbage_does_not_kill_it(world):
    import queue
    import threading

    proc = subprocess.Popen(
        [str(RECALL_BIN), "mcp"],
        cwd=world.app,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout], daemon=True).start()

    def send(msg) -> None:
        proc.stdin.write((msg if isinstance(msg, str) else json.dumps(msg)) + "\n")
        proc.stdin.flush()

    def response(rid: int) -> dict:
        while True:
            msg = json.loads(lines.get(timeout=120))  # every stdout line is a JSON-RPC message
            assert msg.get("jsonrpc") == "2.0"
            if msg.get("id") == rid:
                return msg

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            }
        )
        assert response(1)["result"]["serverInfo"]["name"] == "recall"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send("this is not json")
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"query": 42}},
            }
        )
        assert response(2)["result"]["isError"] is True
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "recall_search", "arguments": {"query": "redis"}},
            }
        )
        third = response(3)["result"]
        assert third["isError"] is False and third["structuredContent"]["matches"]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        while not lines.empty():
            json.loads(lines.get())
        assert "mcp server" in proc.stderr.read()  # logs go to stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
