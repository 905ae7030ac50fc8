import os
from pathlib import Path

from benchfoundry.core import imaging
from benchfoundry.core.packaged import PACKAGES
from benchfoundry.devtools.broken_inputs import tiff_with_broken_second_frame, write_faulty_images
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.sources.files import read_folder, read_packaged
from benchfoundry.sources.models import FolderSource, PackagedSource
from benchfoundry.tasks.ingest.images import decode_batch


def test_folder_is_read_recursively_in_a_stable_order(tmp_path, image_bytes):
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / "a.PNG").write_bytes(image_bytes(seed=1))
    (tmp_path / "b" / "deep" / "c.jpg").write_bytes(image_bytes(fmt="JPEG", seed=2))
    (tmp_path / "b" / "d.webp").write_bytes(image_bytes(fmt="WEBP", seed=3))
    (tmp_path / "b" / "e.bmp").write_bytes(image_bytes(fmt="BMP", seed=4))
    (tmp_path / "b" / "f.tiff").write_bytes(image_bytes(fmt="TIFF", seed=5))
    (tmp_path / "g.gif").write_bytes(image_bytes(fmt="GIF", seed=6))
    (tmp_path / "readme.txt").write_text("not an image")
    (tmp_path / ".hidden.png").write_bytes(b"")
    (tmp_path / "broken.png").symlink_to(tmp_path / "missing.png")
    items = read_folder(FolderSource(path=tmp_path, license="CC0", meta={"set": "t"}))
    names = [i.path.relative_to(tmp_path).as_posix() for i in items.images]
    assert names == [
        "a.PNG",
        "broken.png",
        "g.gif",
        "b/d.webp",
        "b/e.bmp",
        "b/f.tiff",
        "b/deep/c.jpg",
    ]
    assert sorted((r.reason, Path(r.source).name) for r in items.rejections) == [
        ("hidden_skipped", ".hidden.png"),
        ("unsupported_extension", "readme.txt"),
    ]
    assert items.images[0].license == "CC0" and items.images[0].meta == {
        "set": "t",
        "file": "a.PNG",
    }
    decoded = decode_batch(items.images, imaging.ImageLimits())
    reasons = {getattr(d, "reason", "ok") for d in decoded}
    assert reasons == {"ok", "unreadable_file"}
    assert sum(getattr(d, "reason", "") == "unreadable_file" for d in decoded) == 1


def test_each_faulty_file_is_refused_with_its_reason(tmp_path):
    expected = write_faulty_images(tmp_path)
    items = read_folder(FolderSource(path=tmp_path))
    decoded = decode_batch(items.images, imaging.ImageLimits())
    got = {d.source.rsplit("/", 1)[-1]: d.reason for d in decoded}
    assert got == expected


def test_packaged_photos_are_read_from_their_packages():
    items = read_packaged(PackagedSource())
    assert {i.meta["package"] for i in items.images} == set(PACKAGES)
    assert len(items.images) >= 25
    names = {i.source for i in items.images}
    assert {
        "packaged:scikit-image/astronaut.png",
        "packaged:scikit-learn/china.jpg",
        "packaged:matplotlib/grace_hopper.jpg",
    } <= names
    china = next(i for i in items.images if i.source.endswith("china.jpg"))
    assert china.license == "CC BY 2.0"
    assert china.read()[:3] == b"\xff\xd8\xff"


def test_ingest_without_prefect_stores_duplicates_across_batches_once(tmp_path, image_bytes):
    from benchfoundry.core.records import ImageRecord, ImageSourceRecord
    from benchfoundry.storage.tables import RunFolder
    from benchfoundry.tasks.ingest.options import IngestOptions
    from benchfoundry.tasks.ingest.stage import run as ingest_stage

    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(5):
        (folder / f"{i}.png").write_bytes(image_bytes(seed=i))
    (folder / "9-copy-of-0.png").write_bytes(image_bytes(seed=0))
    run = RunFolder(tmp_path / "run")
    summary = ingest_stage(
        StageRun.make(run, sources=[FolderSource(path=folder)], ingest=IngestOptions(batch_size=2))
    )
    assert (summary.images_added, summary.exact_duplicates, summary.images_decoded) == (5, 1, 6)
    links = run.table(ImageSourceRecord).records()
    copy = next(link for link in links if link.source.endswith("9-copy-of-0.png"))
    original = next(i for i in run.table(ImageRecord).records() if i.source.endswith("/0.png"))
    assert copy.image_id == original.image_id
    again = ingest_stage(
        StageRun.make(run, sources=[FolderSource(path=folder)], ingest=IngestOptions(batch_size=4))
    )
    assert (again.images_added, again.images_already_stored, again.exact_duplicates) == (0, 5, 1)


def test_linked_folders_pipes_and_broken_decoders_are_accounted_for(tmp_path, image_bytes):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.png").write_bytes(image_bytes(seed=2))
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.png").write_bytes(image_bytes(seed=1))
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)
    (root / ".git").mkdir()
    (root / ".git" / "x.png").write_bytes(image_bytes(seed=3))
    os.mkfifo(root / "pipe.png")
    (root / "pages.tif").write_bytes(tiff_with_broken_second_frame())
    items = read_folder(FolderSource(path=root))
    assert sorted(Path(i.source).relative_to(root).as_posix() for i in items.images) == [
        "a.png",
        "linked/b.png",
        "pages.tif",
        "pipe.png",
    ]
    assert sorted((r.reason, Path(r.source).name) for r in items.rejections) == [
        ("hidden_skipped", ".git"),
        ("symlink_loop", "loop"),
    ]
    decoded = {
        Path(d.source).name if hasattr(d, "reason") else Path(d.item.source).name: getattr(
            d, "reason", "ok"
        )
        for d in decode_batch(items.images, imaging.ImageLimits())
    }
    assert decoded == {
        "a.png": "ok",
        "b.png": "ok",
        "pages.tif": "corrupt_image",
        "pipe.png": "unreadable_file",
    }
