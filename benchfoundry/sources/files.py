"""Image sources that are files: a folder (recursive) and photos shipped inside packages."""

from __future__ import annotations

import os
from pathlib import Path

from benchfoundry.core import packaged
from benchfoundry.core.imaging import IMAGE_SUFFIXES
from benchfoundry.core.reasons import Rejection
from benchfoundry.sources.items import (
    RawImage,
    SourceFormatError,
    SourceItems,
    path_bytes,
    path_text,
)
from benchfoundry.sources.models import FolderSource, PackagedSource


def read_folder(source: FolderSource) -> SourceItems:
    """Every file under the folder (linked folders followed once), in a stable order. Files that
    are not images by extension, hidden entries, folders that cannot be listed and link loops
    become rejections, so that every entry of the tree is accounted for."""
    root = source.path
    if not root.is_dir():
        raise SourceFormatError(f"folder source {root} does not exist or is not a folder")
    items = SourceItems()

    def refuse(path: Path, reason: str, detail: str) -> None:
        items.rejections.append(Rejection(path_text(path), "folder", reason, detail))

    def unreadable(error: OSError) -> None:
        refuse(
            Path(error.filename or root),
            "unreadable_folder",
            f"{type(error).__name__}: {error.strerror}",
        )

    visited = {os.path.realpath(root)}
    for folder, dirs, files in os.walk(root, onerror=unreadable, followlinks=True):
        kept = []
        for name in sorted(dirs):
            path = Path(folder) / name
            if name.startswith("."):
                refuse(path, "hidden_skipped", "hidden folder, not looked into")
            elif (real := os.path.realpath(path)) in visited:
                refuse(path, "symlink_loop", f"leads back to {path_text(real)}, already walked")
            else:
                visited.add(real)
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = Path(folder) / name
            if name.startswith("."):
                refuse(path, "hidden_skipped", "hidden file, not read")
            elif path.suffix.lower() not in IMAGE_SUFFIXES:
                refuse(
                    path,
                    "unsupported_extension",
                    f"'{path_text(path.suffix or name)}' is not one of {', '.join(sorted(IMAGE_SUFFIXES))}",
                )
            else:
                relative = path.relative_to(root).as_posix()
                meta = {**source.meta, "file": path_text(relative)}
                if (raw := path_bytes(relative)) is not None:
                    meta["file_bytes_base64"] = raw  # the exact name, which is not UTF-8
                items.images.append(
                    RawImage(
                        path_text(path), "folder", path=path, license=source.license, meta=meta
                    )
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
