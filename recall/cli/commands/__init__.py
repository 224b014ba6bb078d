"""One module per command group; each holds a ``commands`` Typer that ``recall.cli.app`` merges
in.
"""
