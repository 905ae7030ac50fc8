"""The `sam` segmenter for real: Meta's `segment-anything` in a venv of its own (torch 2.14.1 with
torchvision 0.29.1, the pair that imports together; the default venv keeps torch 2.13.0), a
vit_b built through `sam_model_registry` with random weights and saved as a `.pth` (once per
machine, beside the venv), and the
extract stage's `sam` path over two images as a user runs it (`benchfoundry build`, both images
through SAM's image encoder in one batch), checking that SAM's masks become the images'
instances, the same as for an image on its own.

The venv (`~/.cache/benchfoundry/venv-sam`, about 5.5 GB, a minute from local files) is made
once per machine and reused while its pins match; it holds only torch, torchvision and
segment-anything, and reaches benchfoundry and its other dependencies through the default
venv's site-packages, after its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchfoundry.core.records import VisualFactsRecord
from benchfoundry.devtools.synthetic import write_corpus
from benchfoundry.storage.tables import RunFolder

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

# A random vit_b predicts no mask the automatic generator keeps (its quality head and stability
# filters drop them all); its quality head is set to say 1.0 and its mask logits scaled so that
# the masks it draws are kept. The masks mean nothing; the path from SAM to instances is real.
CHECKPOINT = """
import sys, torch
from segment_anything import sam_model_registry
torch.manual_seed(0)
sam = sam_model_registry["vit_b"](checkpoint=None)
head = sam.mask_decoder.iou_prediction_head.layers[-1]
with torch.no_grad():
    head.weight.zero_()
    head.bias.fill_(1.0)
    for mlp in sam.mask_decoder.output_hypernetworks_mlps:
        mlp.layers[-1].weight.mul_(1000.0)
torch.save(sam.state_dict(), sys.argv[1])
import segment_anything, torchvision
print(torch.__version__, torchvision.__version__)
"""


ONE_BY_ONE = """
import io, json, sys
from PIL import Image
from benchfoundry.core.records import ImageRecord
from benchfoundry.extractors.segment_sam import SegmentAnything
from benchfoundry.storage.tables import RunFolder
sam = SegmentAnything({"checkpoint": sys.argv[1], "sam_model_type": "vit_b", "points_per_side": 4})
image = RunFolder(sys.argv[2]).table(ImageRecord).records()[-1]
regions = sam.segment(Image.open(io.BytesIO(image.bytes)).convert("RGB"))
print(json.dumps({image.image_id: [list(r.box) for r in regions]}))
"""


def _random_checkpoint(sam_python: Path) -> Path:
    """The random vit_b's `.pth`, made once per machine beside the SAM venv (for these pins and
    this script; a folder without its stamp is made again)."""
    import hashlib

    from benchfoundry.devtools.cached_venv import build_once, cache_root

    stamp = hashlib.sha256(f"{sam_python.resolve()}\n{CHECKPOINT}".encode()).hexdigest()[:16]

    def make(folder: Path) -> None:
        folder.mkdir(parents=True)
        made = subprocess.run(
            [str(sam_python), "-c", CHECKPOINT, str(folder / "sam_vit_b_random.pth")],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr[-2000:]
        (folder / "versions.txt").write_text(made.stdout)

    folder = build_once(cache_root() / "sam-vit_b-random", stamp, make)
    versions = (folder / "versions.txt").read_text()
    assert versions.startswith("2.14.1") and " 0.29.1" in versions, versions
    return folder / "sam_vit_b_random.pth"


def test_sam_masks_become_instances_in_the_extract_stage(
    tmp_path, torchvision_python, prefect_server
):
    sam_python = torchvision_python
    url, env = prefect_server
    checkpoint = _random_checkpoint(sam_python)
    write_corpus(tmp_path / "scenes", n_objects=2, n_text=0, seed=4)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: sam\n"
        "sources: [{kind: folder, path: scenes/images}]\n"
        "stages: [ingest, extract]\n"
        "options:\n"
        f"  extract: {{segmenter: sam, segmenter_checkpoint: {checkpoint}, sam_model_type: vit_b,"
        " sam_points_per_side: 4, ocr: none, model_batch_size: 2}\n"
        "output: run\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(sam_python), "-m", "benchfoundry", "build", str(spec), "--json"],
        capture_output=True, text=True, timeout=900, cwd=REPO,
        env={**env, "PREFECT_API_URL": url},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    extract = json.loads(done.stdout)["summaries"]["extract"]
    assert extract["images_extracted"] == 2
    segmenter = next(e for e in extract["extractors"] if e["role"] == "segmenter")
    assert segmenter["backend"] == "sam" and segmenter["model"] == str(checkpoint)
    facts = RunFolder(tmp_path / "run").table(VisualFactsRecord).records()
    assert len(facts) == 2
    for record in facts:
        assert record.instances, f"{record.image_id}: no instance from SAM's masks"
        for instance in record.instances:
            x0, y0, x1, y1 = instance.box
            assert x1 > x0 and y1 > y0 and instance.mask_area > 0
        (sam,) = [e for e in record.extractors if e.role == "segmenter"]
        assert sam.backend == "sam" and sam.version == "1.0"
    # The build encoded the two images in one batch (model_batch_size 2); given one of them on
    # its own, SAM finds the same regions in it.
    alone = subprocess.run(
        [str(sam_python), "-c", ONE_BY_ONE, str(checkpoint), str(tmp_path / "run")],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip
    assert alone.returncode == 0, alone.stderr[-2000:]
    regions = json.loads(alone.stdout)
    assert len(regions) == 1 and set(regions) < {r.image_id for r in facts}
    for record in (r for r in facts if r.image_id in regions):
        boxes = [tuple(i.box) for i in record.instances]
        found = [tuple(b) for b in regions[record.image_id]]
        assert boxes and len(boxes) <= len(found)
        for box in boxes:
            near = (max(abs(a - b) for a, b in zip(box, f, strict=True)) for f in found)
            assert min(near) <= 1.0, (box, found)
