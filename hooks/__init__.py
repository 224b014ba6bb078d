"""Claude Code hook entry points. Keep them thin: parse stdin, call library code, print JSON."""
