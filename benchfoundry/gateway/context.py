"""What providers may use from around them: the run's images and visual facts."""

from __future__ import annotations

from dataclasses import dataclass

from benchfoundry.gateway.messages import ImageStore
from benchfoundry.storage.tables import RunFolder


@dataclass
class GatewayContext:
    images: ImageStore | None = None
    run: RunFolder | None = None
