"""Building a gateway for a run folder: its response cache, its images and facts, its catalogue."""

from __future__ import annotations

import os
from pathlib import Path

from benchfoundry.data import data_path
from benchfoundry.gateway.cache import ResponseCache
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.gateway import Gateway
from benchfoundry.gateway.messages import RunImages
from benchfoundry.gateway.models import ModelSpec, load_catalogue
from benchfoundry.gateway.usage import JOURNAL, UsageLedger
from benchfoundry.storage.tables import RunFolder

DEFAULT_CATALOGUE = data_path("models.yaml")


def cache_path(run_root: str | Path) -> Path:
    """The run's response cache (`RUN/model_cache.sqlite`)."""
    return Path(run_root) / "model_cache.sqlite"


def default_catalogue(path: str | Path | None = None) -> dict[str, ModelSpec]:
    """The catalogue at `path`, else `$BENCHFOUNDRY_MODELS`, else the packaged one (benchfoundry/data/models.yaml)."""
    chosen = path or os.environ.get("BENCHFOUNDRY_MODELS") or DEFAULT_CATALOGUE
    return load_catalogue(chosen) if Path(chosen).exists() or path else {}


def gateway_for_run(
    run_root: str | Path,
    stage: str,
    catalogue: dict[str, ModelSpec] | None = None,
    catalogue_path: str | Path | None = None,
) -> Gateway:
    """A gateway whose cache, images and visual facts are those of the run folder; its models
    come from `catalogue`, else the catalogue file at `catalogue_path` (a spec's
    `model_catalogue`), else the default one."""
    run = RunFolder(run_root)
    run.root.mkdir(parents=True, exist_ok=True)
    context = GatewayContext(images=RunImages(run), run=run)
    catalogue = default_catalogue(catalogue_path) if catalogue is None else catalogue
    # Usage is journaled as the calls are made: a killed step's calls still count.
    ledger = UsageLedger(run.root / JOURNAL)
    return Gateway(
        catalogue, ResponseCache(cache_path(run.root)), context, ledger=ledger, stage=stage
    )
