"""What the model must answer, validated strictly (pydantic). Imported by the worker only:
never on a hook's path.

Extraction answer::

    {"memories": [{"type": "gotcha", "content": "...", "tags": ["stripe"],
                   "supersedes_content": "text of the memory this one replaces" | null}]}

Consolidation answer (for one type)::

    {"keep": ["id", ...], "merge": [{"ids": ["id1", "id2"], "content": "...", "tags": [...]}],
     "drop": ["id", ...]}

Re-check answer (memories whose files changed since, ``recall.memory.consolidate.recheck``)::

    {"verdicts": [{"id": "...", "verdict": "keep" | "update" | "drop", "content": "..." | null}]}

``parse_json`` finds the JSON in a reply (code fences and a sentence around it are
tolerated); anything that does not validate raises ``BadAnswer``.
"""

from __future__ import annotations

import json
import re
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

MemoryType = Literal["architecture", "decision", "pattern", "gotcha", "progress", "context"]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


class BadAnswer(ValueError):
    """The model's reply is not the JSON we asked for."""


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class ExtractedMemory(_Strict):
    type: MemoryType
    content: str = Field(min_length=1, max_length=2000)
    tags: list[str] = Field(default_factory=list, max_length=20)
    supersedes_content: Optional[str] = None

    @field_validator("content")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("content is blank")
        return v.strip()


class Extraction(_Strict):
    memories: list[ExtractedMemory] = Field(max_length=40)


class Merge(_Strict):
    ids: list[str] = Field(min_length=2)
    content: str = Field(min_length=1, max_length=2000)
    tags: list[str] = Field(default_factory=list, max_length=20)


class Consolidation(_Strict):
    keep: list[str] = Field(default_factory=list)
    merge: list[Merge] = Field(default_factory=list)
    drop: list[str] = Field(default_factory=list)


class Verdict(_Strict):
    id: str
    verdict: Literal["keep", "update", "drop"]
    content: Optional[str] = Field(default=None, max_length=2000)


class Recheck(_Strict):
    verdicts: list[Verdict] = Field(default_factory=list)


def parse_json(text: str):
    """The first JSON object or array in ``text``; raises BadAnswer."""
    text = (text or "").strip()
    candidates = [text]
    m = _FENCE.search(text)
    if m:
        candidates.insert(0, m.group(1).strip())
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            return json.loads(cand)
        except ValueError:
            pass
        for i, ch in enumerate(cand):
            if ch in "{[":
                try:
                    return decoder.raw_decode(cand[i:])[0]
                except ValueError:
                    continue
    raise BadAnswer("no JSON in the answer")


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "answer"
    return f"{where}: {err.get('msg', 'invalid')}"


def _parse(text: str, model, list_key: str | None = None):
    """The model's answer ``text`` as a ``model``; a bare JSON list is taken as its
    ``list_key`` field. Raises BadAnswer naming the first problem."""
    data = parse_json(text)
    if list_key and isinstance(data, list):
        data = {list_key: data}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadAnswer(_first_error(exc)) from None


def parse_extraction(text: str) -> Extraction:
    return _parse(text, Extraction, "memories")


def parse_recheck(text: str) -> Recheck:
    return _parse(text, Recheck, "verdicts")


def parse_consolidation(text: str) -> Consolidation:
    return _parse(text, Consolidation)
