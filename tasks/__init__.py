"""The stages' logic: one module per stage, each with its entry point `run(StageRun, mapper)` (see docs/architecture.md)."""
