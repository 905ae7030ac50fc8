"""Token and cost accounting per stage and model, written to the run folder."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from benchfoundry.storage import atomic_write_json


class Usage(BaseModel):
    calls: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency_s: float = 0.0
    attempts: int = 0
    errors: dict[str, int] = Field(default_factory=dict)

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.cost += other.cost
        self.latency_s += other.latency_s
        self.attempts += other.attempts
        for kind, n in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + n


class UsageLedger:
    """Thread-safe counters keyed by (stage, model)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: dict[tuple[str, str], Usage] = defaultdict(Usage)

    def record(self, stage: str, model: str, usage: Usage) -> None:
        with self._lock:
            self.entries[(stage, model)].add(usage)

    def totals(self) -> Usage:
        total = Usage()
        for usage in self.entries.values():
            total.add(usage)
        return total

    def as_dict(self) -> dict[str, dict[str, dict]]:
        out: dict[str, dict[str, dict]] = {}
        for (stage, model), usage in sorted(self.entries.items()):
            out.setdefault(stage, {})[model] = usage.model_dump()
        return out

    def write(self, run_root: str | Path) -> Path:
        """Add the counts made since the last write to `RUN/usage.json` (stage -> model ->
        counts, summed over runs), then start counting afresh."""
        path = Path(run_root) / "usage.json"
        stored = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        for stage, models in self.as_dict().items():
            for model, counts in models.items():
                merged = Usage.model_validate(stored.get(stage, {}).get(model, {}))
                merged.add(Usage.model_validate(counts))
                stored.setdefault(stage, {})[model] = merged.model_dump()
        atomic_write_json(path, stored)
        with self._lock:
            self.entries.clear()
        return path

    def markdown(self) -> str:
        lines = [
            "| stage | model | calls | cached | tokens in | tokens out | cost | errors |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for (stage, model), u in sorted(self.entries.items()):
            errors = ", ".join(f"{k} {n}" for k, n in sorted(u.errors.items())) or "-"
            lines.append(
                f"| {stage} | {model} | {u.calls} | {u.cached} | {u.tokens_in} | {u.tokens_out} | {u.cost:.4f} | {errors} |"
            )
        return "\n".join(lines) + "\n"
