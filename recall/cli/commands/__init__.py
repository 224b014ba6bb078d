"""One module per command or command group, named for it: ``ask``, ``config``, ``doctor``,
``exclude``, ``forget``, ``index``, ``log``, ``mcp``, ``memories``, ``pause``, ``remember``,
``rules``, ``search``, ``service``, ``sessions``, ``setup``, ``sources``, ``stats``, ``status``,
``team``, ``ui``. Each holds a ``commands`` Typer that ``recall.cli.app`` merges in. No command
module imports another: what several share is in ``recall.cli.command_utils``.
"""
