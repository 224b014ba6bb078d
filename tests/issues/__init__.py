"""Regression tests of numbered findings whose subject spans floors (one file per issue or item: the first hour, the papercuts, a config that does not parse)."""
