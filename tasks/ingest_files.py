"""Image sources that are files: a folder (recursive) and photos shipped inside packages."""

from __future__ import annotations

import os
from pathlib import Path

from benchfoundry import packaged
from benchfoundry.imaging import IMAGE_SUFFIXES
from benchfoundry.spec import FolderSource, PackagedSource
from tasks.ingest_items import RawImage, Rejection, SourceFormatError, SourceItems


def read_folder(source: FolderSource) -> SourceItems:
    """Every file under the folder in a stable order; files that are not images by extension
    become `unsupported_extension` rejections (hidden files and folders are not looked at)."""
    root = source.path
    if not root.is_dir():
        raise SourceFormatError(f"folder source {root} does not exist or is not a folder")
    items = SourceItems()
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.suffix.lower() not in IMAGE_SUFFIXES:
                items.rejections.append(
                    Rejection(
                        str(path),
                        "folder",
                        "unsupported_extension",
                        f"'{path.suffix or name}' is not one of {', '.join(sorted(IMAGE_SUFFIXES))}",
                    )
                )
                continue
            meta = {**source.meta, "file": relative}
            items.images.append(
                RawImage(str(path), "folder", path=path, license=source.license, meta=meta)
            )
    return items


def read_packaged(source: PackagedSource) -> SourceItems:
    """The photos of each named package, read from the package's own folder."""
    items = SourceItems()
    for package in source.packages:
        version = packaged.package_version(package)
        for photo in packaged.photos(package):
            meta = {"package": package, "package_version": version, "file": photo.name}
            items.images.append(
                RawImage(
                    photo.source, "packaged", path=photo.path, license=photo.license, meta=meta
                )
            )
    return items
