"""The ``recall`` command line (what ``recall setup`` does is in ``recall.setup``).

``app``            assembles the typer app: the default command, one-line errors
``commands/``      one module per command or group (``recall.cli.commands``)
``command_utils``  what several commands share, without typer
``fast_search``    ``--raw``/``--json`` searches without typer
``fast_commands``  the everyday commands' plain forms without typer (``status``, ``log``,
                   ``stats``, ``sessions``, ``show``, ``memories``), with ``everyday``
``everyday``       those commands as plain functions that print and return an exit code
``output``         human output: hits, index summaries, progress bars
``checks``         ``recall doctor``, with its line on which of setup and the plugin wires recall
"""
