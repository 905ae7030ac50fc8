"""The ingest stage's options (the spec's `options.ingest`)."""

from __future__ import annotations

from pydantic import Field

from benchfoundry.core.options import StageOptionsModel


class IngestOptions(StageOptionsModel):
    """Options of the ingest stage."""

    min_side: int = Field(default=32, ge=1, description="shorter side below this is refused")
    max_pixels: int = Field(default=50_000_000, ge=1, description="decompression-bomb guard")
    near_duplicate_distance: int = Field(
        default=4,
        ge=0,
        le=64,
        description="perceptual-hash bit distance that marks a near duplicate",
    )
    batch_size: int = Field(default=32, ge=1, description="images per Prefect task")
    dimension_map: dict[str, str] = Field(
        default_factory=dict,
        description="source category -> taxonomy dimension for seed questions (unmapped keep their category)",
    )

    def named_dimensions(self) -> dict[str, list[str]]:
        return {"options.ingest.dimension_map": list(self.dimension_map.values())}
