"""recall/rules/: triggered rules."""
