"""The repository as a whole: the floor map (docs/architecture.md) holds for the code, the docs tell the truth, the suite is hermetic."""
