"""The typed settings of the prompt hook and of memory: ``HookSettings`` (the config's ``hook``
section) and ``MemorySettings`` (its ``memory`` section), each built once from the config
(``from_config``) with every value checked, and each the one home of its section's defaults:
``recall.core.config.DEFAULTS`` is made from them (``defaults()``), and every reader
(``recall.prompt``, ``recall.search.confidence``'s gates, the memory worker) takes its values
from here, never from a literal of its own.

Plain classes with ``__slots__``, not dataclasses: the prompt hook imports this module on every
prompt, and ``dataclasses`` imports ``inspect``. Standard library only (floor 1).
"""

from __future__ import annotations

import math

# the words of a whole prompt that only acknowledge (``hook.skip``; case/punctuation-insensitive)
ACKNOWLEDGEMENTS = (
    "yes",
    "y",
    "yep",
    "yeah",
    "yup",
    "no",
    "nope",
    "ok",
    "okay",
    "k",
    "kk",
    "sure",
    "continue",
    "go on",
    "go ahead",
    "proceed",
    "do it",
    "thanks",
    "thank you",
    "thx",
    "ty",
    "lgtm",
    "looks good",
    "sounds good",
    "perfect",
    "great",
    "nice",
    "cool",
    "done",
    "next",
    "retry",
    "try again",
    "again",
    "good",
    "fine",
    "approved",
    "ship it",
    "keep going",
    "carry on",
)

# (name, default): the ``hook`` section, in the order `recall config` shows it
HOOK_DEFAULTS = (
    ("budget_seconds", 5.0),  # the whole hook, process start to output
    ("max_chars", 3000),  # size of the injected block
    ("min_chars", 15),  # shorter prompts are trivial
    ("skip", ACKNOWLEDGEMENTS),  # whole-prompt acknowledgements (case/punctuation-insensitive)
    ("scope", "project"),  # project | all
    ("limit", 8),  # lexical hits handed to synthesis (the semantic channel adds at most semantic_sessions)
    ("min_confidence", 0.6),  # raw path: inject only hits this sure to bear on the prompt (recall.search.confidence)
    ("model_min_confidence", 0.25),  # model path: hand the synthesis hits this sure; it answers NONE for the rest
    ("raw_limit", 3),  # raw path: at most this many hits, one per past session
    ("semantic", True),  # model path: also hand the synthesis the sessions nearest in meaning (recall.search.semantic)
    ("semantic_min_similarity", 0.3),  # ... those at least this near the prompt (cosine)
    ("semantic_sessions", 3),  # ... at most this many past sessions of them
    ("ask_min_confidence", 0.4),  # model path: ask the model only when a hit is this sure ...
    ("ask_min_similarity", 0.35),  # ... or a past session is this near in meaning (benchmarks/call_gate.py)
    ("raw_max_chars", 1500),  # raw path: size of the injected block
    ("synthesize", True),  # False: always inject raw snippets
    ("background", True),  # the model writes its briefing while the prompt goes on (recall.prompt.ways)
    ("background_seconds", 20.0),  # ... for at most this long, from the prompt's start
    ("max_rules", 5),  # triggered rules injected per prompt (recall rules); 0: none
    ("stale_marks", True),  # mark hits whose files changed since (recall.search.stale)
)

# (name, default): the ``memory`` section
MEMORY_DEFAULTS = (
    ("enabled", True),  # False: the capture hooks queue nothing
    ("daily_call_cap", 200),  # extraction + consolidation calls per day
    ("claude_md", "claude_md"),  # claude_md | local | none (inject at SessionStart instead)
    ("idle_seconds", 60),  # a Stop is extracted once the transcript was quiet this long
    ("timeout_seconds", 60),  # one extraction / consolidation call
)

MEMORY_MODES = ("claude_md", "local", "none")  # memory.claude_md (recall.memory.briefing)
OFF = (False, "false", "off", 0)  # memory.enabled: these switch it off, anything else leaves it on


def _checked(default, value):
    """``value`` when it has the default's type (a number finite and not negative, a list's items
    as strings), else the default."""
    if isinstance(default, bool):
        return value if isinstance(value, bool) else default
    if isinstance(default, (int, float)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
        return value if ok else default
    if isinstance(default, tuple):
        return tuple(str(v) for v in value) if isinstance(value, list) else default
    if isinstance(default, str):
        return value if isinstance(value, str) else default
    return value


def _section(cfg: dict | None, name: str) -> dict:
    node = cfg.get(name) if isinstance(cfg, dict) else None
    return node if isinstance(node, dict) else {}


class _Settings:
    """A section's values as attributes (``hook.min_confidence``), also read by their setting's
    name (``hook["min_confidence"]``, as `recall config` names it). Built once, never changed."""

    __slots__ = ()
    DEFAULTS: tuple[tuple[str, object], ...] = ()

    @classmethod
    def defaults(cls) -> dict:
        """The section's defaults as the config file spells them (lists, not tuples)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in cls.DEFAULTS}

    def __getitem__(self, name: str):
        if name not in self.__slots__:
            raise KeyError(name)
        return getattr(self, name)

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in ((k, getattr(self, k)) for k in self.__slots__)}

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


class HookSettings(_Settings):
    """The prompt hook's settings (the config's ``hook`` section), every value checked: a value of
    the wrong type falls back to its default, a number with a range is clamped to it."""

    __slots__ = (*(k for k, _ in HOOK_DEFAULTS), "model")
    DEFAULTS = HOOK_DEFAULTS

    budget_seconds: float
    max_chars: int
    min_chars: int
    skip: tuple[str, ...]
    scope: str
    limit: int
    min_confidence: float
    model_min_confidence: float
    raw_limit: int
    semantic: bool
    semantic_min_similarity: float
    semantic_sessions: int
    ask_min_confidence: float
    ask_min_similarity: float
    raw_max_chars: int
    synthesize: bool
    background: bool
    background_seconds: float
    max_rules: int
    stale_marks: bool
    model: str | None  # hook.model: the syntheses' own model (unset: model.name); not in the defaults

    def __init__(self, **values) -> None:
        for key, default in HOOK_DEFAULTS:
            value = _checked(default, values.get(key, default))
            setattr(self, key, type(default)(value) if type(default) in (int, float) else value)
        self.max_chars = int(min(max(self.max_chars, 300), 9000))  # Claude Code caps at 10,000
        self.limit = int(min(max(self.limit, 1), 50))
        self.raw_limit = int(min(max(self.raw_limit, 1), 50))
        self.raw_max_chars = int(min(max(self.raw_max_chars, 300), self.max_chars))
        self.semantic_sessions = int(min(max(self.semantic_sessions, 0), 10))
        self.semantic_min_similarity = float(min(self.semantic_min_similarity, 1.0))
        self.budget_seconds = float(min(max(self.budget_seconds, 0.5), 120))
        self.background_seconds = float(min(max(self.background_seconds, self.budget_seconds), 300))
        if self.scope not in ("project", "all"):
            self.scope = "project"
        model = values.get("model")
        self.model = model if isinstance(model, str) and model.strip() else None

    @classmethod
    def from_config(cls, cfg: dict | None) -> HookSettings:
        """From a loaded config (``recall.core.config.load()``); a missing section: the defaults."""
        return cls(**_section(cfg, "hook"))

    @property
    def scope_all(self) -> bool:
        """``hook.scope`` is ``all``: every project's past sessions are searched."""
        return self.scope == "all"


class MemorySettings(_Settings):
    """Memory's settings (the config's ``memory`` section), every value checked as its readers
    always did: ``enabled`` is off only for ``false``/``"off"``/``0``, ``claude_md`` one of
    ``MEMORY_MODES``, a number of the wrong type (or zero, for the timeout) its default;
    ``daily_call_cap`` null: no cap."""

    __slots__ = tuple(k for k, _ in MEMORY_DEFAULTS)
    DEFAULTS = MEMORY_DEFAULTS

    enabled: bool
    daily_call_cap: int | None
    claude_md: str
    idle_seconds: float
    timeout_seconds: float

    def __init__(self, **values) -> None:
        d = dict(MEMORY_DEFAULTS)
        self.enabled = values.get("enabled", True) not in OFF
        cap = values.get("daily_call_cap", d["daily_call_cap"])
        if cap is not None:  # null: no cap
            cap = _checked(d["daily_call_cap"], cap)
        self.daily_call_cap = int(cap) if cap is not None else None
        mode = values.get("claude_md", d["claude_md"])
        self.claude_md = "none" if mode in (False, None, "off", "no") else mode if mode in MEMORY_MODES else "claude_md"
        self.idle_seconds = float(_checked(d["idle_seconds"], values.get("idle_seconds", d["idle_seconds"])))
        self.timeout_seconds = float(
            _checked(d["timeout_seconds"], values.get("timeout_seconds")) or d["timeout_seconds"]
        )

    @classmethod
    def from_config(cls, cfg: dict | None) -> MemorySettings:
        return cls(**_section(cfg, "memory"))
