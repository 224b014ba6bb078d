"""recall/ui/: recall ui, without and with a browser."""
