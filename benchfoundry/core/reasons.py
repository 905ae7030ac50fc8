"""Why something was refused: the rejection every stage writes to `quarantine`, and one registry
of reason codes per stage. Each stage registers its own codes in its own module; a rejection with
a code its stage did not register is a bug and fails at once. `docs/reasons.md` is rendered from
the registry (`python scripts/render_reasons.py`) and a test keeps it so."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from benchfoundry.core.records import QuarantineRecord

_REGISTRY: dict[str, dict[str, str]] = {}
_LOCK = threading.Lock()


def register(stage: str, reasons: dict[str, str]) -> dict[str, str]:
    """Add `reasons` (code -> what it means) to `stage`'s codes; return them."""
    with _LOCK:
        known = _REGISTRY.setdefault(stage, {})
        for code, meaning in reasons.items():
            if known.get(code, meaning) != meaning:
                raise ValueError(
                    f"reason '{code}' of stage {stage} is registered twice, differently"
                )
            known[code] = meaning
    return dict(reasons)


def registered() -> dict[str, dict[str, str]]:
    """stage -> code -> meaning, for every stage module imported so far."""
    with _LOCK:
        return {stage: dict(codes) for stage, codes in _REGISTRY.items()}


def markdown(registry: dict[str, dict[str, str]]) -> str:
    """The reasons page: one table per stage."""
    lines = [
        "# Quarantine reasons",
        "",
        "Every refusal is a row of the run's `quarantine` table with its `stage`, a `reason` code",
        "from the tables below, the `source` it came from and a `detail` a person can act on;",
        "`ref_kind` says what `ref_id` names (`file`, `row`, `image`, `candidate`, `draft`,",
        "`source`) and `dimension` the dimension of a refused question or draft.",
        "This page is rendered from the code's registry (`python scripts/render_reasons.py`).",
    ]
    for stage, codes in registry.items():
        lines += ["", f"## {stage}", "", "| reason | meaning |", "|---|---|"]
        lines += [f"| `{code}` | {meaning} |" for code, meaning in codes.items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Rejection:
    """Something refused, with its reason code (registered for its stage) and a readable
    detail."""

    source: str
    source_kind: str
    reason: str
    detail: str
    stage: str = "ingest"
    ref_kind: str | None = None  # default: from `source_kind` (see `default_ref_kind`)
    ref_id: str | None = None  # default: a table row's reference after `#`
    dimension: str | None = None

    def __post_init__(self) -> None:
        if self.reason not in _REGISTRY.get(self.stage, {}):
            raise ValueError(
                f"reason '{self.reason}' is not registered for stage {self.stage} "
                "(register it in the stage's module)"
            )

    def to_record(self) -> QuarantineRecord:
        kind = self.ref_kind or default_ref_kind(self.source_kind)
        ref_id = self.ref_id
        if ref_id is None and kind == "row" and "#" in self.source:
            ref_id = self.source.rsplit("#", 1)[1]  # ingest's `file#line=N`, `file#row=N`...
        return QuarantineRecord(
            source=self.source,
            stage=self.stage,
            reason=self.reason,
            detail=self.detail,
            source_kind=self.source_kind,
            ref_kind=kind,
            ref_id=ref_id,
            dimension=self.dimension,
        )


# What a quarantine row refers to, by the kind of source it came from when the stage does not say.
_REF_KINDS = {
    "folder": "file",
    "packaged": "file",
    "tsv": "row",
    "parquet": "row",
    "image": "image",
}


def default_ref_kind(source_kind: str) -> str:
    """`file` (an image file), `row` (a table row), `image` (a stored image), else `source`."""
    return _REF_KINDS.get(source_kind, "source")
