"""``benchmarks.decision_bound``: the study of what the raw path's signals can reach reads
``benchmarks.injection_sizes`` records (no hook runs) and renders its section of the page."""

from __future__ import annotations

import json

from benchmarks import decision_bound as db

FEATS = {"held": 1.0, "coverage": 1.0, "rare": 1.0, "proximity": 0.8, "score": 0.6, "specific": 1.0, "margin": 0.2}
WEAK = {"held": 0.25, "coverage": 0.2, "rare": 0.1, "proximity": 0.0, "score": 0.2, "specific": 0.0, "margin": -0.5}


def record(pid: str, kind: str, split: str, strong: bool, answered: bool, corpus: str = "coding") -> dict:
    """One prompt: an answering session ``a`` (strong or weak words) and a twin ``b``."""
    good = FEATS if strong else WEAK
    rows = [
        {"session": "a", "f": good, "echo": False, "label": int(answered)},
        {"session": "b", "f": WEAK, "echo": False, "label": 0},
    ]
    near = [["a", 0.62 if strong else 0.35, answered], ["b", 0.33, False]]
    return {
        "code": "ours",
        "corpus": corpus,
        "size": "project" if corpus == "coding" else "1000",
        "pid": pid,
        "kind": kind,
        "split": split,
        "rows": rows,
        "near": near,
        "background": {"mean": 0.1, "std": 0.08},
    }


def records() -> list[dict]:
    out = []
    for split in ("tune", "report"):
        for i in range(6):
            out.append(record(f"{split}-q{i}", "question", split, strong=i % 3 != 0, answered=True))
            out.append(record(f"{split}-n{i}", "new-task", split, strong=False, answered=False))
            out.append(record(f"{split}-l{i}", "answerable", split, True, True, corpus="longmemeval"))
    return out


def test_the_study_reads_records_and_renders_its_section(tmp_path, monkeypatch):
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records() + [{**records()[0], "code": "main"}]), encoding="utf-8")
    monkeypatch.setattr(db, "prompt_texts", lambda: {"tune-q0": "why did we pick advisory locks?"})
    res = db.run(path)
    today = res["bound"]["today"]["report"]["coding all sizes"]
    # the shipped decision injects the strong answers (confidence ≥ 0.6), never a weak new task
    assert today["useful"] == round(4 / 6, 4) and today["false_share"] == 0.0 and today["silent_new_task"] == 1.0
    assert set(res["bound"]["fits"]) == {"tune", "report", "report + form"}
    for fit in res["bound"]["fits"].values():
        assert fit["chosen"] is None or fit["chosen"] in fit["sweep"]
    floors = res["floors"]["cosine 0.30 (shipped)"]["coding all sizes"]
    assert floors["candidate_recall"] == 1.0 and 0.0 <= floors["asked_new_task"] <= 1.0
    assert res["floors"]["no semantic channel"]["coding all sizes"]["candidate_recall"] <= 1.0
    assert "none (shipped)" in res["companions"]
    page = "\n".join(db.sections(res))
    assert "### What the raw path's signals can reach" in page
    assert "| today's raw decision (shipped) | 0.67 / 0.00 / 1.00 |" in page
    assert "${" not in page


def test_a_prompt_asks_back_or_asks_for_work():
    assert db.asks("why did we go with advisory locks?")
    assert db.asks("remind me, when a clinic deletes a patient is it gone")
    assert not db.asks("add a --quiet flag to up")
    assert not db.asks("can you write unit tests for utils/slugify.ts?")


def test_no_committed_results_means_no_section(tmp_path, monkeypatch):
    monkeypatch.setattr(db, "RESULTS", tmp_path / "absent.json")
    assert db.sections() == []
