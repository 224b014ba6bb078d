"""recall/setup/: how recall installs itself (recall setup, uninstall, other agents' wiring, the Claude Code plugin)."""
