"""One module per command or command group (``search``, ``index``, ``service``, ``team``...);
each holds a ``commands`` Typer that ``recall.cli.app`` merges in. No command module imports
another: what several share is in ``recall.cli.command_utils``.
"""
