"""``python3 .ci/junit_counts.py REPORT.xml [PREFIX]``: one line of a JUnit report's counts, as
pytest words them ("37 passed, 2 failed, 1 skipped"), of the test cases whose class name starts
with PREFIX (e.g. ``tests.e2e``); "no report" when the file is missing or unreadable.
``python3 .ci/junit_counts.py --total REPORT.xml...``: every case of the reports together, as
pytest's last line ("2045 passed, 4 failed, 12 skipped in 812.40s"). Used by ``.ci/run`` to
name each Claude Code version's end-to-end results."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def _tally(root, prefix: str, tally: dict) -> None:
    for case in root.iter("testcase"):
        if not case.get("classname", "").startswith(prefix):
            continue
        tags = {child.tag for child in case}
        if "failure" in tags:
            tally["failed"] += 1
        elif "error" in tags:
            tally["errors"] += 1
        elif "skipped" in tags:
            tally["skipped"] += 1
        else:
            tally["passed"] += 1


def counts(path: str, prefix: str = "") -> str:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return "no report"
    tally = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    _tally(root, prefix, tally)
    words = [f"{n} {k}" for k, n in tally.items() if n or k == "passed"]
    return ", ".join(words)


def total(paths: list[str]) -> str:
    tally = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    seconds = 0.0
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        _tally(root, "", tally)
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        seconds += sum(float(s.get("time") or 0) for s in suites)
    words = [f"{n} {k}" for k, n in tally.items() if n or k == "passed"]
    return ", ".join(words) + f" in {seconds:.2f}s"


if __name__ == "__main__":
    if sys.argv[1] == "--total":
        print(total(sys.argv[2:]))
    else:
        print(counts(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""))
