"""benchmarks/: the suite runs, its corpus generator, docs/benchmarks.md is what it renders."""
