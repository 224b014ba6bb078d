"""End to end with the real clients (Claude Code, Codex CLI, Gemini CLI) against the loopback stand-in, and the infrastructure that drives them."""
