"""How recall installs itself, in one folder: ``recall setup``'s entries in Claude Code's
settings and the ``recall`` link on PATH (``install``), what uninstall leaves and ``--purge``
removes (``uninstall``), putting back folders an earlier setup made 0700 (``folder_modes``),
``recall setup --codex``/``--gemini`` (``agent_wiring``), and the plugin's virtualenv
(``plugin_runtime``: its build, run by path with the user's ``python3`` before recall is
installed, so it imports only the standard library), and what the built runtime runs once
(``plugin_service``: stop an older runtime's service, start this one's).

What the hook reads on every prompt (which events setup wired, the plugin on or off) stays in
``recall.core.wiring``, and what the plugin's hooks do in ``recall.hooks.plugin``; the hook never
imports this folder.
"""
