"""What Claude Code runs for each hook event (``recall hook NAME``). Keep them thin: parse
stdin, call library code, print JSON.
"""
