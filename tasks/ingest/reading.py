"""Ingest's reading of sources: everything one source yields before decoding, a source at a
URL read from a copy in the working cache and named by its URL."""

from __future__ import annotations

from dataclasses import replace

from benchfoundry.core.locations import is_url
from benchfoundry.sources.files import read_folder, read_packaged
from benchfoundry.sources.items import SourceFormatError, SourceItems
from benchfoundry.sources.models import (
    FolderSource,
    PackagedSource,
    ParquetSource,
    Source,
    TsvSource,
    VideoSource,
    describe_source,
)
from benchfoundry.sources.tables import read_parquet, read_tsv
from benchfoundry.sources.videos import read_videos
from benchfoundry.storage.mirror import mirror
from benchfoundry.storage.objects import StoreError


def read_source(source: Source) -> SourceItems:
    """Everything one source yields, before decoding. A source at a URL (s3://, gs://...) is
    read from a copy in the working cache, and every row names it by its URL."""
    named = {f: getattr(source, f, None) for f in ("path", "image_root", "annotations")}
    urls = {f: v for f, v in named.items() if is_url(v)}
    if not urls:
        return _read_local(source)
    try:
        local = {f: mirror(v) for f, v in urls.items()}
    except StoreError as exc:
        raise SourceFormatError(f"source {describe_source(source)}: {exc}") from None
    items = _read_local(source.model_copy(update=local))
    prefixes = [(str(local[f]), str(urls[f]).rstrip("/")) for f in urls]
    return _renamed(items, prefixes)


def _renamed(items: SourceItems, prefixes: list[tuple[str, str]]) -> SourceItems:
    """The items with the working copy's paths given back as the URLs they came from."""

    def back(text: str) -> str:
        for local, url in prefixes:
            if text == local or text.startswith((local + "/", local + "#")):
                return url + text[len(local) :]
        return text

    return SourceItems(
        images=[replace(i, source=back(i.source)) for i in items.images],
        seeds=[
            replace(s, source=back(s.source), image_source=back(s.image_source))
            for s in items.seeds
        ],
        rejections=[replace(r, source=back(r.source)) for r in items.rejections],
        warnings=list(items.warnings),
        clips=[replace(c, source=back(c.source)) for c in items.clips],
        segments=[
            replace(s, source=back(s.source), clip_source=back(s.clip_source))
            for s in items.segments
        ],
    )


def _read_local(source: Source) -> SourceItems:
    if isinstance(source, FolderSource):
        return read_folder(source)
    if isinstance(source, TsvSource):
        return read_tsv(source)
    if isinstance(source, ParquetSource):
        return read_parquet(source)
    if isinstance(source, PackagedSource):
        return read_packaged(source)
    if isinstance(source, VideoSource):
        return read_videos(source)
    raise TypeError(f"no reader for source kind {type(source).__name__}")
