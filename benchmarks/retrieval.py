"""Retrieval quality on LoCoMo and LongMemEval-S, through the real indexer and searcher.

Each LoCoMo conversation and each LongMemEval question becomes one project of Claude Code
transcripts (``cwd`` ``/bench/locomo/<conv-id>`` / ``/bench/longmemeval/<question-id>``,
one ``<session-uuid>.jsonl`` per dataset session, in the 2.1.x line envelope). Session and
line uuids are uuid5s of the dataset ids, so a hit maps back to the dataset's evidence:

* LoCoMo: a QA's ``evidence`` ``dia_id``\\s (``D3:7``) are the relevant messages. Adversarial
  questions (category 5, whose answer is not in the conversation) and questions without
  usable evidence are skipped. Speaker A is written as the ``user``, speaker B as the
  ``assistant``, every line as ``"Name: text"`` (questions name people); a shared image
  keeps its caption as ``[image: ...]``.
* LongMemEval-S: the relevant messages are the turns marked ``has_answer``, the relevant
  sessions the ``answer_session_ids``. Abstention questions (``*_abs``) are skipped, as in
  LongMemEval's own retrieval evaluation.

Everything is indexed with ``indexer.ingest.Indexer`` into a throw-away ``RECALL_HOME``;
every question is asked with ``recall.search.searcher.Searcher().search`` scoped to its project,
``messages=True`` (message level) and ``messages=False`` (session level, LongMemEval).

Metrics, averaged over questions: Recall@k = fraction of the relevant items in the top k;
recall_all@k = 1 when all of them are in the top k (LongMemEval's own), else 0; NDCG@k
with binary relevance; MRR@10 = 1 / the rank of the first relevant item (0 beyond 10).
The baseline, computed in the same run over the same messages of the same project, is ``rank_bm25.BM25Okapi`` on lowercase whitespace tokens
(LongMemEval's BM25 protocol); at session level its documents are the sessions (the text
of all their messages concatenated; LongMemEval's own script uses only the user turns).
A second reference, reported beside it, runs the same BM25Okapi on recall's analyzer's
terms (words, lowercased, stemmed): the gap to it is what the engine and query add beyond
tokenization. ``--as-of-question`` searches "at" each question's dataset time instead of
the wall clock, so the recency prior sees realistic ages (it is inert otherwise: the data
is from 2022-2023).

    python -m benchmarks.retrieval [--dataset locomo|longmemeval|both] [--limit-questions N]
                                   [--out benchmarks/out/retrieval.json]

The data is read from ``$RECALL_BENCH_DATA``, else the first ``shared/data`` directory
found walking up from the repository (``../shared/data`` next to a CI clone).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Container, Iterable, Iterator

REPO = Path(__file__).resolve().parents[1]
LOCOMO_FILE = "locomo_dev.json"
LONGMEMEVAL_FILE = "longmemeval_s_dev.json.gz"
DATASETS = ("locomo", "longmemeval")
KS = (5, 10)
FETCH = 10  # hits asked of the searcher per question (the largest k)

NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5e9f-9c0d-7b2a1e4f5d60")
BASE_DATE = datetime(2023, 1, 1, 12, 0, tzinfo=timezone.utc)
TURN_STEP = timedelta(seconds=30)
VERSION = "2.1.197"
BRANCH = "main"

LOCOMO_SKIP_CATEGORIES = {5}  # adversarial: the answer is not in the conversation
_DIA = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")


# ------------------------------------------------------------------------------------
# the converted corpus


@dataclass
class Turn:
    uuid: str
    role: str  # user | assistant
    text: str
    ts: datetime


@dataclass
class Session:
    session_id: str
    source_id: str  # the dataset's own id for it
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Question:
    qid: str
    text: str
    category: str
    evidence_messages: set[str]  # transcript uuids
    evidence_sessions: set[str]  # session ids
    asked_at: float | None = None  # when the dataset says it was asked (epoch seconds)


@dataclass
class Case:
    """One project: a LoCoMo conversation, or one LongMemEval question's haystack."""

    dataset: str
    name: str
    cwd: str
    sessions: list[Session]
    questions: list[Question]

    @property
    def messages(self) -> Iterator[tuple[Session, Turn]]:
        for s in self.sessions:
            for t in s.turns:
                yield s, t


def uid(*parts: object) -> str:
    return str(uuid.uuid5(NAMESPACE, "\x1f".join(str(p) for p in parts)))


def encode_cwd(cwd: str) -> str:
    """Claude Code's project directory name for a cwd."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def parse_locomo_date(value: str | None) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` -> an aware datetime (UTC), or None."""
    if not value:
        return None
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(value.strip(), fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


def parse_longmemeval_date(value: str | None) -> datetime | None:
    """``"2023/05/20 (Sat) 02:21"`` -> an aware datetime (UTC), or None."""
    if not value:
        return None
    try:
        return datetime.strptime(value.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def longmemeval_haystack(item: dict, skip: Container[str] = ()) -> Iterator[Session]:
    """One LongMemEval item's haystack sessions whose dataset id is not in ``skip``, as pool
    sessions (``uid("pool", ...)`` ids, turns ``TURN_STEP`` apart from the session's date, or
    2023-01-01 12:00 UTC when it has none; empty turns dropped)."""
    qid = str(item.get("question_id") or "")
    ids = item.get("haystack_session_ids") or []
    dates = item.get("haystack_dates") or []
    for n, turns in enumerate(item.get("haystack_sessions") or []):
        source = str(ids[n]) if n < len(ids) else f"{qid}-session-{n}"
        if source in skip:
            continue
        start = parse_longmemeval_date(dates[n] if n < len(dates) else None) or datetime(
            2023, 1, 1, 12, tzinfo=timezone.utc
        )
        sess = Session(uid("pool", source), source)
        for i, turn in enumerate(turns or []):
            text = str(turn.get("content") or "").strip()
            if text:
                role = "assistant" if turn.get("role") == "assistant" else "user"
                sess.turns.append(Turn(uid("pool", source, i), role, text, start + TURN_STEP * i))
        yield sess


def locomo_evidence(raw: Iterable) -> list[str]:
    """Normalised dia_ids from a QA's evidence (the data has ``"D8:6; D9:17"``, ``"D:11:26"``)."""
    out: list[str] = []
    for item in raw or []:
        for a, b in _DIA.findall(str(item)):
            dia = f"D{int(a)}:{int(b)}"
            if dia not in out:
                out.append(dia)
    return out


def load_locomo(
    path: Path,
    *,
    conversations: int | None = None,
    per_conversation: int | None = None,
    limit_questions: int | None = None,
) -> list[Case]:
    data = json.loads(path.read_text(encoding="utf-8"))
    cases: list[Case] = []
    budget = limit_questions
    for conv in data[:conversations] if conversations else data:
        if budget is not None and budget <= 0:
            break
        name = str(conv.get("sample_id") or f"conv-{len(cases)}")
        cwd = f"/bench/locomo/{name}"
        c = conv.get("conversation") or {}
        speaker_a = c.get("speaker_a")
        numbers = sorted(int(m.group(1)) for k in c if (m := _SESSION_KEY.fullmatch(k)))
        sessions: list[Session] = []
        dia_to_uuid: dict[str, str] = {}
        dia_to_session: dict[str, str] = {}
        fallback = BASE_DATE
        for n in numbers:
            start = parse_locomo_date(c.get(f"session_{n}_date_time")) or fallback
            fallback = start + timedelta(days=1)
            sess = Session(uid("locomo", name, n), f"session_{n}")
            for i, turn in enumerate(c.get(f"session_{n}") or []):
                text = str(turn.get("text") or "").strip()
                caption = turn.get("blip_caption")
                if caption:
                    text = f"{text} [image: {caption}]".strip()
                if not text:
                    continue
                dia = str(turn.get("dia_id") or f"D{n}:{i + 1}")
                speaker = str(turn.get("speaker") or "")
                role = "user" if speaker == speaker_a else "assistant"
                t = Turn(
                    uid("locomo", name, dia), role, f"{speaker}: {text}" if speaker else text, start + TURN_STEP * i
                )
                sess.turns.append(t)
                dia_to_uuid[dia] = t.uuid
                dia_to_session[dia] = sess.session_id
            if sess.turns:
                sessions.append(sess)
        last = max((t.ts for s in sessions for t in s.turns), default=BASE_DATE)
        asked_at = (last + timedelta(days=1)).timestamp()
        questions: list[Question] = []
        for i, qa in enumerate(conv.get("qa") or []):
            if per_conversation is not None and len(questions) >= per_conversation:
                break
            if budget is not None and len(questions) >= budget:
                break
            category = qa.get("category")
            if category in LOCOMO_SKIP_CATEGORIES:
                continue
            dias = [d for d in locomo_evidence(qa.get("evidence")) if d in dia_to_uuid]
            if not dias or not str(qa.get("question") or "").strip():
                continue
            questions.append(
                Question(
                    f"{name}#{i}",
                    str(qa["question"]),
                    str(category),
                    {dia_to_uuid[d] for d in dias},
                    {dia_to_session[d] for d in dias},
                    asked_at,
                )
            )
        if budget is not None:
            budget -= len(questions)
        if questions:
            cases.append(Case("locomo", name, cwd, sessions, questions))
    return cases


def load_longmemeval(path: Path, *, limit_questions: int | None = None) -> list[Case]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    cases: list[Case] = []
    for item in data:
        if limit_questions is not None and len(cases) >= limit_questions:
            break
        qid = str(item.get("question_id") or "")
        if not qid or qid.endswith("_abs"):
            continue  # abstention: nothing to retrieve
        cwd = f"/bench/longmemeval/{qid}"
        answer_ids = set(item.get("answer_session_ids") or [])
        sessions: list[Session] = []
        evidence_messages: set[str] = set()
        evidence_sessions: set[str] = set()
        ids = item.get("haystack_session_ids") or []
        dates = item.get("haystack_dates") or []
        fallback = BASE_DATE
        for n, turns in enumerate(item.get("haystack_sessions") or []):
            source = str(ids[n]) if n < len(ids) else f"session-{n}"
            start = parse_longmemeval_date(dates[n] if n < len(dates) else None) or fallback
            fallback = start + timedelta(days=1)
            sess = Session(uid("longmemeval", qid, n, source), source)
            for i, turn in enumerate(turns or []):
                text = str(turn.get("content") or "").strip()
                if not text:
                    continue
                role = "assistant" if turn.get("role") == "assistant" else "user"
                t = Turn(uid("longmemeval", qid, n, source, i), role, text, start + TURN_STEP * i)
                sess.turns.append(t)
                if turn.get("has_answer"):
                    evidence_messages.add(t.uuid)
            if not sess.turns:
                continue
            sessions.append(sess)
            if source in answer_ids:
                evidence_sessions.add(sess.session_id)
        if not evidence_sessions and not evidence_messages:
            continue
        asked = parse_longmemeval_date(item.get("question_date"))
        last = max(t.ts for s in sessions for t in s.turns)
        question = Question(
            qid,
            str(item.get("question") or ""),
            str(item.get("question_type") or ""),
            evidence_messages,
            evidence_sessions,
            (asked or last + timedelta(days=1)).timestamp(),
        )
        cases.append(Case("longmemeval", qid, cwd, sessions, [question]))
    return cases


# ------------------------------------------------------------------------------------
# writing transcripts


def _iso(ts: datetime) -> str:
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def transcript_lines(case: Case, sess: Session) -> Iterator[dict]:
    """The transcript of one session, line by line, in Claude Code 2.1.x's envelope."""
    parent = None
    common = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": case.cwd,
        "sessionId": sess.session_id,
        "version": VERSION,
        "gitBranch": BRANCH,
    }
    for n, t in enumerate(sess.turns):
        if t.role == "user":
            line = {
                "parentUuid": parent,
                **common,
                "type": "user",
                "message": {"role": "user", "content": t.text},
                "uuid": t.uuid,
                "timestamp": _iso(t.ts),
                "permissionMode": "default",
            }
        else:
            line = {
                "parentUuid": parent,
                **common,
                "type": "assistant",
                "message": {
                    "id": "msg_" + t.uuid.replace("-", "")[:24],
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": t.text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 10},
                },
                "requestId": "req_" + t.uuid.replace("-", "")[:24],
                "uuid": t.uuid,
                "timestamp": _iso(t.ts),
            }
        parent = t.uuid
        yield line


def write_transcripts(cases: Iterable[Case], root: Path) -> int:
    """Write every case below ``root`` (Claude Code's ``projects`` layout). Returns lines written."""
    n = 0
    for case in cases:
        pdir = root / encode_cwd(case.cwd)
        pdir.mkdir(parents=True, exist_ok=True)
        for sess in case.sessions:
            with open(pdir / f"{sess.session_id}.jsonl", "w", encoding="utf-8") as fh:
                for line in transcript_lines(case, sess):
                    fh.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                    n += 1
    return n


@contextlib.contextmanager
def recall_home(path: Path) -> Iterator[Path]:
    """Point ``RECALL_HOME`` at ``path`` for the duration."""
    old = os.environ.get("RECALL_HOME")
    os.environ["RECALL_HOME"] = str(path)
    try:
        yield path
    finally:
        if old is None:
            os.environ.pop("RECALL_HOME", None)
        else:
            os.environ["RECALL_HOME"] = old


def build_index(root: Path) -> dict:
    """Index the transcripts below ``root`` with the real indexer (into the current RECALL_HOME)."""
    from indexer.ingest import Indexer

    with Indexer() as ix:
        summary = ix.run([root])
    return summary.as_dict()


# ------------------------------------------------------------------------------------
# metrics


def recall_at(ranked: list[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def ndcg_at(ranked: list[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(_dedup(ranked)[:k]) if item in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal


def _dedup(seq: list[str]) -> list[str]:
    return list(dict.fromkeys(seq))


def recall_all_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """1 when every relevant item is in the top k, else 0 (LongMemEval's recall_all@k)."""
    return float(bool(relevant) and relevant <= set(ranked[:k]))


def mrr_at(ranked: list[str], relevant: set[str], k: int) -> float:
    """1 / the rank of the first relevant item in the top k (0 when none is)."""
    for i, item in enumerate(_dedup(ranked)[:k]):
        if item in relevant:
            return 1.0 / (i + 1)
    return 0.0


def scores(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    out = {}
    for k in KS:
        out[f"recall@{k}"] = recall_at(ranked, relevant, k)
        out[f"recall_all@{k}"] = recall_all_at(ranked, relevant, k)
        out[f"ndcg@{k}"] = ndcg_at(ranked, relevant, k)
    out[f"mrr@{FETCH}"] = mrr_at(ranked, relevant, FETCH)
    return out


METRICS = tuple(f"{m}@{k}" for k in KS for m in ("recall", "recall_all", "ndcg")) + (f"mrr@{FETCH}",)


# ------------------------------------------------------------------------------------
# the BM25 baseline


def tokenize(text: str) -> list[str]:
    """LongMemEval's BM25 protocol: lowercase, split on whitespace."""
    return text.lower().split()


def tokenize_analyzed(text: str) -> list[str]:
    """recall's own analyzer (words, lowercased, stemmed): the same BM25 on the index's terms."""
    from recall.search.query import analyze

    return analyze(text)


class Baseline:
    """rank_bm25 over one project's messages, and over its sessions as documents."""

    def __init__(self, case: Case, session_level: bool, tokenize: Callable[[str], list[str]] = tokenize) -> None:
        from rank_bm25 import BM25Okapi

        self.tokenize = tokenize
        pairs = list(case.messages)
        self.message_ids = [t.uuid for _, t in pairs]
        self.messages = BM25Okapi([tokenize(t.text) or [""] for _, t in pairs])
        self.sessions = None
        if session_level:
            self.session_ids = [s.session_id for s in case.sessions]
            self.sessions = BM25Okapi([tokenize("\n".join(t.text for t in s.turns)) or [""] for s in case.sessions])

    def _top(self, model, ids: list[str], query: str, k: int) -> list[str]:
        got = model.get_scores(self.tokenize(query))
        order = sorted(range(len(ids)), key=lambda i: (-got[i], i))
        return [ids[i] for i in order[:k]]

    def rank_messages(self, query: str, k: int = FETCH) -> list[str]:
        return self._top(self.messages, self.message_ids, query, k)

    def rank_sessions(self, query: str, k: int = FETCH) -> list[str]:
        return self._top(self.sessions, self.session_ids, query, k)


# ------------------------------------------------------------------------------------
# running


SESSION_LEVEL = {"locomo": False, "longmemeval": True}


SPLITS = ("tune", "report")


def split_of(qid: str) -> str:
    """Which half of the dev sets a question is in: ``tune`` (ranking ideas are tuned on it)
    or ``report`` (the figures quoted for them). By a hash of the question id (LoCoMo
    ``conv-26#12``, LongMemEval's ``question_id``), so about half of each set and of each
    category falls on each side, and a question never moves."""
    return SPLITS[hashlib.sha256(qid.encode("utf-8")).digest()[0] & 1]


def evaluate(
    cases: list[Case],
    searcher=None,
    *,
    baseline: bool = True,
    analyzed_baseline: bool = False,
    session_level: dict[str, bool] | None = None,
    as_of_question: bool = False,
    search: Callable[..., list] | None = None,
    split: str | None = None,
) -> list[dict]:
    """Ask every question; return one record per question and level with every ranking's scores.

    ``search(question, limit=, messages=, project=[, now=])`` defaults to ``searcher.search``
    (a ``recall.search.searcher.Searcher``); tuning scripts pass variants. ``as_of_question`` asks
    "at" the dataset's question time (``now=``), so the recency prior sees the ages a user
    would; by default ``now`` is the wall clock, as for the CLI. ``split`` (``tune`` or
    ``report``, see ``split_of``) asks only that half's questions.
    """
    from recall.search.run import resolve_project

    if search is None:
        if searcher is None:
            from recall.search.searcher import Searcher

            searcher = Searcher()
        search = searcher.search
    levels_for = session_level or SESSION_LEVEL
    records: list[dict] = []
    for case in cases:
        project = resolve_project(case.cwd)
        with_sessions = levels_for.get(case.dataset, False)
        base = Baseline(case, with_sessions) if baseline else None
        base2 = Baseline(case, with_sessions, tokenize_analyzed) if analyzed_baseline else None
        for q in case.questions:
            if split is not None and split_of(q.qid) != split:
                continue
            levels = []
            if q.evidence_messages:
                levels.append("message")
            if with_sessions and q.evidence_sessions:
                levels.append("session")
            for level in levels:
                messages = level == "message"
                extra = {"now": q.asked_at} if as_of_question and q.asked_at else {}
                hits = search(q.text, limit=FETCH, messages=messages, project=project, **extra)
                ranked = _dedup([h.uuid if messages else h.session_id for h in hits])
                relevant = q.evidence_messages if messages else q.evidence_sessions
                rec = {
                    "dataset": case.dataset,
                    "level": level,
                    "qid": q.qid,
                    "category": q.category,
                    "question": q.text,
                    "relevant": len(relevant),
                    "ours": scores(ranked, relevant),
                    "found": [i + 1 for i, x in enumerate(ranked) if x in relevant],
                }
                for name, b in (("baseline", base), ("baseline_analyzed", base2)):
                    if b is not None:
                        branked = b.rank_messages(q.text) if messages else b.rank_sessions(q.text)
                        rec[name] = scores(branked, relevant)
                records.append(rec)
    return records


def aggregate(records: list[dict], by: str | None = None) -> dict:
    """Mean of every metric per (dataset, level[, by]) for ours and the baseline."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        key = (r["dataset"], r["level"]) + ((r[by],) if by else ())
        groups[key].append(r)
    out: dict = {}
    for key, recs in sorted(groups.items()):
        node = out
        for part in key[:-1]:
            node = node.setdefault(part, {})
        entry = {"questions": len(recs)}
        for m in METRICS:
            ours = sum(r["ours"][m] for r in recs) / len(recs)
            row = {"ours": round(ours, 4)}
            if all("baseline" in r for r in recs):
                base = sum(r["baseline"][m] for r in recs) / len(recs)
                row["baseline"] = round(base, 4)
                row["ratio"] = round(ours / base, 3) if base else None
            if all("baseline_analyzed" in r for r in recs):
                row["baseline_analyzed"] = round(sum(r["baseline_analyzed"][m] for r in recs) / len(recs), 4)
            entry[m] = row
        node[key[-1]] = entry
    return out


def markdown_table(summary: dict) -> str:
    """ours vs the baseline; a last column for BM25 on recall's analyzed terms when it was run.
    A metric a summary lacks (MRR in results from before it was measured) has no row."""
    rows = [entry[m] for levels in summary.values() for entry in levels.values() for m in METRICS if m in entry]
    analyzed = bool(rows) and all("baseline_analyzed" in r for r in rows)
    head = "| dataset | level | metric | recall | baseline (BM25) | ratio |"
    rule = "|---|---|---|---:|---:|---:|"
    if analyzed:
        head += " BM25, recall's analyzer |"
        rule += "---:|"
    lines = [head, rule]

    def num(x, fmt="{:.3f}"):
        return "" if x is None else fmt.format(x)

    for dataset, levels in summary.items():
        for level, entry in levels.items():
            for m in METRICS:
                if m not in entry:
                    continue
                row = entry[m]
                line = (
                    f"| {dataset} (n={entry['questions']}) | {level} | {m} | {row['ours']:.3f} | "
                    f"{num(row.get('baseline'))} | {num(row.get('ratio'), '{:.2f}x')} |"
                )
                if analyzed:
                    line += f" {num(row.get('baseline_analyzed'))} |"
                lines.append(line)
    return "\n".join(lines)


def find_data_dir() -> Path | None:
    """``$RECALL_BENCH_DATA``, else the nearest ``shared/data`` walking up from the repository."""
    env = os.environ.get("RECALL_BENCH_DATA")
    if env:
        p = Path(env).expanduser()
        return p if p.is_dir() else None
    for parent in [REPO, *REPO.parents]:
        cand = parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


def load(
    data_dir: Path,
    datasets: Iterable[str],
    *,
    limit_questions: int | None = None,
    locomo_conversations: int | None = None,
    locomo_per_conversation: int | None = None,
    longmemeval_questions: int | None = None,
) -> list[Case]:
    cases: list[Case] = []
    for ds in datasets:
        if ds == "locomo":
            cases += load_locomo(
                data_dir / LOCOMO_FILE,
                conversations=locomo_conversations,
                per_conversation=locomo_per_conversation,
                limit_questions=limit_questions,
            )
        elif ds == "longmemeval":
            cases += load_longmemeval(
                data_dir / LONGMEMEVAL_FILE,
                limit_questions=longmemeval_questions if longmemeval_questions is not None else limit_questions,
            )
        else:
            raise ValueError(f"unknown dataset {ds!r}")
    return cases


def run(
    datasets: Iterable[str] = DATASETS,
    *,
    data_dir: Path | None = None,
    limit_questions: int | None = None,
    locomo_conversations: int | None = None,
    locomo_per_conversation: int | None = None,
    longmemeval_questions: int | None = None,
    workdir: Path | None = None,
    per_question: bool = False,
    analyzed_baseline: bool = True,
    as_of_question: bool = False,
    split: str | None = None,
) -> dict:
    """Convert, index, ask, score. Returns the JSON report (``summary`` holds the table)."""
    t0 = time.perf_counter()
    data_dir = data_dir or find_data_dir()
    if data_dir is None:
        raise FileNotFoundError("no benchmark data: set RECALL_BENCH_DATA or put shared/data beside the repo")
    datasets = list(datasets)
    cases = load(
        data_dir,
        datasets,
        limit_questions=limit_questions,
        locomo_conversations=locomo_conversations,
        locomo_per_conversation=locomo_per_conversation,
        longmemeval_questions=longmemeval_questions,
    )
    t_load = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="recall-bench-")))
        workdir.mkdir(parents=True, exist_ok=True)
        root = workdir / "projects"
        lines = write_transcripts(cases, root)
        t_write = time.perf_counter()
        stack.enter_context(recall_home(workdir / "home"))
        indexed = build_index(root)
        t_index = time.perf_counter()
        from recall.search.searcher import Searcher

        records = evaluate(
            cases, Searcher(), analyzed_baseline=analyzed_baseline, as_of_question=as_of_question, split=split
        )
        t_eval = time.perf_counter()
    report = {
        "datasets": datasets,
        "data_dir": str(data_dir),
        "projects": len(cases),
        "sessions": sum(len(c.sessions) for c in cases),
        "messages_written": lines,
        "messages_indexed": indexed["messages"],
        "questions": {ds: sum(len(c.questions) for c in cases if c.dataset == ds) for ds in datasets},
        "baseline": "rank_bm25.BM25Okapi over the project's messages, lowercase whitespace tokens "
        "(LongMemEval's protocol); session level: each session's messages as one document",
        "baseline_analyzed": "the same BM25Okapi on recall's analyzer's terms (words, lowercased, stemmed)"
        if analyzed_baseline
        else None,
        "now": "question time" if as_of_question else "wall clock",
        "split": split or "all",
        "seconds": {
            "load": round(t_load - t0, 2),
            "write": round(t_write - t_load, 2),
            "index": round(t_index - t_write, 2),
            "search_and_score": round(t_eval - t_index, 2),
            "total": round(t_eval - t0, 2),
        },
        "summary": aggregate(records),
        "by_category": aggregate(records, by="category"),
    }
    if per_question:
        report["per_question"] = records
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.retrieval", description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=["locomo", "longmemeval", "both"], default="both")
    ap.add_argument(
        "--limit-questions", type=int, default=None, metavar="N", help="at most N questions per dataset (in file order)"
    )
    ap.add_argument(
        "--locomo-conversations", type=int, default=None, metavar="K", help="only the first K LoCoMo conversations"
    )
    ap.add_argument(
        "--locomo-per-conversation",
        type=int,
        default=None,
        metavar="M",
        help="at most M questions per LoCoMo conversation",
    )
    ap.add_argument(
        "--longmemeval-questions",
        type=int,
        default=None,
        metavar="N",
        help="at most N LongMemEval questions (overrides --limit-questions for it)",
    )
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "retrieval.json")
    ap.add_argument("--per-question", action="store_true", help="also write every question's scores")
    ap.add_argument(
        "--as-of-question",
        action="store_true",
        help="search 'at' each question's dataset time (now=) instead of the wall clock",
    )
    ap.add_argument(
        "--no-analyzed-baseline",
        action="store_true",
        help="skip the second reference (BM25 on recall's analyzed terms)",
    )
    ap.add_argument(
        "--split",
        choices=SPLITS,
        default=None,
        help="only the tune or the report half of the questions (split_of: by question id hash)",
    )
    ap.add_argument(
        "--keep", type=Path, default=None, metavar="DIR", help="build the transcripts and index in DIR and keep them"
    )
    args = ap.parse_args(argv)
    datasets = list(DATASETS) if args.dataset == "both" else [args.dataset]
    try:
        report = run(
            datasets,
            limit_questions=args.limit_questions,
            locomo_conversations=args.locomo_conversations,
            locomo_per_conversation=args.locomo_per_conversation,
            longmemeval_questions=args.longmemeval_questions,
            workdir=args.keep,
            per_question=args.per_question,
            analyzed_baseline=not args.no_analyzed_baseline,
            as_of_question=args.as_of_question,
            split=args.split,
        )
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(markdown_table(report["summary"]))
    s = report["seconds"]
    print(
        f"\n{report['projects']} projects, {report['messages_indexed']} messages indexed, "
        f"questions {report['questions']}; {s['total']:.1f}s total "
        f"(load {s['load']:.1f}, write {s['write']:.1f}, index {s['index']:.1f}, "
        f"search+score {s['search_and_score']:.1f})"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
