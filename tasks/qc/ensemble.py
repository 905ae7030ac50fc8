"""What a reader of the quality-control report should know about the ensembles' power: bins the
vision-language ensemble cannot reach, models whose CircularEval equals their first pass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchfoundry.tasks.qc.options import ConsensusOptions

if TYPE_CHECKING:
    from benchfoundry.gateway.models import ModelSpec


def ensemble_warnings(
    vlm: Sequence[str],
    text: Sequence[tuple[str, str]],
    options: ConsensusOptions,
    catalogue: dict[str, ModelSpec] | None = None,
) -> list[str]:
    """What a reader of the report should know about the ensembles' power."""
    from benchfoundry.gateway.assemble import default_catalogue
    from benchfoundry.gateway.models import resolve

    catalogue = default_catalogue() if catalogue is None else catalogue
    warnings = []
    bins = {options.difficulty(h, len(vlm)) for h in range(len(vlm) + 1)} if vlm else set()
    if vlm and len(bins) < len(options.bins):
        alone = (
            ", and every candidate it misses is flagged possibly flawed" if len(vlm) == 1 else ""
        )
        warnings.append(
            f"the vision-language ensemble has {len(vlm)} model(s) ({', '.join(vlm)}): difficulty "
            f"takes only {len(bins)} of {len(options.bins)} bins{alone}; name more models in "
            "models.vlm for a real build"
        )
    for name in [*vlm, *(m for m, role in text if role != "chance")]:
        try:
            spec = resolve(name, catalogue)
        except ValueError:
            continue
        if spec.options.get("mcq") == "likelihood":
            warnings.append(
                f"{name} answers by likelihood: its choice does not depend on the order of the "
                "options, so its CircularEval result equals its first pass"
            )
    return warnings
