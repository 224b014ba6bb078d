"""What every benchmark shares: one percentile, one timed process, one `recall serve` started
and stopped and the state environment it runs in.

Percentiles are linearly interpolated between the two closest ranks (numpy's default and
``statistics.quantiles(method="inclusive")``): the definition the hook, CLI and search figures
of docs/benchmarks.md always used. Before issue 31 the freshness, team and rules figures used
the nearest rank and the injection budgets ``xs[int(q * n)]``; their stored figures were
measured that way (docs/benchmarks.md says so) and a rerun measures them with this one.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# where a benchmark builds its corpora and state unless told (--work): kept between runs, reused
WORK = Path(os.environ.get("TMPDIR", "/var/tmp")) / "recall-bench"


# ---------------------------------------------------------------------------- statistics
def percentile(values, q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values``, linearly interpolated; None when empty."""
    s = sorted(values)
    if not s:
        return None
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def median(values) -> float | None:
    """The median of ``values``; None when empty."""
    v = list(values)
    return statistics.median(v) if v else None


def ms(seconds: float | None, digits: int = 1) -> float | None:
    """Seconds as rounded milliseconds (None stays None)."""
    return None if seconds is None else round(seconds * 1000, digits)


def spread_ms(seconds: list[float], digits: int = 1) -> dict:
    """p50, p95, p99, max and mean of ``seconds`` in rounded milliseconds (None when empty)."""
    if not seconds:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {
        "p50": ms(percentile(seconds, 0.5), digits),
        "p95": ms(percentile(seconds, 0.95), digits),
        "p99": ms(percentile(seconds, 0.99), digits),
        "max": ms(max(seconds), digits),
        "mean": ms(sum(seconds) / len(seconds), digits),
    }


# ---------------------------------------------------------------------------- one process, timed
def recall_exe(python: str | None = None) -> list[str]:
    """The ``recall`` console script beside ``python`` (this interpreter by default), else
    ``python -m recall.entry``."""
    py = Path(python or sys.executable)
    here = py.parent / "recall"
    return [str(here)] if here.is_file() else [str(py), "-m", "recall.entry"]


def time_process(
    argv: list[str],
    env: dict,
    stdin: bytes | None = None,
    cwd=None,
    stderr=subprocess.DEVNULL,
    timeout: float | None = None,
) -> tuple[float, float, bytes, int]:
    """Run ``argv`` once: (wall seconds from start until its stdout closed, CPU seconds of the
    process and what it exec'd, its stdout, its exit code). ``stdin`` is written then closed
    (a process that does not read it is fine); ``stderr`` goes nowhere unless a file is given;
    after ``timeout`` seconds the process is killed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=cwd)
    timer = threading.Timer(timeout, proc.kill) if timeout else None
    if timer:
        timer.start()
    try:
        if stdin:
            proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    out = proc.stdout.read()
    wall = time.perf_counter() - t0
    _, status, usage = os.wait4(proc.pid, 0)
    if timer:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    return wall, usage.ru_utime + usage.ru_stime, out, proc.returncode


# ---------------------------------------------------------------------------- the service
def state_env(home: Path, claude: Path, service: bool = True) -> dict:
    """This environment with recall's state in ``home`` and Claude Code's in ``claude``, the
    checkout importable; ``service=False`` keeps every command off the service."""
    env = dict(os.environ)
    env.update({"RECALL_HOME": str(home), "CLAUDE_CONFIG_DIR": str(claude), "PYTHONPATH": str(REPO)})
    if service:
        env.pop("RECALL_NO_SERVICE", None)
    else:
        env["RECALL_NO_SERVICE"] = "1"
    return env


_STATUS = (
    "import json; from recall.core import service_client as client; "
    "print(json.dumps(client.call('status', {}, timeout=5)))"
)
_PING = "from recall.core import service_client as c; import sys; sys.exit(0 if c.ping(1) else 1)"


def service_status(env: dict, python: str | None = None, cwd=None) -> dict:
    """The running service's ``status`` answer, asked from another process ({} when none answers)."""
    out = subprocess.run(
        [python or sys.executable, "-c", _STATUS], capture_output=True, text=True, env=env, timeout=60, cwd=cwd
    )
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else {}


def start_service(
    env: dict,
    *,
    until: str = "answers",
    argv: list[str] | None = None,
    python: str | None = None,
    log: Path | None = None,
    cwd=None,
    timeout: float = 600,
    poll: float = 0.5,
    name: str = "`recall serve`",
) -> subprocess.Popen:
    """Start ``recall serve`` (``argv``, by default this interpreter's) in ``env`` and return
    once it is ready: ``until="answers"`` when it answers a ping, ``"watching"`` when its status
    says it watches (its start-up backfill handed over), ``"started"`` at once. Its output goes
    to ``log`` (else nowhere); a service that exits or never gets ready raises SystemExit with
    the log's tail."""
    argv = argv or [*recall_exe(python), "serve"]
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=cwd
    )
    if log:
        out.close()  # the child holds its own copy
    if until == "started":
        return proc

    def tail() -> str:
        return f": {log.read_text(errors='replace')[-2000:]}" if log and log.exists() else ""

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with {proc.returncode}{tail()}")
        if until == "answers":
            ready = subprocess.run([python or sys.executable, "-c", _PING], env=env, cwd=cwd).returncode == 0
        else:
            ready = service_status(env, python, cwd).get("state") == "watching"
        if ready:
            return proc
        time.sleep(poll)
    stop_service(proc)
    raise SystemExit(f"{name} did not come up within {timeout:g} s{tail()}")


def stop_service(proc: subprocess.Popen, timeout: float = 60) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; waits for the process either way."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
