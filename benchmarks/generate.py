"""Deterministic generator of realistic Claude Code transcripts, for benchmarks.

Writes ``root/<encoded-cwd>/<session-uuid>.jsonl`` (plus subagent transcripts under
``root/<encoded-cwd>/<session-uuid>/subagents/agent-<id>.jsonl``) in the line format of
Claude Code 2.1.x (see ``shared/reference-transcripts`` beside the checkout): compact JSON, one content
block per assistant line (the lines of one response share ``message.id``), tool results
as user lines carrying ``toolUseResult`` and ``sourceToolAssistantUUID``, and the usual
non-conversational lines (queue-operation, attachment, file-history-snapshot, progress,
last-prompt, permission-mode, system, summary).

``messages`` counts the *indexable* messages, one per:

* ``user_prompt``     a user line that is a real prompt (string content, or a list with
                      one text block), not ``isMeta``, not a ``<command-name>`` /
                      ``<local-command-stdout>`` wrapper, not ``[Request interrupted…``;
* ``assistant_text``  an assistant line whose block is ``text``;
* ``tool_use``        an assistant line whose block is ``tool_use``;
* ``tool_result``     a user line whose block is ``tool_result``;
* ``summary``         a ``{"type": "summary"}`` line.

A subagent transcript starts with its Task prompt as a ``user_prompt`` (``isSidechain``
true, with ``agentId``). Everything else (``thinking`` blocks included) is noise a parser
must skip, added on top at realistic rates (``GenStats.kinds`` counts every line kind). :func:`iter_messages` is a reference extraction that follows exactly
these rules (used by the tests and to feed the FTS5 baseline standalone).

Same ``seed`` (and same ``end``) gives byte-identical files. ``end`` defaults to today
00:00 UTC so the corpus always covers "the last 90 days"; pass it explicitly to pin it.

Projects default to ``max(3, messages // 5000)``; project ``i`` depends only on the seed
and ``i``, and some sessions run in a subdirectory of their project's root (these paths do
not exist on disk, so a ``.git``-based project resolver sees each cwd as its own root).

:func:`query_set` returns ~60 benchmark queries (keywords, quoted phrases, identifiers,
file paths, long pasted prompts) drawn from the same seed's vocabulary, identifiers and
projects 0-2, so nearly all have matches in a corpus of that seed.

CLI::

    python -m benchmarks.generate OUT_DIR --messages 1000000 [--seed 0] [--projects P]
                                          [--end 2026-11-22] [--queries]
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

try:  # optional speed-up; not a project dependency
    import orjson as _orjson

    def _dumps(obj: Any) -> bytes:
        return _orjson.dumps(obj)

except ImportError:  # pragma: no cover - depends on the environment
    _encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def _dumps(obj: Any) -> bytes:
        return _encode(obj).encode("utf-8")


# --------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------

ENGLISH = """the of and to a in is it that for you this was on with as be have are not
but at we can by from or an they if so what all will would there their one do about more
which up out when just like then its has some time into them only how could also other
than now these should need because should any first make way very after well where here
much even most our through back still want use new before same too while does why each
right both few those must might since without again between never change work case check
sure looks seems instead actually already probably another around next last part keep
call run add fix try set get think know see look find take give tell used using file line
think thing point problem issue way version value place test error code question answer
wrong correct better simple small large quick current previous similar different possible
following above below again once other every least less many several enough rather quite
exactly pretty maybe perhaps likely basically currently directly properly correctly mostly
helpful clear easy hard long short old early late real whole main final single empty full
open close start stop update remove create build read write move copy show print load save
send return handle pass fail break match allow expect mean happen leave turn stay keep
step note idea detail reason result output input option order state rest side list name
""".split()

TECH = """function method class module package import export variable parameter argument
return async await promise callback closure iterator generator decorator fixture mock
stub patch test suite assertion coverage lint formatter typecheck compiler bundler
runtime interpreter dependency lockfile version semver release changelog commit branch
merge rebase cherry pick stash diff hunk conflict remote origin upstream tag hook
pipeline workflow artifact cache container image volume network port socket endpoint
route handler middleware controller service repository model schema migration query
index transaction cursor connection pool timeout retry backoff throttle ratelimit queue
worker scheduler cron job task thread process signal mutex lock semaphore deadlock race
condition memory leak heap stack frame trace profiler benchmark latency throughput
payload request response header cookie session token jwt oauth credential secret env
config setting flag feature toggle logger logging metric tracing span exporter dashboard
alert incident rollback deploy staging production cluster node pod replica shard
partition replication snapshot backup restore serializer parser tokenizer lexer grammar
regex pattern template component props state reducer store selector context provider
render hydration layout stylesheet tailwind webpack vite esbuild babel typescript eslint
prettier jest vitest pytest unittest tox nox poetry pip venv conda wheel sdist docker
compose kubernetes helm terraform ansible nginx redis postgres sqlite mysql mongodb kafka
rabbitmq elasticsearch tantivy lucene embedding vector similarity ranking relevance bm25
recall memory transcript prompt completion streaming chunk buffer encoder decoder utf8
unicode ascii bytes string integer float boolean null undefined none optional union
generic interface protocol abstract inheritance composition dataclass pydantic
validator enum literal tuple dict mapping sequence iterable callable annotation mypy
pyright ruff black isort flake8 github gitlab actions runner matrix yaml toml json csv
parquet arrow dataframe pandas numpy scipy torch tensor gradient optimizer epoch batch
dataset loader sampler checkpoint inference tokenizer vocab embedding attention cli
argparse typer click subcommand stdin stdout stderr exitcode pid signal sigterm sigkill
filesystem directory symlink permission chmod inode watcher inotify debounce poll epoll
asyncio eventloop coroutine executor threadpool multiprocessing pickle marshal websocket
grpc protobuf graphql rest openapi swagger fastapi flask django express nextjs react vue
svelte angular node deno bun npm pnpm yarn cargo rustc clippy tokio serde golang goroutine
channel gofmt makefile cmake bazel gradle maven jvm kotlin swift xcode android ios
""".split()

_ONSETS = [
    "b",
    "br",
    "c",
    "ch",
    "cl",
    "d",
    "dr",
    "f",
    "fl",
    "g",
    "gr",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "pl",
    "qu",
    "r",
    "s",
    "sh",
    "sk",
    "sl",
    "sp",
    "st",
    "t",
    "th",
    "tr",
    "v",
    "w",
    "z",
    "",
]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "ou", "oa", "y"]
_CODAS = ["", "", "", "n", "r", "l", "s", "t", "m", "nd", "rk", "st", "x", "ng", "ck", "th"]

USERS = ["dev", "alice", "sam", "jordan", "mchen", "priya", "ubuntu", "tom", "nina", "rafa"]
PARENTS = ["code", "src", "work", "projects", "repos", "dev", "Documents/GitHub", "git"]
SUBDIRS = [
    "frontend",
    "backend",
    "web",
    "api",
    "packages/core",
    "packages/ui",
    "services/worker",
    "services/api",
    "docs",
    "scripts",
    "infra",
    "cli",
    "app",
]
SUFFIXES = [
    "",
    "",
    "",
    "-api",
    "-service",
    "-web",
    "-cli",
    "-app",
    "-core",
    "-tools",
    "_v2",
    ".io",
    "-lab",
    "-bot",
    "-sdk",
]
BRANCH_KINDS = ["feature", "fix", "chore", "refactor", "perf", "docs", "test", "exp"]
MODELS = ["claude-opus-4-8"] * 6 + ["claude-sonnet-4-7"] * 3 + ["claude-haiku-4-5"]
ENTRYPOINTS = ["cli"] * 8 + ["sdk-cli", "claude-vscode"]
SUBAGENT_TYPES = ["general-purpose", "Explore", "Explore", "Plan", "general-purpose"]
LANGS = ["python", "ts", "python", "go", "ts", "python", "rust", "ts"]

PY_PKGS = [
    "requests",
    "fastapi",
    "pydantic",
    "sqlalchemy",
    "pytest",
    "numpy",
    "pandas",
    "httpx",
    "click",
    "typer",
    "rich",
    "uvicorn",
    "alembic",
    "celery",
    "redis",
    "boto3",
    "anthropic",
    "tantivy",
    "watchdog",
    "jinja2",
    "aiohttp",
    "orjson",
]
JS_PKGS = [
    "react",
    "react-dom",
    "vite",
    "express",
    "lodash",
    "zod",
    "axios",
    "next",
    "typescript",
    "eslint",
    "prettier",
    "vitest",
    "jest",
    "tailwindcss",
    "prisma",
    "@tanstack/react-query",
    "date-fns",
    "uuid",
    "dotenv",
    "ws",
    "esbuild",
]
GO_PKGS = [
    "github.com/spf13/cobra",
    "github.com/stretchr/testify",
    "golang.org/x/sync",
    "github.com/jackc/pgx/v5",
    "go.uber.org/zap",
    "github.com/gorilla/mux",
]
RS_PKGS = [
    "tokio",
    "serde",
    "serde_json",
    "anyhow",
    "thiserror",
    "clap",
    "reqwest",
    "tracing",
    "tantivy",
    "rayon",
    "axum",
    "sqlx",
]

PY_EXC = [
    "ValueError",
    "KeyError",
    "TypeError",
    "AttributeError",
    "ImportError",
    "ModuleNotFoundError",
    "RuntimeError",
    "AssertionError",
    "FileNotFoundError",
    "sqlite3.OperationalError",
    "ConnectionRefusedError",
    "TimeoutError",
    "json.decoder.JSONDecodeError",
    "pydantic_core._pydantic_core.ValidationError",
    "requests.exceptions.ConnectionError",
    "IndexError",
    "PermissionError",
    "asyncio.exceptions.CancelledError",
    "UnicodeDecodeError",
    "RecursionError",
]
JS_EXC = [
    "TypeError",
    "ReferenceError",
    "SyntaxError",
    "RangeError",
    "Error",
    "UnhandledPromiseRejection",
    "AxiosError",
    "ZodError",
    "PrismaClientKnownRequestError",
]

SKILL_LISTING = (
    "- deep-research: Deep research harness — fan-out web searches, fetch sources, "
    "adversarially verify claims, synthesize a cited report.\n"
    "- update-config: Use this skill to configure the Claude Code harness via settings.json. "
    "Automated behaviors (\"from now on when X\", \"each time X\") require hooks configured in "
    "settings.json.\n"
    "- keybindings-help: Use when the user wants to customize keyboard shortcuts, rebind keys, "
    "add chord bindings, or modify ~/.claude/keybindings.json.\n"
    "- verify: Verify that a code change actually does what it's supposed to by running the app "
    "and observing behavior.\n"
    "- code-review: Review the current diff for correctness bugs and reuse/simplification/"
    "efficiency cleanups at the given effort level.\n"
    "- simplify: Review the changed code for reuse, simplification, efficiency, and altitude "
    "cleanups, then apply the fixes.\n"
    "- init: Initialize a new CLAUDE.md file with codebase documentation\n"
    "- review: Review a GitHub pull request; for your working diff use /code-review\n"
    "- security-review: Complete a security review of the pending changes on the current branch"
)
SKILL_NAMES = [
    "deep-research",
    "update-config",
    "keybindings-help",
    "verify",
    "code-review",
    "simplify",
    "init",
    "review",
    "security-review",
]
AGENT_TYPES = ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"]
AGENT_LINES = [
    "- claude: Catch-all for any task that doesn't fit a more specific agent. (Tools: *)",
    "- Explore: Read-only search agent for broad fan-out searches. (Tools: All tools except "
    "Agent, Artifact, ExitPlanMode, Edit, Write, NotebookEdit)",
    "- general-purpose: General-purpose agent for researching complex questions, searching for "
    "code, and executing multi-step tasks. (Tools: *)",
    "- Plan: Software architect agent for designing implementation plans. (Tools: All tools "
    "except Agent, Artifact, ExitPlanMode, Edit, Write, NotebookEdit)",
    "- statusline-setup: Use this agent to configure the user's Claude Code status line setting. (Tools: Read, Edit)",
]
META_CAVEAT = (
    "Caveat: The messages below were generated by the user while running local commands. "
    "DO NOT respond to these messages or otherwise consider them in your response unless the "
    "user explicitly asks you to."
)
SLASH = [
    "clear",
    "model",
    "compact",
    "cost",
    "config",
    "permissions",
    "mcp",
    "memory",
    "status",
    "doctor",
    "resume",
    "context",
]
INTERRUPT = "[Request interrupted by user]"
INTERRUPT_TOOL = "[Request interrupted by user for tool use]"
REJECT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
    "you are doing and wait for the user to tell you how to proceed."
)

MESSAGE_KINDS = ("user_prompt", "assistant_text", "tool_use", "tool_result", "summary")
_ENC_RE = re.compile(r"[^A-Za-z0-9]")
DAY_MS = 86_400_000


def encode_cwd(cwd: str) -> str:
    """Claude Code's project directory name: every non-alphanumeric char becomes '-'."""
    return _ENC_RE.sub("-", cwd)


class _Zipf:
    """Zipf(s, q) over ``items`` (rank order), sampled through a quantised lookup table."""

    __slots__ = ("items", "tbl", "bits")

    def __init__(self, items: list, s: float = 1.0, q: float = 2.7, bits: int = 16) -> None:
        self.items = items
        size = 1 << bits
        w = [1.0 / (r + q) ** s for r in range(len(items))]
        tot = sum(w)
        tbl: list = []
        acc = 0.0
        for item, x in zip(items, w):
            acc += x
            end = min(size, round(acc / tot * size))
            if end > len(tbl):
                tbl.extend([item] * (end - len(tbl)))
        tbl.extend([items[-1]] * (size - len(tbl)))
        self.tbl = tbl
        self.bits = bits

    def head(self, n: int) -> list:
        return self.items[:n]


def _uuid(getrandbits) -> str:
    h = "%032x" % getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_B64_TO_62 = bytes.maketrans(b"+/", b"Qz")


def _b62(getrandbits, n: int) -> str:
    """n random alphanumerics (base64 of random bytes with '+/' mapped to letters)."""
    nbytes = n * 3 // 4 + 2
    raw = getrandbits(nbytes * 8).to_bytes(nbytes, "little")
    return base64.b64encode(raw).translate(_B64_TO_62)[:n].decode("ascii")


def _iso(ms: int) -> str:
    s, m = divmod(ms, 1000)
    t = time.gmtime(s)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], m)


# --------------------------------------------------------------------------------------
# The universe: everything that depends only on the seed (shared with query_set)
# --------------------------------------------------------------------------------------


def _snake(parts: list[str]) -> str:
    return "_".join(parts)


def _camel(parts: list[str]) -> str:
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def _pascal(parts: list[str]) -> str:
    return "".join(p.capitalize() for p in parts)


class Universe:
    """Vocabulary, phrases, identifiers, paths and text pools derived from ``seed``."""

    def __init__(self, seed: int = 0) -> None:
        rng = random.Random(f"recall-bench:universe:{seed}")
        self.seed = seed
        # synthetic words
        seen = dict.fromkeys(ENGLISH + TECH)
        synth: list[str] = []
        while len(synth) < 3200:
            w = "".join(
                rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                for _ in range(rng.choice((2, 2, 2, 3, 3, 1)))
            )
            if 4 <= len(w) <= 12 and w not in seen:
                seen[w] = None
                synth.append(w)
        english = list(dict.fromkeys(ENGLISH))
        tech = list(dict.fromkeys(TECH))
        self.synth = synth
        self.tech = tech
        # rank order: function words first, then a shuffled mix where real English and
        # technical words dominate the head and synthetic words make up the long tail
        head = english[:90]
        rest = english[90:] + tech + synth
        keyed = []
        tech_set = dict.fromkeys(tech)
        synth_set = dict.fromkeys(synth)
        for w in rest:
            bias = 0.55 if w in synth_set else (-0.1 if w in tech_set else -0.2)
            keyed.append((rng.random() + bias, w))
        keyed.sort()
        self.words = head + [w for _, w in keyed]
        self.content_words = [w for _, w in keyed]  # no function words
        self.vocab = _Zipf(self.words, s=1.0, q=2.7, bits=18)
        cw = self.content_words
        cz = _Zipf(cw, s=0.9, q=5, bits=16)

        def cword() -> str:
            return cz.tbl[rng.getrandbits(16)]

        # collocations ("stock phrases") injected into prose
        phrases = []
        seenp: dict[str, None] = {}
        while len(phrases) < 700:
            p = " ".join(cword() for _ in range(rng.choice((2, 2, 3, 3, 4))))
            if p not in seenp:
                seenp[p] = None
                phrases.append(p)
        self.phrases = _Zipf(phrases, s=1.0, q=3, bits=16)

        # identifiers
        idents = []
        seeni: dict[str, None] = {}
        while len(idents) < 2600:
            parts = [cword() for _ in range(rng.choice((2, 2, 2, 3, 3)))]
            r = rng.random()
            if r < 0.38:
                s = _snake(parts)
            elif r < 0.66:
                s = _camel(parts)
            elif r < 0.82:
                s = _pascal(parts)
            elif r < 0.94:
                s = ".".join(p for p in parts)
            else:
                s = _snake(parts).upper()
            if s not in seeni and s.isascii():
                seeni[s] = None
                idents.append(s)
        self.idents = _Zipf(idents, s=1.0, q=3, bits=16)
        self.funcs = _Zipf(
            [i for i in idents if "_" in i and i.islower() or (i[:1].islower() and "." not in i and "_" not in i)],
            bits=15,
        )
        self.classes = _Zipf([i for i in idents if i[:1].isupper() and "_" not in i], bits=14)

        # relative paths per language
        self.paths: dict[str, _Zipf] = {}
        for lang in ("python", "ts", "go", "rust"):
            ps = self._make_paths(rng, lang, cword)
            self.paths[lang] = _Zipf(ps, s=1.0, q=3, bits=15)

        # code line pools per language, log line pools per flavour
        self.code: dict[str, list[str]] = {}
        for lang in ("python", "ts", "go", "rust"):
            self.code[lang] = [self._code_line(rng, lang, cword) for _ in range(1500)]
        self.logs: dict[str, list[str]] = {}
        for flavour in ("pytest", "npm", "git", "docker", "generic", "go", "cargo"):
            self.logs[flavour] = [self._log_line(rng, flavour, cword) for _ in range(900)]
        self.hosts = [
            "docs.python.org/3/library",
            "developer.mozilla.org/en-US/docs/Web/API",
            "github.com",
            "stackoverflow.com/questions",
            "docs.rs",
            "pkg.go.dev",
            "fastapi.tiangolo.com",
            "react.dev/reference/react",
            "www.sqlite.org",
            "docs.anthropic.com/en/docs",
            "nodejs.org/api",
            "kubernetes.io/docs",
        ]

    # -- builders ----------------------------------------------------------------------

    @staticmethod
    def _make_paths(rng: random.Random, lang: str, cword) -> list[str]:
        out: dict[str, None] = {}
        fixed = {
            "python": [
                "pyproject.toml",
                "README.md",
                "setup.cfg",
                "requirements.txt",
                "tests/conftest.py",
                "Makefile",
                ".github/workflows/ci.yml",
                "Dockerfile",
                "docker-compose.yml",
                "tox.ini",
                ".env.example",
                "CLAUDE.md",
            ],
            "ts": [
                "package.json",
                "tsconfig.json",
                "README.md",
                "vite.config.ts",
                ".eslintrc.json",
                "src/index.ts",
                "src/main.tsx",
                "src/App.tsx",
                "Dockerfile",
                ".github/workflows/ci.yml",
                "CLAUDE.md",
                "pnpm-lock.yaml",
            ],
            "go": [
                "go.mod",
                "go.sum",
                "main.go",
                "Makefile",
                "README.md",
                "cmd/server/main.go",
                "Dockerfile",
                ".github/workflows/ci.yml",
                "CLAUDE.md",
            ],
            "rust": [
                "Cargo.toml",
                "Cargo.lock",
                "src/main.rs",
                "src/lib.rs",
                "README.md",
                "build.rs",
                ".github/workflows/ci.yml",
                "CLAUDE.md",
            ],
        }[lang]
        for f in fixed:
            out[f] = None
        while len(out) < 420:
            a, b = cword(), cword()
            r = rng.random()
            if lang == "python":
                pkg = rng.choice(("src/app", "src/core", "app", "lib", "src/" + a))
                p = f"tests/test_{b}.py" if r < 0.25 else f"{pkg}/{b}.py" if r < 0.85 else f"{pkg}/{b}/__init__.py"
            elif lang == "ts":
                p = (
                    f"src/components/{_pascal([a, b])}.tsx"
                    if r < 0.35
                    else f"src/lib/{_camel([a, b])}.ts"
                    if r < 0.6
                    else f"src/{a}/{b}.ts"
                    if r < 0.8
                    else f"src/{a}/{b}.test.ts"
                    if r < 0.92
                    else f"server/routes/{b}.js"
                )
            elif lang == "go":
                p = f"internal/{a}/{b}.go" if r < 0.6 else f"internal/{a}/{b}_test.go" if r < 0.8 else f"pkg/{a}/{b}.go"
            else:
                p = f"src/{a}/{b}.rs" if r < 0.6 else f"src/{b}.rs" if r < 0.85 else f"tests/{b}.rs"
            out[p] = None
        return list(out)

    def _code_line(self, rng: random.Random, lang: str, cword) -> str:
        f = self.funcs.tbl[rng.getrandbits(15)]
        c = self.classes.tbl[rng.getrandbits(14)]
        a, b = cword(), cword()
        ind = " " * rng.choice((0, 4, 4, 8, 8, 12))
        r = rng.random()
        if lang == "python":
            opts = [
                f"def {f}(self, {a}: {c}, {b}: int = 0) -> {c} | None:",
                f"{ind}return self.{a}.{f}({b})",
                f"from {a}.{b} import {c}",
                f"import {rng.choice(PY_PKGS)}",
                f"{ind}if {a} is None:",
                f"{ind}    raise {rng.choice(PY_EXC[:8])}(f\"{a} {b} missing: {{{a}!r}}\")",
                f"{ind}# {a} {b} {cword()} {cword()}",
                f"class {c}({rng.choice(('BaseModel', 'Exception', 'Protocol', 'object'))}):",
                f"{ind}{a} = {f}({b}, timeout={rng.randint(1, 120)})",
                f"{ind}for {a} in self.{b}:",
                f"{ind}with open({a}, encoding=\"utf-8\") as fh:",
                "@pytest.fixture",
                f"def test_{f.split('.')[0].lower()}({a}):",
                f"{ind}assert {f}({a}) == {rng.randint(0, 500)}",
                f"{ind}logger.debug(\"{a} %s {b}\", {a})",
                "",
            ]
        elif lang == "ts":
            opts = [
                f"export function {f}({a}: {c}, {b}?: number): {c} {{",
                f"{ind}const {a} = await {f}({b});",
                f"import {{ {c} }} from './{a}/{b}';",
                f"import {{ {rng.choice(('useState', 'useEffect', 'useMemo', 'useCallback'))} }} from 'react';",
                f"{ind}if (!{a}) throw new Error(`{a} {b} missing`);",
                f"{ind}// {a} {b} {cword()} {cword()}",
                f"export interface {c} {{",
                f"{ind}{a}: {rng.choice(('string', 'number', 'boolean', c + '[]'))};",
                f"{ind}return <{c} {a}={{{b}}} />;",
                f"{ind}}});",
                "}",
                f"{ind}expect({f}({a})).toEqual({rng.randint(0, 99)});",
                f"describe('{f}', () => {{",
                f"{ind}console.log('{a}', {b});",
                "",
            ]
        elif lang == "go":
            opts = [
                f"func {_pascal(f.split('_'))}({a} *{c}, {b} int) (*{c}, error) {{",
                f"{ind}if err != nil {{",
                f"{ind}\treturn nil, fmt.Errorf(\"{a} {b}: %w\", err)",
                f"{ind}{a}, err := {f}(ctx, {b})",
                f"type {c} struct {{",
                f"{ind}{_pascal([a])} string `json:\"{a}\"`",
                f"// {a} {b} {cword()}",
                f"{ind}}}",
                f"import \"{rng.choice(GO_PKGS)}\"",
                "",
            ]
        else:
            opts = [
                f"pub fn {f.split('.')[0].lower()}(&self, {a}: &{c}) -> Result<{c}> {{",
                f"{ind}let {a} = self.{b}.{f.split('.')[0].lower()}()?;",
                f"use crate::{a}::{c};",
                f"use {rng.choice(RS_PKGS)}::prelude::*;",
                "#[derive(Debug, Clone, Serialize, Deserialize)]",
                f"pub struct {c} {{",
                f"{ind}// {a} {b} {cword()}",
                f"{ind}}}",
                f"{ind}Ok({c}::new({a}))",
                "",
            ]
        return opts[int(r * len(opts))]

    def _log_line(self, rng: random.Random, flavour: str, cword) -> str:
        a, b = cword(), cword()
        f = self.funcs.tbl[rng.getrandbits(15)]
        n = rng.randint(1, 999)
        r = rng.random()
        if flavour == "pytest":
            p = self.paths["python"].tbl[rng.getrandbits(15)]
            opts = [
                f"tests/test_{a}.py::test_{b}_{cword()} PASSED{' ' * rng.randint(1, 30)}[{n % 100:3d}%]",
                f"tests/test_{a}.py::test_{f.split('.')[0].lower()} FAILED",
                f"E       AssertionError: assert {n} == {n + 1}",
                f"E       {rng.choice(PY_EXC)}: {a} {b}",
                f"{p}:{n}: in {f}",
                f"    {a} = {f}({b})",
                f"FAILED tests/test_{a}.py::test_{b} - {rng.choice(PY_EXC)}: {cword()}",
                f"==== {n} passed, {n % 7} failed, {n % 3} skipped in {n / 37:.2f}s ====",
                f"tests/test_{a}.py .....{'.' * (n % 20)}F..{'.' * (n % 9)}",
            ]
        elif flavour == "npm":
            opts = [
                f"npm WARN deprecated {a}@{n % 9}.{n % 13}.{n % 7}: {b} is no longer supported",
                f"added {n} packages, and audited {n * 3} packages in {n % 40}s",
                f"vite v5.{n % 5}.{n % 11} building for production...",
                f"✓ {n * 4} modules transformed.",
                f"dist/assets/{a}-{_B62[n % 62]}{n:x}.js  {n * 1.7:.2f} kB │ gzip: {n / 3:.2f} kB",
                f" FAIL  src/{a}/{b}.test.ts > {f} > {cword()} {cword()}",
                f" ✓ src/{a}/{b}.test.ts ({n % 40} tests) {n}ms",
                f"error TS2345: Argument of type '{a}' is not assignable to parameter of type '{b}'.",
                f"  src/{a}/{b}.ts:{n}:{n % 80} - error TS2339: Property '{f}' does not exist",
            ]
        elif flavour == "git":
            opts = [
                f"commit {rng.getrandbits(160):040x}",
                f"Author: {rng.choice(USERS).capitalize()} <{rng.choice(USERS)}@example.com>",
                f"    {rng.choice(('fix', 'feat', 'chore', 'refactor', 'test'))}({a}): {b} {cword()} {cword()}",
                f" {rng.choice(('M', 'A', 'D', '??'))} src/{a}/{b}.{rng.choice(('py', 'ts', 'go'))}",
                f" src/{a}/{b}.py | {n % 80} +++++---",
                f"@@ -{n},{n % 9} +{n},{n % 11} @@ def {f}(",
                f"-    {a} = {b}({cword()})",
                f"+    {a} = {f}({b}, {cword()}=True)",
                f"Switched to a new branch '{rng.choice(BRANCH_KINDS)}/{a}-{b}'",
            ]
        elif flavour == "docker":
            opts = [
                f"#{n % 20} [{a} {n % 8}/{n % 9 + 1}] RUN pip install -r requirements.txt",
                f"#{n % 20} DONE {n / 10:.1f}s",
                f" => => writing image sha256:{rng.getrandbits(256):064x}",
                f"{a}-{b}-1  | INFO:     Uvicorn running on http://0.0.0.0:{8000 + n % 100}",
                f"{a}-db-1  | 2026-{n % 12 + 1:02d}-{n % 28 + 1:02d} UTC [{n}] LOG:  database system is ready",
                f"Container {a}-{b}-1  Started",
                f"{a}-{b}-1 exited with code {n % 3}",
                f"Error response from daemon: {cword()} {cword()}: port is already allocated",
            ]
        elif flavour == "go":
            opts = [
                f"=== RUN   Test{_pascal([a, b])}",
                f"--- PASS: Test{_pascal([a, b])} (0.{n:03d}s)",
                f"--- FAIL: Test{_pascal([a])} (0.{n:03d}s)",
                f"    {b}_test.go:{n % 300}: expected {n}, got {n - 1}",
                f"ok  \tgithub.com/{rng.choice(USERS)}/{a}/internal/{b}\t0.{n:03d}s",
                f"FAIL\tgithub.com/{rng.choice(USERS)}/{a}/internal/{b} [build failed]",
            ]
        elif flavour == "cargo":
            opts = [
                f"   Compiling {a} v0.{n % 20}.{n % 7}",
                f"    Finished `dev` profile in {n / 50:.2f}s",
                f"error[E0{n % 800:03d}]: mismatched types",
                f"  --> src/{a}/{b}.rs:{n}:{n % 60}",
                f"test {a}::{b}::{f.split('.')[0].lower()} ... ok",
                f"warning: unused variable: `{a}`",
            ]
        else:
            opts = [
                f"2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}T{n % 24:02d}:{n % 60:02d}:{n % 59:02d}Z INFO {a}.{b}: {cword()} {cword()} {f}",
                f"WARNING: {a} {b} {cword()} took {n}ms",
                f"DEBUG {f} {a}={n} {b}={cword()}",
                f"ERROR {rng.choice(PY_EXC)}: {a} {b} {cword()}",
                f"-rw-r--r--  1 {rng.choice(USERS)} staff  {n * 37} Oct {n % 28 + 1} {n % 24:02d}:{n % 60:02d} {a}.{rng.choice(('py', 'ts', 'md', 'json'))}",
                f"drwxr-xr-x  {n % 9} {rng.choice(USERS)} staff  {n} Nov {n % 28 + 1} {a}",
                f"{a}/{b}.py:{n}:    {f}({cword()})",
                f"  {a}: {n}",
                f"{n}\t{a}/{b}",
            ]
        return opts[int(r * len(opts))]


# --------------------------------------------------------------------------------------
# Projects
# --------------------------------------------------------------------------------------


@dataclass
class Project:
    index: int
    name: str
    root: str
    lang: str
    cwds: list[str]
    paths: _Zipf
    idents: _Zipf
    branches: list[str]


def make_project(u: Universe, i: int) -> Project:
    rng = random.Random(f"recall-bench:project:{u.seed}:{i}")
    user = random.Random(f"recall-bench:user:{u.seed}").choice(USERS)
    cw = u.content_words
    name = rng.choice(cw[:600]) + rng.choice(("", "", "-" + rng.choice(cw[:900])))
    name += rng.choice(SUFFIXES)
    if i >= 3 and rng.random() < 0.5:
        name = f"{name}-{i}"
    parent = rng.choice(PARENTS)
    root = f"/home/{user}/{parent}/{name}"
    lang = LANGS[i % len(LANGS)] if i < len(LANGS) else rng.choice(LANGS)
    cwds = [root] * 6 + [f"{root}/{rng.choice(SUBDIRS)}" for _ in range(rng.choice((0, 1, 1, 2, 3)))]
    gp = u.paths[lang]
    ps = list(dict.fromkeys(gp.tbl[rng.getrandbits(gp.bits)] for _ in range(rng.randint(40, 220))))
    gi = u.idents
    ids = list(dict.fromkeys(gi.tbl[rng.getrandbits(gi.bits)] for _ in range(300)))
    branches = ["main" if rng.random() < 0.7 else "master"]
    for _ in range(rng.randint(2, 9)):
        branches.append(f"{rng.choice(BRANCH_KINDS)}/{rng.choice(cw[:1500])}-{rng.choice(cw[:1500])}")
    return Project(i, name, root, lang, cwds, _Zipf(ps, s=0.9, bits=12), _Zipf(ids, s=1.0, bits=12), branches)


def make_projects(u: Universe, n: int) -> list[Project]:
    """Projects 0..n-1 (project i only depends on the seed and i), with distinct roots."""
    out: list[Project] = []
    roots: dict[str, None] = {}
    for i in range(n):
        P = make_project(u, i)
        if P.root in roots:
            old = P.root
            P.name += f"-{i}"
            P.root += f"-{i}"
            P.cwds = [P.root + c[len(old) :] for c in P.cwds]
        roots[P.root] = None
        out.append(P)
    return out


# --------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------


@dataclass
class GenStats:
    files: int = 0
    lines: int = 0
    messages: int = 0
    bytes: int = 0
    sessions: int = 0
    subagent_files: int = 0
    projects: int = 0
    seconds: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["kinds"] = dict(sorted(self.kinds.items()))
        return d


class _Stop(Exception):
    pass


_LANG_FLAVOURS = {"python": "pytest", "ts": "npm", "go": "go", "rust": "cargo"}
_EXT = {"python": "py", "ts": "ts", "go": "go", "rust": "rs"}


class _Gen:
    def __init__(self, root: Path, u: Universe, seed: int, projects: list[Project], end_ms: int) -> None:
        self.root = root
        self.u = u
        self.rng = rng = random.Random(f"recall-bench:corpus:{seed}")
        self.r = rng.random
        self.bits = rng.getrandbits
        rr = rng.random
        # faster stand-ins for rng.randint / rng.choice (same stream, plain arithmetic)
        self.randint = lambda a, b: a + int(rr() * (b - a + 1))
        self.choice = lambda seq: seq[int(rr() * len(seq))]
        self.choices = rng.choices
        self.projects = projects
        self.pbits = max(14, (len(projects) * 64).bit_length())
        self.pz = _Zipf(projects, s=0.8, q=1.5, bits=self.pbits)
        self.end_ms = end_ms
        self.stats = GenStats(projects=len(projects))
        self.kinds: dict[str, int] = {}
        self.vtbl = u.vocab.tbl
        self.ptbl = u.phrases.tbl
        self.recent_texts: list[str] = []  # material for <recalled-context>
        self.cwd = self.entrypoint = self.branch = ""
        self.model = MODELS[0]
        self.last_text = self.last_prompt = ""
        self.left = 0
        self.pending = 0
        self.dirs: set[str] = set()

    # -- small samplers ---------------------------------------------------------------

    def word(self) -> str:
        return self.vtbl[self.bits(18)]

    def phrase(self) -> str:
        return self.ptbl[self.bits(16)]

    def ident(self) -> str:
        z = self.P.idents
        return z.tbl[self.bits(12)] if self.r() < 0.8 else self.u.idents.tbl[self.bits(16)]

    def relpath(self) -> str:
        return self.P.paths.tbl[self.bits(12)]

    def abspath(self) -> str:
        return f"{self.P.root}/{self.P.paths.tbl[self.bits(12)]}"

    def uuid(self) -> str:
        return _uuid(self.bits)

    def prose(self, n: int) -> str:
        words = self.choices(self.vtbl, k=n)
        r = self.r
        for _ in range(n // 9 + (1 if r() < (n % 9) / 9 else 0)):
            i = int(r() * n)
            x = r()
            if x < 0.34:
                words[i] = self.phrase()
            elif x < 0.58:
                words[i] = "`" + self.ident() + "`"
            elif x < 0.66:
                words[i] = self.ident()
            elif x < 0.78:
                words[i] = self.relpath() if x < 0.74 else self.abspath()
            elif x < 0.9:
                words[i] = self.choice(self.u.tech)
            else:
                words[i] = self.choice(
                    (
                        f"v{self.randint(0, 9)}.{self.randint(0, 30)}.{self.randint(0, 20)}",
                        f"{self.randint(2, 900)}ms",
                        str(self.randint(2, 5000)),
                        f"#{self.randint(10, 4000)}",
                        f"{self.randint(1, 99)}%",
                    )
                )
        out = []
        i = 0
        while i < n:
            ln = 5 + int(r() * 14)
            seg = words[i : i + ln]
            w = seg[0]
            if w.isalpha() and w.islower():
                seg[0] = w[0].upper() + w[1:]
            x = r()
            out.append(" ".join(seg) + ("." if x < 0.8 else "?" if x < 0.87 else ":" if x < 0.93 else "!"))
            i += ln
        return " ".join(out)

    def runs(self, pool: list[str], k: int) -> list[str]:
        """k lines of ``pool`` taken as a few random contiguous runs (cheap for big k)."""
        r = self.r
        n = len(pool)
        out: list[str] = []
        while k > 0:
            ln = min(k, 3 + int(r() * 26))
            s = int(r() * (n - ln))
            out += pool[s : s + ln]
            k -= ln
        return out

    def code(self, nlines: int, lang: str | None = None) -> str:
        return "\n".join(self.runs(self.u.code[lang or self.P.lang], nlines))

    def logs(self, flavour: str, size: int) -> str:
        return "\n".join(self.runs(self.u.logs[flavour], max(1, size // 60)))

    def traceback(self, lang: str | None = None) -> str:
        lang = lang or self.P.lang
        P = self.P
        if lang == "go":
            frames = [
                f"panic: {self.choice(('runtime error: invalid memory address or nil pointer dereference', 'runtime error: index out of range [3] with length 3', self.prose(self.randint(3, 8))))}",
                "",
                "goroutine 1 [running]:",
            ]
            for _ in range(self.randint(3, 8)):
                frames.append(f"{self.ident().split('.')[0]}.{_pascal([self.word()])}(0xc000{self.bits(24):06x})")
                frames.append(f"\t{self.abspath()}:{self.randint(1, 500)} +0x{self.bits(12):x}")
            frames.append("exit status 2")
            return "\n".join(frames)
        if lang == "rust":
            return (
                f"thread 'main' panicked at {self.relpath()}:{self.randint(1, 500)}:{self.randint(1, 60)}:\n"
                f"called `Result::unwrap()` on an `Err` value: {_pascal([self.word()])}(\"{self.prose(self.randint(3, 10))}\")\n"
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
            )
        if lang != "ts":
            frames = ["Traceback (most recent call last):"]
            for _ in range(self.randint(2, 9)):
                if self.r() < 0.3:
                    pkg = self.choice(PY_PKGS)
                    frames.append(
                        f'  File "{P.root}/.venv/lib/python3.12/site-packages/{pkg}/{self.word()}.py", '
                        f"line {self.randint(10, 2000)}, in {self.ident().split('.')[-1]}"
                    )
                else:
                    frames.append(
                        f'  File "{P.root}/{self.u.paths["python"].tbl[self.bits(15)] if P.lang != "python" else self.relpath()}", '
                        f"line {self.randint(1, 900)}, in {self.ident().split('.')[-1]}"
                    )
                frames.append(f"    {self.choice(self.u.code['python']).strip() or 'return ' + self.ident()}")
            exc = self.choice(PY_EXC)
            frames.append(f"{exc}: {self.prose(self.randint(4, 14))}")
            return "\n".join(frames)
        exc = self.choice(JS_EXC)
        head = self.choice(
            (
                f"{exc}: Cannot read properties of undefined (reading '{self.ident()}')",
                f"{exc}: {self.ident()} is not a function",
                f"{exc}: {self.ident()} is not defined",
                f"Error: ENOENT: no such file or directory, open '{self.abspath()}'",
                f"{exc}: {self.prose(self.randint(4, 12))}",
            )
        )
        frames = [head]
        for _ in range(self.randint(3, 10)):
            if self.r() < 0.35:
                pkg = self.choice(JS_PKGS)
                frames.append(
                    f"    at {self.ident()} ({P.root}/node_modules/{pkg}/lib/{self.word()}.js:{self.randint(1, 900)}:{self.randint(1, 80)})"
                )
            elif self.r() < 0.1:
                frames.append(
                    f"    at process.processTicksAndRejections (node:internal/process/task_queues:{self.randint(60, 99)}:5)"
                )
            else:
                frames.append(f"    at {self.ident()} ({self.abspath()}:{self.randint(1, 600)}:{self.randint(1, 80)})")
        return "\n".join(frames)

    def shell(self) -> tuple[str, str, str]:
        """(command, description, output flavour)."""
        P = self.P
        lang = P.lang
        x = self.r()
        ch = self.choice
        if x < 0.22:
            c = ch(
                (
                    "git status",
                    f"git diff {self.relpath()}",
                    "git log --oneline -20",
                    f"git add {self.relpath()} {self.relpath()} && git commit -m \"{ch(('fix', 'feat', 'chore', 'refactor'))}: {self.phrase()}\"",
                    f"git checkout -b {ch(P.branches)}",
                    "git diff --stat",
                    "git stash list",
                    f"git log -p --follow {self.relpath()}",
                    f"git grep -n {self.ident()}",
                    f"git rebase -i HEAD~{self.randint(2, 8)}",
                    "git push -u origin HEAD",
                )
            )
            return c, ch(("Show working tree status", "Show diff", "Commit changes", "Show recent commits")), "git"
        if x < 0.5:
            if lang == "python":
                c = ch(
                    (
                        f"pytest {self.relpath()} -x -q",
                        "pytest -q",
                        f"python -m pytest -k {self.ident().split('.')[0]} -x",
                        "uv run pytest tests/ -q",
                        f"ruff check {self.relpath()}",
                        "mypy src/",
                        f"python -m {self.ident().split('.')[0]} --help",
                        f"pip install {ch(PY_PKGS)}",
                    )
                )
            elif lang == "ts":
                c = ch(
                    (
                        "npm test",
                        "npm run build",
                        f"npx vitest run {self.relpath()}",
                        "npm run lint",
                        f"npm install {ch(JS_PKGS)}",
                        "pnpm tsc --noEmit",
                        f"node {self.relpath()}",
                        "npm run dev",
                    )
                )
            elif lang == "go":
                c = ch(
                    (
                        "go test ./...",
                        f"go test ./internal/{self.word()}/... -run Test{_pascal([self.word()])}",
                        "go build ./...",
                        "go vet ./...",
                        f"go get {ch(GO_PKGS)}",
                    )
                )
            else:
                c = ch(
                    (
                        "cargo test",
                        "cargo build --release",
                        "cargo clippy -- -D warnings",
                        f"cargo test {self.ident().split('.')[0].lower()}",
                        f"cargo add {ch(RS_PKGS)}",
                    )
                )
            return c, ch(("Run tests", "Run the test suite", "Build", "Type-check", "Lint")), _LANG_FLAVOURS[lang]
        if x < 0.62:
            c = ch(
                (
                    "docker compose up -d --build",
                    "docker compose logs --tail=200 api",
                    f"docker build -t {P.name.lower()}:dev .",
                    "docker ps -a",
                    f"docker compose exec db psql -U postgres -c 'select count(*) from {self.word()}'",
                )
            )
            return c, "Docker", "docker"
        if x < 0.72 and lang == "ts":
            return ch(("npm ls", "npm outdated", "npx prettier --check src")), "npm", "npm"
        c = ch(
            (
                f"ls -la {self.relpath().rsplit('/', 1)[0] if '/' in self.relpath() else '.'}",
                f"grep -rn \"{self.ident()}\" src/",
                f"cat {self.relpath()}",
                f"wc -l {self.relpath()}",
                f"find . -name '*.{_EXT[lang]}' | head -50",
                f"curl -s http://localhost:{self.randint(3000, 9000)}/{self.word()}",
                f"make {ch(('test', 'build', 'lint', 'dev', 'clean'))}",
                f"tail -n 100 logs/{self.word()}.log",
                f"rg '{self.ident()}' -n",
                f"sed -n '{self.randint(1, 200)},+40p' {self.relpath()}",
            )
        )
        return c, ch(("List files", "Search the code", "Show file", "Check logs", "")), "generic"

    def result_size(self) -> int:
        x = self.r()
        if x < 0.7:
            return 40 + int(self.r() * 960)
        if x < 0.95:
            return int(1000 * math.exp(self.r() * 2.3))
        return 10_000 + int(self.r() * 40_000)

    def user_prompt_text(self) -> str:
        x = self.r()
        ri = self.randint
        if x < 0.25:
            return self.prose(ri(5, 40))
        if x < 0.31:
            return self.choice(
                (
                    "continue",
                    "yes do it",
                    "go ahead",
                    "ok",
                    "commit this",
                    "run the tests",
                    "looks good, ship it",
                    "try again",
                    "revert that",
                    "why?",
                )
            )
        if x < 0.37:
            return f"I'm getting this error:\n\n```\n{self.traceback()}\n```\n\n{self.prose(ri(5, 30))}"
        if x < 0.47:
            return f"fix the failing test in {self.relpath()} — {self.prose(ri(5, 25))}"
        if x < 0.56:
            return f"why does `{self.ident()}` {self.prose(ri(4, 20))}"
        if x < 0.63:
            return f"rename {self.ident()} to {self.ident()} everywhere and update the tests"
        if x < 0.71:
            return f"add {self.phrase()} to {self.relpath()}. {self.prose(ri(5, 40))}"
        if x < 0.77:
            return f"look at {self.url()} and {self.prose(ri(5, 25))}"
        if x < 0.83:
            return f"explain how {self.phrase()} works in this codebase, especially {self.ident()}"
        if x < 0.88:
            return f"{self.prose(ri(30, 250))}\n\n{self.prose(ri(20, 120))}"
        if x < 0.92:
            return (
                f"here's the log:\n\n{self.logs(self.shell()[2], self.result_size() // 3)}\n\n{self.prose(ri(5, 20))}"
            )
        return f"refactor {self.abspath()} so that {self.prose(ri(8, 40))}"

    def url(self) -> str:
        h = self.choice(self.u.hosts)
        if h == "github.com":
            return f"https://github.com/{self.word()}/{self.word()}/issues/{self.randint(1, 9000)}"
        if h == "stackoverflow.com/questions":
            return f"https://stackoverflow.com/questions/{self.randint(10**6, 8 * 10**7)}/{self.phrase().replace(' ', '-')}"
        return f"https://{h}/{self.word()}{'.html' if self.r() < 0.3 else ''}"

    def assistant_text(self, final: bool) -> str:
        x = self.r()
        ri = self.randint
        if not final:
            if x < 0.55:
                return (
                    self.choice(("Let me ", "I'll ", "Now let me ", "Next, I'll ", "First, let me "))
                    + self.choice(("check ", "look at ", "read ", "run ", "search for ", "update "))
                    + self.choice((self.relpath(), f"`{self.ident()}`", "the tests", self.phrase()))
                    + "."
                )
            if x < 0.85:
                return self.prose(ri(8, 60))
            return f"The issue is in `{self.ident()}`: {self.prose(ri(15, 80))}"
        if x < 0.3:
            return f"Done. {self.prose(ri(10, 60))}"
        if x < 0.6:
            bullets = "\n".join(
                f"- **{self.ident()}** ({self.relpath()}): {self.prose(ri(6, 25))}" for _ in range(ri(2, 6))
            )
            return f"{self.prose(ri(8, 30))}\n\n{bullets}\n\n{self.prose(ri(5, 25))}"
        if x < 0.8:
            lang = {"python": "python", "ts": "typescript", "go": "go", "rust": "rust"}[self.P.lang]
            return f"{self.prose(ri(10, 50))}\n\n```{lang}\n{self.code(ri(3, 25))}\n```\n\n{self.prose(ri(5, 40))}"
        return self.prose(ri(20, 200))

    # -- line emission -----------------------------------------------------------------

    def count(self, kind: str) -> None:
        k = self.kinds
        k[kind] = k.get(kind, 0) + 1

    def msg(self) -> None:
        """Reserve one indexable message; stop the session when the budget is spent."""
        if self.left <= 0:
            raise _Stop
        self.left -= 1

    def tick(self, lo: int, hi: int) -> str:
        self.t += lo + int(self.r() * (hi - lo))
        return _iso(self.t)

    def emit(self, d: dict, kind: str) -> None:
        self.out.append(_dumps(d))
        self.count(kind)

    def envelope_line(self, body: dict, kind: str, ts_lo: int = 5, ts_hi: int = 80) -> str:
        """Chain a uuid-bearing line (parentUuid ... gitBranch), return its uuid."""
        u = self.uuid()
        d = {"parentUuid": self.parent, "isSidechain": self.side}
        d.update(body)
        d["uuid"] = u
        d["timestamp"] = self.tick(ts_lo, ts_hi)
        d.update(self.tail)
        self.parent = u
        self.emit(d, kind)
        return u

    def user_line(self, content: Any, kind: str, extra: dict | None = None, meta: bool = False) -> str:
        u = self.uuid()
        d = {"parentUuid": self.parent, "isSidechain": self.side}
        if self.agent_id:
            d["agentId"] = self.agent_id
        if self.prompt_id and not meta:
            d["promptId"] = self.prompt_id
        d["type"] = "user"
        d["message"] = {"role": "user", "content": content}
        if meta:
            d["isMeta"] = True
        d["uuid"] = u
        d["timestamp"] = self.tick(200, 4000) if kind == "tool_result" else self.tick(20, 900)
        if extra:
            d.update(extra)
        elif kind == "user_prompt" and not self.side:
            d["permissionMode"] = self.perm
        d.update(self.tail)
        self.parent = u
        self.emit(d, kind)
        return u

    def assistant_line(self, block: dict, kind: str) -> str:
        u = self.uuid()
        d = {"parentUuid": self.parent, "isSidechain": self.side}
        if self.agent_id:
            d["agentId"] = self.agent_id
        d["message"] = {
            "id": self.msg_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": self.usage,
            "content": [block],
            "stop_details": None,
        }
        d["requestId"] = self.req_id
        d["type"] = "assistant"
        d["uuid"] = u
        d["timestamp"] = self.tick(300, 6000)
        d.update(self.tail)
        self.parent = u
        self.emit(d, kind)
        return u

    def new_response(self, stop_reason: str) -> None:
        self.msg_id = "msg_01" + _b62(self.bits, 22)
        self.req_id = "req_011C" + _b62(self.bits, 20)
        self.stop_reason = stop_reason
        ri = self.randint
        cr = ri(0, 4000)
        self.usage = {
            "input_tokens": ri(1, 60),
            "cache_creation_input_tokens": cr,
            "cache_read_input_tokens": ri(8000, 160000),
            "output_tokens": ri(5, 2500),
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": cr},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
        }

    def attachment(self, att: dict) -> None:
        self.envelope_line({"attachment": att, "type": "attachment"}, "attachment:" + att["type"], 0, 3)

    def progress(self, tool_id: str, tool: str) -> None:
        if self.r() < 0.5:
            data = {
                "type": "hook_progress",
                "hookEvent": "PostToolUse",
                "hookName": f"PostToolUse:{tool}",
                "command": self.choice(
                    (
                        "npx prettier --write \"$CLAUDE_FILE_PATHS\"",
                        "ruff format",
                        "~/.claude/hooks/log-tool.sh",
                        "recall hook post-tool",
                    )
                ),
            }
        else:
            out = self.logs("generic", 200)
            data = {
                "type": "bash_progress",
                "output": out,
                "fullOutput": out,
                "elapsedTimeSeconds": self.randint(1, 60),
                "totalLines": out.count("\n") + 1,
            }
        u = self.uuid()
        d = {
            "parentUuid": self.parent,
            "isSidechain": self.side,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": self.branch,
            "type": "progress",
            "data": data,
            "toolUseID": tool_id,
            "parentToolUseID": tool_id,
            "uuid": u,
            "timestamp": self.tick(50, 900),
        }
        self.parent = u
        self.emit(d, "progress")

    def system(self, subtype: str) -> None:
        d = {
            "parentUuid": self.parent,
            "isSidechain": self.side,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": self.branch,
            "type": "system",
            "subtype": subtype,
        }
        if subtype == "turn_duration":
            d["durationMs"] = self.randint(2000, 600000)
            d["isMeta"] = False
        elif subtype == "stop_hook_summary":
            d.update(
                {
                    "hookCount": 1,
                    "hookInfos": [{"command": "recall hook stop"}],
                    "hookErrors": [],
                    "preventedContinuation": False,
                    "stopReason": "",
                    "hasOutput": False,
                    "level": "suggestion",
                }
            )
        elif subtype == "compact_boundary":
            d.update(
                {
                    "content": "Conversation compacted",
                    "isMeta": False,
                    "level": "info",
                    "compactMetadata": {"trigger": "auto", "preTokens": self.randint(150000, 190000)},
                }
            )
        else:
            d.update(
                {
                    "content": f"API Error: {self.choice(('529 Overloaded', 'Request timed out', '500 Internal server error'))}",
                    "level": "error",
                    "isMeta": False,
                }
            )
        u = self.uuid()
        d["uuid"] = u
        d["timestamp"] = self.tick(10, 500)
        self.parent = u
        self.emit(d, "system:" + subtype)

    # -- tools -------------------------------------------------------------------------

    def tool_call(self) -> tuple[str, dict, Any]:
        """Pick a tool; return (name, input, builder-of-result)."""
        x = self.r()
        P = self.P
        if x < 0.34:
            cmd, desc, flavour = self.shell()
            inp = {"command": cmd, "description": desc} if desc else {"command": cmd}
            if self.r() < 0.05:
                inp["timeout"] = 600000
            return "Bash", inp, ("bash", flavour)
        if x < 0.56:
            inp = {"file_path": self.abspath()}
            if self.r() < 0.15:
                inp["offset"] = self.randint(1, 400)
                inp["limit"] = self.choice((50, 100, 200))
            return "Read", inp, ("read",)
        if x < 0.70:
            old = self.code(self.randint(1, 6))
            new = self.code(self.randint(1, 10))
            return (
                "Edit",
                {"file_path": self.abspath(), "old_string": old, "new_string": new, "replace_all": self.r() < 0.05},
                ("edit",),
            )
        if x < 0.75:
            return "Write", {"file_path": self.abspath(), "content": self.code(self.randint(5, 120))}, ("write",)
        if x < 0.85:
            inp = {
                "pattern": self.choice(
                    (
                        self.ident(),
                        f"def {self.ident()}",
                        f"{self.ident()}\\(",
                        f"class \\w+{self.ident()}",
                        self.word(),
                    )
                )
            }
            if self.r() < 0.6:
                inp["path"] = f"{P.root}/{self.choice(('src', 'tests', 'lib', 'app', 'internal'))}"
            inp["output_mode"] = self.choice(("files_with_matches", "content", "content", "count"))
            if self.r() < 0.3:
                inp["glob"] = f"*.{_EXT[P.lang]}"
            return "Grep", inp, ("grep",)
        if x < 0.91:
            inp = {
                "pattern": self.choice(
                    (f"**/*.{_EXT[P.lang]}", f"src/**/*{self.word()}*", "**/test_*.py", "**/*.test.ts", "**/Dockerfile")
                )
            }
            if self.r() < 0.5:
                inp["path"] = P.root
            return "Glob", inp, ("glob",)
        if x < 0.95:
            return "WebFetch", {"url": self.url(), "prompt": self.prose(self.randint(6, 20))}, ("web",)
        return (
            "Task",
            {
                "description": " ".join(self.vtbl[self.bits(18)] for _ in range(3)).capitalize(),
                "prompt": self.prose(self.randint(20, 160)),
                "subagent_type": self.choice(SUBAGENT_TYPES),
            },
            ("task",),
        )

    def tool_result(self, tool_id: str, name: str, inp: dict, how: tuple, src_uuid: str) -> None:
        kind = how[0]
        err = self.r() < 0.06
        P = self.P
        tur: Any
        if err and kind != "task":
            text = self.choice(
                (
                    f"<tool_use_error>File does not exist. Current working directory: {self.cwd}</tool_use_error>",
                    f"Exit code 1\n{self.traceback()}",
                    f"Exit code {self.randint(1, 2)}\n{self.logs(how[1] if kind == 'bash' else 'generic', self.result_size())}",
                    "<tool_use_error>String to replace not found in file.\nString: "
                    + inp.get("old_string", "")[:400]
                    + "</tool_use_error>",
                )
            )
            tur = "Error: " + text[:300]
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": True}
        elif kind == "bash":
            size = self.result_size()
            out = self.logs(how[1], size)
            if how[1] in ("pytest", "npm") and self.r() < 0.25:
                out += "\n" + self.traceback()
            text = out
            tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": False}
        elif kind == "read":
            n = max(3, self.result_size() // 45)
            start = inp.get("offset", 1)
            lines = self.runs(self.u.code[P.lang], n)
            body = "\n".join(f"{i + start:>6}→{ln}" for i, ln in enumerate(lines))
            text = body
            tur = {
                "type": "text",
                "file": {
                    "filePath": inp["file_path"],
                    "content": "\n".join(lines),
                    "numLines": n,
                    "startLine": start,
                    "totalLines": n + start + self.randint(0, 300),
                },
            }
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        elif kind == "edit":
            text = f"The file {inp['file_path']} has been updated successfully."
            tur = {
                "filePath": inp["file_path"],
                "oldString": inp["old_string"],
                "newString": inp["new_string"],
                "originalFile": self.code(self.randint(10, 80)),
                "structuredPatch": [
                    {
                        "oldStart": self.randint(1, 300),
                        "oldLines": 3,
                        "newStart": 1,
                        "newLines": 4,
                        "lines": ["-" + inp["old_string"][:200], "+" + inp["new_string"][:200]],
                    }
                ],
                "userModified": False,
                "replaceAll": inp["replace_all"],
            }
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        elif kind == "write":
            text = (
                f"File created successfully at: {inp['file_path']} (file state is current in your "
                "context — no need to Read it back)"
            )
            tur = {
                "type": "create",
                "filePath": inp["file_path"],
                "content": inp["content"],
                "structuredPatch": [],
                "originalFile": None,
                "userModified": False,
            }
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        elif kind == "grep":
            files = list(dict.fromkeys(self.abspath() for _ in range(self.randint(0, 14))))
            if inp.get("output_mode") == "content" and files:
                lines = [
                    f"{f}:{self.randint(1, 800)}:{self.choice(self.u.code[P.lang])}"
                    for f in files
                    for _ in range(self.randint(1, 4))
                ]
                text = "\n".join(lines)
                tur = {"mode": "content", "numFiles": 0, "filenames": [], "content": text, "numLines": len(lines)}
            elif inp.get("output_mode") == "count":
                text = "\n".join(f"{f}:{self.randint(1, 40)}" for f in files) or "No matches found"
                tur = {"mode": "count", "numFiles": len(files), "filenames": [], "content": text}
            else:
                text = (f"Found {len(files)} files\n" + "\n".join(files)) if files else "No files found"
                tur = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        elif kind == "glob":
            files = list(dict.fromkeys(self.abspath() for _ in range(self.randint(0, 60))))
            text = "\n".join(files) if files else "No files found"
            tur = {"filenames": files, "durationMs": self.randint(3, 400), "numFiles": len(files), "truncated": False}
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        elif kind == "web":
            size = self.result_size()
            paras = []
            n = 0
            while n < size:
                p = ("# " if self.r() < 0.15 else "") + self.prose(self.randint(20, 90))
                paras.append(p)
                n += len(p)
            text = "\n\n".join(paras)
            tur = {
                "bytes": len(text) * 3,
                "code": 200,
                "codeText": "OK",
                "result": text,
                "durationMs": self.randint(300, 9000),
                "url": inp["url"],
            }
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        else:  # task: run a subagent, then return its report
            agent_id, answer = self.subagent(inp)
            content = [{"type": "text", "text": answer}]
            tur = {
                "status": "completed",
                "prompt": inp["prompt"],
                "agentId": agent_id,
                "content": content,
                "totalDurationMs": self.randint(5000, 400000),
                "totalTokens": self.randint(5000, 90000),
                "totalToolUseCount": self.randint(1, 40),
            }
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        self.user_line([block], "tool_result", {"toolUseResult": tur, "sourceToolAssistantUUID": src_uuid})

    # -- conversation structure --------------------------------------------------------

    def response(self, final_only: bool = False) -> bool:
        """One assistant turn: steps of (thinking?) (text?) tool_use+ → results, then a
        final text. Returns False if the user interrupted."""
        steps = 0 if final_only else min(40, int(self.rng.paretovariate(1.1)) - 1 + (self.r() < 0.6))
        for _ in range(steps):
            if self.left < 3:
                break
            self.new_response("tool_use")
            if self.r() < 0.12:
                self.assistant_line({"type": "thinking", "thinking": "", "signature": _b62(self.bits, 80)}, "thinking")
            if self.r() < 0.55:
                self.msg()
                self.assistant_line({"type": "text", "text": self.assistant_text(False)}, "assistant_text")
            ntools = 1 if self.r() < 0.8 else self.randint(2, 4)
            ntools = max(0, min(ntools, self.left // 2))
            if not ntools:
                break
            calls = []
            for _ in range(ntools):
                name, inp, how = self.tool_call()
                if name == "Task" and (self.side or self.left < 12):
                    name, inp, how = (
                        "Bash",
                        {"command": "git status", "description": "Show working tree status"},
                        ("bash", "git"),
                    )
                tid = "toolu_01" + _b62(self.bits, 22)
                self.msg()
                src = self.assistant_line({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use")
                calls.append((tid, name, inp, how, src))
            rejected = False
            for j, (tid, name, inp, how, src) in enumerate(calls):
                self.pending = len(calls) - j - 1  # results still owed after this one
                self.msg()
                if rejected or self.r() < 0.012:  # the user rejects the call (and the rest)
                    rejected = True
                    self.user_line(
                        [{"type": "tool_result", "content": REJECT, "is_error": True, "tool_use_id": tid}],
                        "tool_result",
                        {"toolUseResult": "User rejected tool use", "sourceToolAssistantUUID": src},
                    )
                    continue
                self.tool_result(tid, name, inp, how, src)
                if not self.side and self.r() < 0.08:
                    self.progress(tid, name)
            if rejected:
                self.user_line([{"type": "text", "text": INTERRUPT_TOOL}], "user_interrupt")
                return False
            if self.r() < 0.01:
                self.user_line([{"type": "text", "text": INTERRUPT}], "user_interrupt")
                return False
        self.msg()
        self.new_response("end_turn")
        if self.r() < 0.08:
            self.assistant_line({"type": "thinking", "thinking": "", "signature": _b62(self.bits, 80)}, "thinking")
        self.last_text = self.assistant_text(True)
        self.assistant_line({"type": "text", "text": self.last_text}, "assistant_text")
        return True

    def recalled_context(self) -> str:
        items = []
        for _ in range(self.randint(1, 4)):
            src = self.choice(self.recent_texts) if self.recent_texts else self.prose(30)
            day = _iso(self.t - self.randint(1, 60) * DAY_MS)[:10]
            items.append(f"[{day} · {self.P.name} · session {self.uuid()[:8]}] {src[:400]}")
        return "<recalled-context>\n" + "\n\n".join(items) + "\n</recalled-context>"

    def turn(self, first: bool) -> None:
        r = self.r
        if self.left <= 0:
            raise _Stop
        if not first and r() < 0.05:  # a local slash command, no model turn
            cmd = self.choice(SLASH)
            self.prompt_id = None
            self.user_line(META_CAVEAT, "user_meta", meta=True)
            self.user_line(
                f"<command-name>/{cmd}</command-name>\n            <command-message>{cmd}"
                f"</command-message>\n            <command-args></command-args>",
                "user_command",
            )
            self.user_line(
                f"<local-command-stdout>{self.prose(self.randint(3, 12)) if r() < 0.5 else ''}</local-command-stdout>",
                "user_command",
            )
            return
        if r() < 0.02 and not first:
            self.perm = self.choice(("default", "acceptEdits", "plan", "bypassPermissions"))
            self.emit(
                {"type": "permission-mode", "permissionMode": self.perm, "sessionId": self.sid}, "permission-mode"
            )
        text = self.user_prompt_text()
        self.t += self.randint(5_000, 900_000)
        if r() < 0.3:
            ts = _iso(self.t)
            self.emit(
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "timestamp": ts,
                    "sessionId": self.sid,
                    "content": text,
                },
                "queue-operation",
            )
            self.emit(
                {"type": "queue-operation", "operation": "dequeue", "timestamp": ts, "sessionId": self.sid},
                "queue-operation",
            )
        self.prompt_id = self.uuid()
        self.msg()
        self.last_prompt = text
        content: Any = text if r() < 0.93 else [{"type": "text", "text": text}]
        prompt_uuid = self.user_line(content, "user_prompt")
        if r() < 0.85:
            self.emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": prompt_uuid,
                    "snapshot": {"messageId": prompt_uuid, "trackedFileBackups": {}, "timestamp": _iso(self.t)},
                    "isSnapshotUpdate": False,
                },
                "file-history-snapshot",
            )
        if first:
            self.attachment(
                {
                    "type": "agent_listing_delta",
                    "addedTypes": AGENT_TYPES,
                    "addedLines": AGENT_LINES,
                    "removedTypes": [],
                    "isInitial": True,
                    "showConcurrencyNote": True,
                }
            )
            self.attachment(
                {
                    "type": "skill_listing",
                    "content": SKILL_LISTING,
                    "skillCount": len(SKILL_NAMES),
                    "isInitial": True,
                    "names": SKILL_NAMES,
                }
            )
        if r() < 0.45:  # recall's own UserPromptSubmit hook injecting context
            self.attachment(
                {
                    "type": "hook_additional_context",
                    "content": [self.recalled_context()],
                    "hookName": "UserPromptSubmit",
                    "toolUseID": self.uuid(),
                    "hookEvent": "UserPromptSubmit",
                }
            )
        x = r()
        if x < 0.06:
            self.attachment({"type": "opened_file_in_ide", "filename": self.abspath()})
        elif x < 0.09:
            self.attachment(
                {"type": "edited_text_file", "filename": self.abspath(), "snippet": self.code(self.randint(2, 8))}
            )
        if len(self.recent_texts) < 64:
            self.recent_texts.append(text[:400])
        else:
            self.recent_texts[int(r() * 64)] = text[:400]
        ok = self.response()
        if ok and r() < 0.3:
            self.system("turn_duration")
        if r() < 0.05:
            self.system("stop_hook_summary")
        if r() < 0.004:
            self.system("api_error")

    def setup_session(
        self, P: Project, sid: str, start_ms: int, side: bool = False, agent_id: str | None = None
    ) -> None:
        self.P = P
        self.sid = sid
        self.t = start_ms
        self.side = side
        self.agent_id = agent_id
        self.parent = None
        self.prompt_id = None
        self.out: list[bytes] = []
        self.perm = "default" if self.r() < 0.8 else "acceptEdits"
        age_days = max(0, (self.end_ms - start_ms) // DAY_MS)
        self.version = f"2.1.{max(100, 197 - int(age_days))}"
        self.tail = {
            "userType": "external",
            "entrypoint": self.entrypoint,
            "cwd": self.cwd,
            "sessionId": sid,
            "version": self.version,
            "gitBranch": self.branch,
        }

    def write_file(self, path: Path) -> None:
        data = b"\n".join(self.out) + b"\n"
        parent = str(path.parent)
        if parent not in self.dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.dirs.add(parent)
        with open(path, "wb") as fh:
            fh.write(data)
        st = self.stats
        st.files += 1
        st.lines += len(self.out)
        st.bytes += len(data)

    def subagent(self, task_input: dict) -> tuple[str, str]:
        """Write a subagent transcript for a Task call; return (agentId, final report)."""
        agent_id = "a" + "%016x" % self.bits(64)
        budget = min(self.left - 1 - self.pending, 4 + int(self.rng.lognormvariate(2.8, 0.8)))
        if budget < 3:  # no room left for a subagent conversation: it "failed" quickly
            return agent_id, self.prose(self.randint(10, 40))
        self.left -= budget
        saved = (
            self.P,
            self.sid,
            self.t,
            self.side,
            self.agent_id,
            self.parent,
            self.prompt_id,
            self.out,
            self.perm,
            self.version,
            self.tail,
            self.left,
            self.last_prompt,
        )
        self.setup_session(self.P, self.sid, self.t + 500, side=True, agent_id=agent_id)
        self.left = budget
        self.prompt_id = None
        self.last_text = ""
        try:
            self.msg()
            self.user_line(task_input["prompt"], "user_prompt")
            while self.left > 0:
                self.response()
        except _Stop:
            pass
        leftover = self.left
        path = self.root / encode_cwd(self.cwd) / self.sid / "subagents" / f"agent-{agent_id}.jsonl"
        self.write_file(path)
        self.stats.subagent_files += 1
        answer = self.last_text or self.prose(40)
        end_t = self.t
        (
            self.P,
            self.sid,
            self.t,
            self.side,
            self.agent_id,
            self.parent,
            self.prompt_id,
            self.out,
            self.perm,
            self.version,
            self.tail,
            self.left,
            self.last_prompt,
        ) = saved
        self.left += leftover
        self.t = max(self.t, end_t)
        return agent_id, answer

    def session(self, n: int) -> None:
        P = self.pz.tbl[self.bits(self.pbits)]
        self.P = P
        self.cwd = self.choice(P.cwds)
        self.branch = self.choice(P.branches) if self.r() < 0.5 else P.branches[0]
        self.entrypoint = self.choice(ENTRYPOINTS)
        self.model = self.choice(MODELS)
        span = 90 * DAY_MS
        start = self.end_ms - int(span * (self.r() ** 1.25)) - self.randint(3_600_000, 4 * 3_600_000)
        sid = self.uuid()
        self.setup_session(P, sid, start)
        self.left = n
        self.last_text = ""
        self.last_prompt = ""
        try:
            if n > 8 and self.r() < 0.12:  # leading summaries (resumed/continued sessions)
                for _ in range(self.randint(1, 3)):
                    self.msg()
                    self.emit({"type": "summary", "summary": self.summary_text(), "leafUuid": self.uuid()}, "summary")
            first = True
            while True:
                self.turn(first)
                first = False
                if self.left > 50 and self.r() < 0.01:
                    self.system("compact_boundary")
        except _Stop:
            pass
        self.emit(
            {"type": "last-prompt", "lastPrompt": self.last_prompt[:200], "leafUuid": self.parent, "sessionId": sid},
            "last-prompt",
        )
        self.write_file(self.root / encode_cwd(self.cwd) / f"{sid}.jsonl")
        self.stats.sessions += 1

    def summary_text(self) -> str:
        words = " ".join(self.choices(self.u.content_words[:800], k=self.randint(2, 4)))
        return self.choice(
            (
                f"Fix {self.phrase()} in {self.relpath()}",
                f"Refactor {self.ident()} {words}",
                f"Add {self.phrase()} support",
                f"Debug {self.phrase()} {words}",
                f"{words.capitalize()} for {self.ident()}",
            )
        )

    def run(self, messages: int) -> GenStats:
        remaining = messages
        while remaining > 0:
            n = max(5, min(2000, int(self.rng.lognormvariate(4.0, 1.2))))
            if remaining - n < 5:
                n = remaining
            self.session(n)
            remaining -= n - self.left  # left is 0 unless the session ended early
        st = self.stats
        st.kinds = dict(sorted(self.kinds.items()))
        st.messages = sum(self.kinds.get(k, 0) for k in MESSAGE_KINDS)
        return st


def default_end() -> datetime:
    now = datetime.now(timezone.utc)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def default_projects(messages: int) -> int:
    return max(3, messages // 5000)


def generate(
    root: Path, messages: int, seed: int = 0, projects: int | None = None, end: datetime | None = None
) -> GenStats:
    """Write a corpus of ``messages`` indexable messages under ``root``; see module doc."""
    t0 = time.perf_counter()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    u = Universe(seed)
    nproj = projects if projects is not None else default_projects(messages)
    projs = make_projects(u, max(1, nproj))
    end_ms = int((end or default_end()).timestamp() * 1000)
    g = _Gen(root, u, seed, projs, end_ms)
    st = g.run(messages)
    stamp_mtimes(root)
    st.seconds = round(time.perf_counter() - t0, 3)
    return st


def stamp_mtimes(root: Path) -> int:
    """Give every transcript the modification time of its last line, as a history written over
    90 days has (a backfill reads the newest files first). Returns the files stamped."""
    n = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if not name.endswith(".jsonl"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                fh.seek(max(0, os.fstat(fh.fileno()).st_size - 65536))
                tail = fh.read()
            for line in reversed(tail.splitlines()):
                m = re.search(rb'"timestamp": ?"([^"]+)"', line)
                if m:
                    ts = datetime.fromisoformat(m.group(1).decode().replace("Z", "+00:00")).timestamp()
                    os.utime(path, (ts, ts))
                    n += 1
                    break
    return n


# --------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------


def query_set(seed: int = 0) -> list[dict]:
    """~60 benchmark queries drawn from the universe of ``seed`` (see module doc)."""
    u = Universe(seed)
    rng = random.Random(f"recall-bench:queries:{seed}")
    projs = make_projects(u, 3)
    out: list[dict] = []
    cw = [w for w in u.content_words[:900] if w not in ENGLISH]
    for i in range(16):  # keywords: common technical words, half with a rarer one
        k = rng.choice((2, 2, 3))
        words = rng.sample(cw[20:500], k)
        if i % 2:
            words[-1] = rng.choice(cw[500:900])
        out.append({"kind": "keywords", "text": " ".join(words)})
    for p in rng.sample(u.phrases.head(60), 10):
        out.append({"kind": "phrase", "text": f'"{p}"'})
    heads = u.idents.head(150)
    styles = {
        "snake": [i for i in heads if "_" in i and i.islower()],
        "camel": [i for i in heads if i[:1].islower() and any(c.isupper() for c in i)],
        "dotted": [i for i in heads if "." in i],
        "pascal": [i for i in heads if i[:1].isupper() and "_" not in i],
    }
    for style, n in (("snake", 4), ("camel", 4), ("dotted", 2), ("pascal", 2)):
        pool = styles[style] or heads
        for x in rng.sample(pool, min(n, len(pool))):
            out.append({"kind": "identifier", "text": x})
    used: dict[str, None] = {}
    for i in range(12):  # frequent source paths of projects 0-2, some absolute
        P = projs[i % 3]
        pool = [p for p in P.paths.head(40) if "/" in p and not p.startswith(".") and p not in used]
        p = rng.choice(pool[:15] or P.paths.items)
        used[p] = None
        out.append({"kind": "path", "text": f"{P.root}/{p}" if i % 4 == 3 else p})
    g = _Gen(Path("."), u, seed + 7919, projs, 0)
    g.rng.seed(f"recall-bench:queries:long:{seed}")
    for i in range(10):
        g.P = projs[i % 3]
        g.cwd = g.P.root
        body = g.traceback()
        while len(body) < 900:
            body += "\n" + g.traceback()
        text = f"{g.prose(rng.randint(10, 40))}\n\n```\n{body[:2600]}\n```\n\n{g.prose(rng.randint(10, 60))}"
        out.append({"kind": "long", "text": text})
    return out


# --------------------------------------------------------------------------------------
# Reference extraction (the counting rules of the module doc)
# --------------------------------------------------------------------------------------

_SALIENT = (
    "command",
    "description",
    "file_path",
    "pattern",
    "path",
    "url",
    "prompt",
    "old_string",
    "new_string",
    "content",
    "glob",
)
_FILE_KEYS = ("file_path", "path", "pattern", "glob", "url")


def _is_noise_prompt(text: str) -> bool:
    s = text.lstrip()
    return (
        s.startswith("<command-name>")
        or s.startswith("<command-message>")
        or s.startswith("<local-command-stdout>")
        or s.startswith("<local-command-stderr>")
        or s.startswith("[Request interrupted by user")
    )


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def iter_file_messages(path: Path) -> Iterator[dict]:
    """Indexable messages of one transcript as FTS5Store rows (+ ``kind``)."""
    rows: list[dict] = []
    tools: dict[str, tuple[str, str]] = {}
    cwd = ""
    sid = path.stem
    if path.parent.name == "subagents":
        sid = path.parent.parent.name
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                d = json.loads(raw)
            except ValueError:
                continue
            t = d.get("type")
            cwd = cwd or d.get("cwd", "")
            if t == "summary":
                rows.append(
                    {
                        "uuid": f"summary:{d.get('leafUuid')}",
                        "session_id": sid,
                        "project": None,
                        "role": "summary",
                        "timestamp": "",
                        "content": d.get("summary", ""),
                        "tools": "",
                        "files": "",
                        "kind": "summary",
                    }
                )
                continue
            if t not in ("user", "assistant") or d.get("isMeta"):
                continue
            msg = d.get("message") or {}
            content = msg.get("content")
            base = {
                "session_id": d.get("sessionId", sid),
                "project": d.get("cwd", ""),
                "timestamp": d.get("timestamp", ""),
            }
            uid = d.get("uuid", "")
            if isinstance(content, str):
                if t == "user" and not _is_noise_prompt(content):
                    rows.append(
                        {
                            **base,
                            "uuid": uid,
                            "role": "user",
                            "content": content,
                            "tools": "",
                            "files": "",
                            "kind": "user_prompt",
                        }
                    )
                continue
            if not isinstance(content, list):
                continue
            for j, b in enumerate(content):
                if not isinstance(b, dict):
                    continue
                bt = b.get("type")
                u2 = uid if len(content) == 1 else f"{uid}:{j}"
                if bt == "text":
                    text = b.get("text", "")
                    if not text or (t == "user" and _is_noise_prompt(text)):
                        continue
                    rows.append(
                        {
                            **base,
                            "uuid": u2,
                            "role": msg.get("role", t),
                            "content": text,
                            "tools": "",
                            "files": "",
                            "kind": "user_prompt" if t == "user" else "assistant_text",
                        }
                    )
                elif bt == "tool_use":
                    inp = b.get("input") or {}
                    name = b.get("name", "")
                    files = " ".join(str(inp[k]) for k in _FILE_KEYS if k in inp)
                    tools[b.get("id", "")] = (name, files)
                    text = "\n".join(str(inp[k]) for k in _SALIENT if k in inp)
                    rows.append(
                        {
                            **base,
                            "uuid": u2,
                            "role": "assistant",
                            "content": text,
                            "tools": name,
                            "files": files,
                            "kind": "tool_use",
                        }
                    )
                elif bt == "tool_result":
                    name, files = tools.get(b.get("tool_use_id", ""), ("", ""))
                    rows.append(
                        {
                            **base,
                            "uuid": u2,
                            "role": "tool",
                            "content": _tool_result_text(b.get("content")),
                            "tools": name,
                            "files": files,
                            "kind": "tool_result",
                        }
                    )
    for r in rows:
        if not r["project"]:
            r["project"] = cwd
    yield from rows


def iter_messages(root: Path) -> Iterator[dict]:
    """Indexable messages of every transcript under ``root`` (sorted walk)."""
    for path in sorted(Path(root).rglob("*.jsonl")):
        yield from iter_file_messages(path)


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--projects", type=int, default=None)
    ap.add_argument("--end", default=None, help="ISO date/time the corpus ends at (default: today 00:00 UTC)")
    ap.add_argument("--queries", action="store_true", help="print query_set(seed) instead of generating")
    a = ap.parse_args(argv)
    if a.queries:
        json.dump(query_set(a.seed), sys.stdout, indent=1, ensure_ascii=False)
        print()
        return 0
    end = None
    if a.end:
        end = datetime.fromisoformat(a.end.replace("Z", "+00:00"))
        if end.tzinfo is None:
            end = end.replace(tzinfo=timezone.utc)
    st = generate(a.out_dir, a.messages, seed=a.seed, projects=a.projects, end=end)
    print(json.dumps(st.to_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
