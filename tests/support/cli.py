"""Run the ``recall`` command line in-process, as the tests do: ``cli(capsys, "status", "--json")``
-> (exit code, stdout, stderr)."""

from __future__ import annotations

from recall.cli.app import run


def cli(capsys, *args):
    code = run(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err
