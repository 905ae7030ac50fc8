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
    keyframes: int = Field(
        default=4,
        ge=1,
        le=64,
        description="frames sampled uniformly from each annotated video segment and stored as "
        "images (the extractors read them; evaluation samples its own count)",
    )
    max_clip_seconds: float = Field(
        default=600.0, gt=0, description="a longer clip is refused (`clip_too_long`)"
    )
    dimension_map: dict[str, str] = Field(
        default_factory=dict,
        description="source category -> taxonomy dimension for seed questions (unmapped keep their category)",
    )

    def named_dimensions(self) -> dict[str, list[str]]:
        return {"options.ingest.dimension_map": list(self.dimension_map.values())}
