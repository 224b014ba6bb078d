"""CLI commands kept out of ``recall.cli`` (each module registers on ``recall.cli.app``)."""
