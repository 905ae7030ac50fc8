"""Pictures as a viewer shows them, through the command line as a process: a phone's JPEG in
each of the eight EXIF orientations, an RGBA PNG on a transparent background, a CMYK JPEG, a
16-bit grey PNG and a palette PNG of one drawn scene go through ingest, extract and the template
generator in one build. Each is stored upright in sRGB (what the desk and the release show), its
questions and keys are the upright picture's, and the evidence lies where the object was drawn.
A folder without one image stops the build, naming what it found. A clip stored sideways with
a display rotation gives upright keyframes and an upright cut."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest
from PIL import Image, ImageDraw

from benchfoundry.core import video
from benchfoundry.devtools.invariance import exif_rotated

# The scene, drawn upright: where each shape is, as a person would say it.
WIDTH, HEIGHT = 360, 240
BLUE_BOX = (250, 160, 330, 215)  # bottom right
GREEN_TRIANGLE = [(280, 20), (330, 95), (230, 95)]  # top right
RED_DISC = (30, 25, 90, 85)  # top left


def scene() -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle(BLUE_BOX, fill=(30, 60, 220))
    draw.polygon(GREEN_TRIANGLE, fill=(30, 170, 60))
    draw.ellipse(RED_DISC, fill=(220, 30, 30))
    return image


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _files(folder: Path) -> None:
    upright = scene()
    folder.mkdir()
    (folder / "scene-upright.png").write_bytes(_png(upright))
    for orientation in range(1, 9):
        (folder / f"scene-exif{orientation}.jpg").write_bytes(exif_rotated(upright, orientation))
    rgba = upright.convert("RGBA")
    alpha = Image.fromarray(
        np.where(np.asarray(upright).min(axis=2) == 255, 0, 255).astype("uint8")
    )
    rgba.putalpha(alpha)
    (folder / "scene-transparent.png").write_bytes(_png(rgba))
    cmyk = io.BytesIO()
    upright.convert("CMYK").save(cmyk, format="JPEG", quality=95)
    (folder / "scene-cmyk.jpg").write_bytes(cmyk.getvalue())
    grey16 = (np.asarray(upright.convert("L"), dtype=np.uint16) * 257).astype(np.uint16)
    (folder / "scene-grey16.png").write_bytes(_png(Image.fromarray(grey16)))
    (folder / "scene-palette.png").write_bytes(_png(upright.convert("P", palette=1)))
    (folder / "blank-page.png").write_bytes(_png(Image.new("RGB", (300, 200), "white")))


def _build(tmp_path: Path, folder: str) -> subprocess.CompletedProcess:
    spec = tmp_path / f"{folder}.yaml"
    spec.write_text(
        f"name: {folder}\nsources: [{{kind: folder, path: {folder}, license: CC-BY-4.0}}]\n"
        "stages: [ingest, extract, generate]\noptions: {extract: {captioner: none}}\n",
        encoding="utf-8",
    )
    return subprocess.run(
        [sys.executable, "-m", "benchfoundry", "build", str(spec), "--out", f"runs/{folder}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("as-shown")
    _files(tmp_path / "photos")
    done = _build(tmp_path, "photos")
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "runs" / "photos"
    id_of = {  # exact duplicates (a JPEG mirrored may decode to a 180-degree turn's pixels) share
        Path(r["source"]).stem: r["image_id"]
        for r in ds.dataset(run / "image_sources").to_table().to_pylist()
    }
    rows = {r["image_id"]: r for r in ds.dataset(run / "images").to_table().to_pylist()}
    questions: dict[str, dict[tuple[str, str], tuple[str, list[str]]]] = {i: {} for i in rows}
    for c in ds.dataset(run / "candidates").to_table().to_pylist():
        key = c["options"][ord(c["answer"]) - ord("A")]
        questions[c["image_id"]][(c["generator"], c["question"])] = (key, c["evidence"])
    by_name = {name: rows[i] for name, i in id_of.items()}
    asked = {name: questions[i] for name, i in id_of.items()}
    return by_name, asked, done.stdout, tmp_path


VARIANTS = [f"exif{o}" for o in range(1, 9)] + ["transparent", "cmyk", "grey16", "palette"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_is_stored_upright_in_rgb(built, variant):
    by_name, *_ = built
    row = by_name[f"scene-{variant}"]
    assert (row["width"], row["height"]) == (WIDTH, HEIGHT)
    pixels = np.asarray(Image.open(io.BytesIO(row["bytes"])).convert("RGB"), dtype=int)
    box_centre = pixels[(BLUE_BOX[1] + BLUE_BOX[3]) // 2, (BLUE_BOX[0] + BLUE_BOX[2]) // 2]
    disc_centre = pixels[(RED_DISC[1] + RED_DISC[3]) // 2, (RED_DISC[0] + RED_DISC[2]) // 2]
    corner = pixels[5, WIDTH - 5]
    if variant == "grey16":  # grey: the box is darker than the disc, the corner white
        assert box_centre[0] < disc_centre[0] < 200 and corner.min() > 245
        return
    assert box_centre[2] > 180 and box_centre[0] < 80, "the blue box is at the bottom right"
    assert disc_centre[0] > 180 and disc_centre[2] < 80, "the red disc is at the top left"
    assert corner.min() > 245, "the transparent background is white, as the desk shows it"


def test_each_normalising_step_is_recorded(built):
    by_name, _, stdout, _ = built
    for orientation in range(2, 9):
        steps = by_name[f"scene-exif{orientation}"]["normalised"]
        assert steps[0].startswith("EXIF orientation "), steps
        assert steps[-1] == "stored as PNG (given as JPEG)"
        assert by_name[f"scene-exif{orientation}"]["format"] == "PNG"
    assert by_name["scene-exif1"]["normalised"] == []  # upright already: kept as given
    assert "transparency painted on white" in by_name["scene-transparent"]["normalised"]
    assert "CMYK converted to RGB" in by_name["scene-cmyk"]["normalised"]
    assert "I;16 grey scaled to 8 bits" in by_name["scene-grey16"]["normalised"]
    assert by_name["scene-palette"]["normalised"] == []  # a palette reads the same everywhere
    given = by_name["scene-exif6"]["original_sha256"]
    assert given != by_name["scene-exif6"]["image_id"] and len(given) == 64
    shown = next(line for line in stdout.splitlines() if "stored as a viewer shows them:" in line)
    # exif2's and exif3's JPEGs decode to the same upright pixels: one image, stored once
    assert "EXIF orientation applied 6" in shown and "I;16 grey scaled to 8 bits 1" in shown


@pytest.mark.parametrize("variant", [f"exif{o}" for o in range(1, 9)] + ["transparent", "cmyk"])
def test_questions_and_keys_are_the_upright_pictures(built, variant):
    _, asked, *_ = built
    upright = {q: key for q, (key, _) in asked["scene-upright"].items()}
    assert len(upright) >= 10
    assert upright[("template:position", "Where in the image is the blue rectangular object?")] == (
        "bottom right"
    )
    got = {q: key for q, (key, _) in asked[f"scene-{variant}"].items()}
    assert got == upright


def test_the_evidence_lies_where_the_object_was_drawn(built):
    _, asked, *_ = built
    question = ("template:position", "Where in the image is the blue rectangular object?")
    for orientation in range(1, 9):
        _, evidence = asked[f"scene-exif{orientation}"][question]
        box = [float(v) for v in re.search(r"\[([^\]]+)\]", evidence[0]).group(1).split(",")]
        assert all(abs(a - b) <= 3 for a, b in zip(box, BLUE_BOX, strict=True)), (orientation, box)


def test_why_a_picture_was_asked_nothing_is_said_per_picture(built):
    *_, stdout, tmp_path = built
    line = next(x for x in stdout.splitlines() if "pictures asked nothing at all" in x)
    assert line.strip().startswith("pictures asked nothing at all: 1; commonest reasons:")
    assert "no_objects 1 (e.g. blank-page.png)" in line
    status = subprocess.run(
        [sys.executable, "-m", "benchfoundry", "status", "--out", "runs/photos", "--json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert status.returncode == 0, status.stderr
    nothing = json.loads(status.stdout)["asked_nothing"]
    assert list(nothing) == [str(tmp_path / "photos" / "blank-page.png")]
    assert "no_objects" in nothing[str(tmp_path / "photos" / "blank-page.png")]
    rows = ds.dataset(tmp_path / "runs" / "photos" / "not_asked").to_table().to_pylist()
    blank = {(r["dimension"], r["template"]): r["reason"] for r in rows if "blank" in r["source"]}
    assert blank[("instances_counting", "count")] == "no_objects"
    assert blank[("text_understanding", "read_text")] == "no_text"


def test_a_folder_without_an_image_stops_the_build_naming_what_it_found(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "readme.txt").write_text("not a picture", encoding="utf-8")
    (folder / "photo.jpg").write_bytes(b"\x00" * 64)
    done = _build(tmp_path, "notes")
    assert done.returncode == 1
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ingest kept no image from folder:"), line
    assert "unsupported_extension 1" in line and "readme.txt" in line
    assert "not_an_image 1" in line and "photo.jpg" in line
    assert not (tmp_path / "runs" / "notes" / "visual_facts").exists()


def test_a_clip_stored_sideways_plays_upright():
    import av

    frames = []
    for i in range(6):  # the stored frames: wide, a bright bar along their top edge
        array = np.zeros((48, 64, 3), np.uint8)
        array[:8, :] = 255
        array[:, 60 - i : 64 - i] = 90
        frames.append(array)
    out = io.BytesIO()
    container = av.open(out, mode="w", format="mp4")
    stream = container.add_stream("libx264", rate=12)
    stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
    stream.set_display_rotation(90)  # shown turned a quarter anticlockwise, as phones write it
    for array in frames:
        for packet in stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    data = out.getvalue()
    info = video.inspect_clip(data)
    assert (info.width, info.height) == (48, 64)
    (first,) = video.frames_at(data, [0.0])
    shown = np.asarray(first, dtype=int)
    assert shown.shape == (64, 48, 3)
    assert shown[:, :6].mean() > 200 and shown[:, 20:].mean() < 120, "the bar is on the left"
    cut = video.cut(data, 0.0, 0.3)
    assert (video.inspect_clip(cut).width, video.inspect_clip(cut).height) == (48, 64)
    (again,) = video.frames_at(cut, [0.0])
    assert np.asarray(again, dtype=int)[:, :6].mean() > 200


def test_the_summary_counts_steps_by_kind_whatever_a_profile_is_called():
    from benchfoundry.tasks.ingest.stage import _step_kind

    # the demo's packaged photos carry profiles such as "Adobe RGB (1998)" and "Dot Gain 20%"
    assert _step_kind("colour profile 'Adobe RGB (1998)' converted to sRGB") == (
        "colour profile converted to sRGB"
    )
    assert _step_kind("EXIF orientation 8 applied (rotated 90 degrees anticlockwise)") == (
        "EXIF orientation applied"
    )
