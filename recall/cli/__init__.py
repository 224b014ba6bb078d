"""The ``recall`` command line.

  ``app``            assembles the typer app: the default command, one-line errors
  ``commands/``      one module per command or group (``recall.cli.commands``)
  ``command_utils``  what several commands share, without typer
  ``fast_search``    ``--raw``/``--json`` searches without typer
  ``fast_commands``  the everyday commands' plain forms without typer (``status``, ``log``,
                     ``stats``, ``sessions``, ``show``, ``memories``), with ``everyday``
  ``everyday``       those commands as plain functions that print and return an exit code
  ``output``         human output: hits, index summaries, progress bars
  ``install``        what ``recall setup`` writes, the ``recall`` link on PATH
  ``uninstall``      what uninstall leaves and ``--purge`` removes
  ``folder_modes``   putting back folders an earlier setup made 0700
  ``checks``         ``recall doctor``, with its line on which of setup and the plugin wires recall
  ``agent_wiring``   ``recall setup --codex``/``--gemini``: recall's MCP server in Codex CLI's
                     ``config.toml``, a marked block, and Gemini CLI's ``settings.json``, and
                     taking them out again
"""
