"""Token and cost accounting per stage and model, written to the run folder."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from benchfoundry.storage.atomic import atomic_write_json


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


JOURNAL = "usage.jsonl"


class UsageLedger:
    """Thread-safe counters keyed by (stage, model).

    With a `journal` (the run's `RUN/usage.jsonl`), every count is appended there as the call is
    made, so a step killed half-way has its calls accounted for; `RUN/usage.json` is the journal
    summed, rewritten by `write`. Without one, counts are journaled when `write` is called."""

    def __init__(self, journal: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self.entries: dict[tuple[str, str], Usage] = defaultdict(Usage)
        self.journal = Path(journal) if journal is not None else None
        self._pending: list[tuple[str, str, Usage]] = []  # counted, not yet journaled

    def record(self, stage: str, model: str, usage: Usage) -> None:
        with self._lock:
            self.entries[(stage, model)].add(usage)
            if self.journal is None:
                self._pending.append((stage, model, usage))
            else:
                _append(self.journal, [(stage, model, usage)])

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
        """Journal the counts not yet journaled into `RUN/usage.jsonl`, rewrite `RUN/usage.json`
        as the journal's sums (stage -> model -> counts, over every run), then start counting
        afresh."""
        journal = Path(run_root) / JOURNAL
        with self._lock:
            pending, self._pending = self._pending, []
            if self.journal is not None and self.journal.resolve() != journal.resolve():
                pending = [(s, m, u) for (s, m), u in self.entries.items()]
            _append(journal, pending)
            self.entries.clear()
        return rebuild(run_root)

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


def _append(journal: Path, rows: list[tuple[str, str, Usage]]) -> None:
    """Append counts to a journal, one JSON line each (a folder written before journals existed
    has its `usage.json` totals carried in first)."""
    if not rows:
        return
    lines = []
    if not journal.exists() and (legacy := journal.with_name("usage.json")).exists():
        stored = json.loads(legacy.read_text(encoding="utf-8"))
        lines += [
            {"stage": stage, "model": model, **counts, "carried": True}
            for stage, models in stored.items()
            for model, counts in models.items()
        ]
    lines += [{"stage": s, "model": m, **u.model_dump()} for s, m, u in rows]
    journal.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    with open(journal, "a+b") as handle:
        if handle.tell() > 0:  # a last line cut short by a kill must not swallow this one
            handle.seek(-1, 2)
            if handle.read(1) != b"\n":
                text = "\n" + text
        handle.write(text.encode("utf-8"))


def read_journal(run_root: str | Path) -> dict[str, dict[str, Usage]]:
    """stage -> model -> the summed counts of `RUN/usage.jsonl`. A last line cut short by a
    killed process is skipped (its call is counted again when the step is rerun)."""
    journal = Path(run_root) / JOURNAL
    sums: dict[str, dict[str, Usage]] = {}
    if not journal.exists():
        return sums
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        row.pop("carried", None)
        stage, model = row.pop("stage"), row.pop("model")
        sums.setdefault(stage, {}).setdefault(model, Usage()).add(Usage.model_validate(row))
    return sums


def rebuild(run_root: str | Path) -> Path:
    """Rewrite `RUN/usage.json` from the journal."""
    path = Path(run_root) / "usage.json"
    sums = read_journal(run_root)
    if sums or not path.exists():
        atomic_write_json(
            path,
            {
                stage: {model: usage.model_dump() for model, usage in sorted(models.items())}
                for stage, models in sorted(sums.items())
            },
        )
    return path
