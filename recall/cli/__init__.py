"""The ``recall`` command line: the typer app's assembly (``app``), one module per command
(``commands/``) and what they share (``command_utils``, ``output``), the fast paths that skip
typer (``fast_search``, ``fast_commands``, ``everyday``), setup and doctor.
"""
