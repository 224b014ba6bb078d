"""The ``recall`` command line: the typer app, the fast search path, output, setup and doctor,
and one module per command group.
"""
