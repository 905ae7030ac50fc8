"""The stages: `tasks/<stage>/` holds one stage whole, its entry point `run(StageRun, mapper)`,
its options, its summary and every part only it uses (see docs/architecture.md)."""
