"""Issue 46 item 7: a session line longer than ``LINE_CAP`` (a 33 KB ``.zst`` holding one 1 GB
line took the service to 2,267 MB) is skipped by every source, plain or compressed: streamed
through in bounded chunks and never held, the read position past it so it is never read again,
one log line naming the file and its size; the lines around it are indexed."""

from __future__ import annotations

import json
import os
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from indexer import transcripts
from indexer.ingest import Indexer
from indexer.sources import codex, gemini, lines
from recall.core import log
from tests.support.factory import Session

CAP = 1 << 20  # the cap in these tests (16 MiB in use)
LONG = 40 << 20  # the long line: 40 times the cap


@pytest.fixture(autouse=True)
def small_cap(monkeypatch):
    monkeypatch.setattr(transcripts, "LINE_CAP", CAP)


def _long_json(n: int = LONG) -> bytes:
    """One JSON line of ``n`` bytes (its newline included) that parses: a tool output."""
    head = b'{"timestamp": "2026-11-27T10:00:03Z", "type": "response_item", "payload": {"type": '
    head += b'"function_call_output", "call_id": "c1", "output": "'
    tail = b'"}}\n'
    return head + b"a" * (n - len(head) - len(tail)) + tail


def _codex_line(kind: str, text: str, when: str) -> bytes:
    role, part = ("user", "input_text") if kind == "user" else ("assistant", "output_text")
    return (
        json.dumps(
            {
                "timestamp": when,
                "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": part, "text": text}]},
            }
        ).encode()
        + b"\n"
    )


def _rollout(project: Path, middle: bytes) -> bytes:
    meta = {
        "timestamp": "2026-11-27T10:00:00Z",
        "type": "session_meta",
        "payload": {"id": "01a21d39-11ed-71d0-ba97-0eef9c1fae21", "cwd": str(project)},
    }
    return (
        json.dumps(meta).encode()
        + b"\n"
        + _codex_line("user", "before the long line: where is the walrus config", "2026-11-27T10:00:01Z")
        + middle
        + _codex_line("assistant", "after the long line: the giraffe cache is flushed", "2026-11-27T10:00:05Z")
    )


def _place(home: Path, name: str, data: bytes) -> Path:
    folder = home / ".codex" / "sessions" / "2026" / "11" / "27"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


NAME = "rollout-2026-11-27T10-00-00-01a21d39-11ed-71d0-ba97-0eef9c1fae21.jsonl"


def _read(mod, path: Path):
    """Everything ``mod`` reads of ``path``, with the peak of Python's heap meanwhile."""
    ctx = mod.context(path)
    stats: Counter = Counter()
    msgs, last = [], 0
    tracemalloc.start()
    try:
        for batch, pos in mod.read(path, 0, ctx, stats):
            msgs.extend(batch)
            last = pos
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return msgs, stats, last, ctx, peak


def _texts(msgs) -> list[str]:
    return [m.text for m in msgs]


def test_capped_lines_never_hold_more_than_the_cap():
    chunks = [b"short\n", b"x" * (CAP // 2), b"x" * CAP, b"x" * CAP + b"\nnext", b" line\n", b"tail"]
    got = list(transcripts.capped_lines(iter(chunks)))
    assert got[0] == b"short\n"
    assert isinstance(got[1], transcripts.LongLine) and got[1].size == CAP // 2 + 2 * CAP + 1 and got[1].ended
    assert got[2:] == [b"next line\n", b"tail"]
    assert isinstance(transcripts.LongLine(5, False), transcripts.LongLine)
    # a line right at the cap is read; one byte more is not
    at = list(transcripts.capped_lines(iter([b"y" * (CAP - 1) + b"\n", b"z" * CAP + b"\n"])))
    assert at[0] == b"y" * (CAP - 1) + b"\n" and isinstance(at[1], transcripts.LongLine)
    # the end of the data inside a long line: said, not held
    (cut,) = list(transcripts.capped_lines(iter([b"w" * (CAP + 10)])))
    assert isinstance(cut, transcripts.LongLine) and not cut.ended and cut.size == CAP + 10


def test_a_plain_rollout_skips_a_long_line_and_reads_its_neighbours(tmp_path):
    project = tmp_path / "webshop"
    project.mkdir()
    path = _place(Path(os.environ["HOME"]), NAME, _rollout(project, _long_json()))
    msgs, stats, last, ctx, peak = _read(codex, path)
    assert _texts(msgs) == [
        "before the long line: where is the walrus config",
        "after the long line: the giraffe cache is flushed",
    ]
    assert last == path.stat().st_size  # past it: never read again
    assert stats["too-long"] == 1
    assert [line for line, _ in ctx.bad] == [3] and f"{LONG:,} bytes long" in ctx.bad[0][1]
    assert peak < 4 * CAP  # 40 MB went by; never more than a few caps held


def test_a_compressed_rollout_skips_a_long_line_in_bounded_chunks(tmp_path, monkeypatch):
    import zstandard

    project = tmp_path / "webshop"
    project.mkdir()
    data = _rollout(project, _long_json())
    zst = _place(Path(os.environ["HOME"]), NAME + ".zst", zstandard.ZstdCompressor().compress(data))
    assert zst.stat().st_size < LONG // 1000  # a small file that stands for a huge line
    biggest = [0]
    real = lines._zstd_chunks

    def spy(fh, state):
        for chunk in real(fh, state):
            biggest[0] = max(biggest[0], len(chunk))
            yield chunk

    monkeypatch.setattr(lines, "_zstd_chunks", spy)
    msgs, stats, last, ctx, peak = _read(codex, zst)
    assert _texts(msgs) == [
        "before the long line: where is the walrus config",
        "after the long line: the giraffe cache is flushed",
    ]
    assert last == zst.stat().st_size and stats["too-long"] == 1
    assert f"{LONG:,} bytes long" in ctx.bad[0][1]
    assert 0 < biggest[0] <= CAP  # the decompressor never gave more than the cap at once
    assert peak < 4 * CAP


def test_a_compressed_rollout_of_many_frames_still_reads_whole(tmp_path):
    import zstandard

    project = tmp_path / "webshop"
    project.mkdir()
    data = _rollout(project, _codex_line("user", "in the middle: the heron queue", "2026-11-27T10:00:03Z"))
    parts = data.splitlines(keepends=True)
    frames = b"".join(zstandard.ZstdCompressor().compress(p) for p in parts)  # a frame a line, tiny ones
    zst = _place(Path(os.environ["HOME"]), NAME + ".zst", frames)
    msgs, stats, last, ctx, _ = _read(codex, zst)
    assert len(msgs) == 3 and not ctx.bad and last == zst.stat().st_size


def test_claude_code_skips_a_long_line_once_with_one_log_line(claude_projects):
    s = Session(cwd="/work/shop")
    s.user("before the long line: the walrus config lives in settings.toml")
    long = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * (3 * CAP)}})
    s.raw(long)
    s.assistant("after the long line: the giraffe cache is flushed every hour")
    path = s.write(claude_projects)
    with Indexer() as ix:
        assert ix.index_file(path) == 2  # the two neighbours
        assert ix.stats["too-long"] == 1
        ix.commit()
        assert ix.state.file(str(path)).offset == path.stat().st_size  # past the long line
        assert ix.index_file(path) == 0  # never read again
    said = [ln for ln in log.log_file().read_text(encoding="utf-8").splitlines() if "line cap" in ln]
    assert len(said) == 1  # one log line, naming the file and the size
    assert str(path) in said[0] and f"{len(long) + 1:,} bytes long" in said[0] and "line 2 " in said[0]


def test_a_long_line_still_being_written_waits_then_is_skipped(claude_projects):
    s = Session(cwd="/work/shop")
    s.user("first: the walrus config")
    path = s.write(claude_projects)
    with open(path, "ab") as fh:
        fh.write(b'{"type": "user", "message": {"role": "user", "content": "' + b"x" * (2 * CAP))  # no newline yet
    with Indexer() as ix:
        assert ix.index_file(path) == 1
        ix.commit()
        with open(path, "ab") as fh:
            fh.write(b'"}}\n')
        n = len(s.lines)
        s.assistant("then: the giraffe cache is flushed")
        s.append(claude_projects, n)
        assert ix.index_file(path) == 1  # the long line skipped, the next one read
        ix.commit()
        assert ix.index_file(path) == 0


def test_a_whole_file_gemini_session_past_the_cap_is_skipped(tmp_path):
    home = Path(os.environ["HOME"])
    chats = home / ".gemini" / "tmp" / "abc123" / "chats"
    chats.mkdir(parents=True)
    big = chats / "session-2026-11-27T10-00-d2b532a2.json"
    body = {"sessionId": "d2b532a2", "messages": [{"id": "m1", "type": "user", "content": "x" * (5 * CAP)}]}
    big.write_text(json.dumps(body), encoding="utf-8")
    msgs, stats, last, ctx, _ = _read(gemini, big)
    assert msgs == [] and stats["too-long"] == 1 and last == big.stat().st_size
    assert "cap of a whole file" in ctx.bad[0][1]
    small = chats / "session-2026-11-27T11-00-d2b532a3.json"
    body = {"sessionId": "d2b532a3", "messages": [{"id": "m1", "type": "user", "content": "the heron queue"}]}
    small.write_text(json.dumps(body), encoding="utf-8")
    msgs, stats, *_ = _read(gemini, small)
    assert _texts(msgs) == ["the heron queue"] and not stats["too-long"]
