"""The SAM and captioner backends on tiny randomly initialised models built by the tests: the
real loading and inference paths, with meaningless output."""

import pytest
import torch

from benchfoundry.devtools.synthetic import make_scenes, render
from benchfoundry.extractors.registry import create

pytestmark = pytest.mark.slow


def _tiny_sam(folder):
    from transformers import (
        SamConfig,
        SamImageProcessor,
        SamMaskDecoderConfig,
        SamModel,
        SamProcessor,
        SamPromptEncoderConfig,
        SamVisionConfig,
    )

    torch.manual_seed(0)
    config = SamConfig(
        vision_config=SamVisionConfig(
            hidden_size=32,
            output_channels=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=64,
            patch_size=16,
            mlp_dim=64,
            global_attn_indexes=[0],
            window_size=2,
            num_pos_feats=8,
        ),
        prompt_encoder_config=SamPromptEncoderConfig(
            hidden_size=16, image_size=64, patch_size=16, mask_input_channels=4
        ),
        mask_decoder_config=SamMaskDecoderConfig(
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            mlp_dim=32,
            iou_head_hidden_dim=16,
        ),
    )
    SamModel(config).save_pretrained(folder)
    SamProcessor(
        SamImageProcessor(size={"longest_edge": 64}, pad_size={"height": 64, "width": 64})
    ).save_pretrained(folder)
    return folder


def _tiny_blip(folder):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        BertTokenizerFast,
        BlipConfig,
        BlipForConditionalGeneration,
        BlipImageProcessor,
        BlipProcessor,
        BlipTextConfig,
        BlipVisionConfig,
    )

    words = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "a",
        "red",
        "square",
        "on",
        "grey",
        "picture",
        "of",
    ]
    wordpiece = Tokenizer(models.WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    wordpiece.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = BertTokenizerFast(
        tokenizer_object=wordpiece,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        bos_token="[CLS]",
        eos_token="[SEP]",
    )
    processor = BlipProcessor(BlipImageProcessor(size={"height": 32, "width": 32}), tokenizer)
    torch.manual_seed(0)
    config = BlipConfig(
        text_config=BlipTextConfig(
            vocab_size=len(words),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=64,
            bos_token_id=2,
            sep_token_id=3,
            pad_token_id=0,
        ),
        vision_config=BlipVisionConfig(
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        ),
    )
    BlipForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def test_transformers_sam_generates_regions(tmp_path):
    segmenter = create(
        "segmenter",
        "hf-sam",
        {
            "checkpoint": str(_tiny_sam(tmp_path / "sam")),
            "pred_iou_thresh": 0.0,
            "stability_score_thresh": 0.0,
            "points_per_side": 4,
        },
    )
    image = render(make_scenes(n_objects=1, n_text=0, seed=5)[0])
    regions = segmenter.segment(image)
    assert regions, "a random model still returns masks once thresholds are off"
    for region in regions:
        assert region.mask.shape == (image.height, image.width)
        assert 0 <= region.box[0] < region.box[2] <= image.width and region.area == int(
            region.mask.sum()
        )


def test_transformers_captioner_captions_images(tmp_path):
    captioner = create(
        "captioner", "hf", {"model": str(_tiny_blip(tmp_path / "blip")), "max_new_tokens": 5}
    )
    captions = captioner.caption(render(make_scenes(n_objects=1, n_text=0, seed=6)[0]))
    assert len(captions) == 1, "random weights still say some words of the vocabulary"
    assert captions[0].backend == "hf" and captions[0].model.endswith("blip")
    assert set(captions[0].text.split()) <= {"a", "red", "square", "on", "grey", "picture", "of"}


def _sizes_apart():
    """Three scenes at different sizes and shapes: the processors resize them to one size."""
    first, second, third = (render(s) for s in make_scenes(n_objects=3, n_text=0, seed=7))
    return [first, second.resize((200, 90)), third.resize((300, 460))]


def test_transformers_sam_batched_equals_one_by_one(tmp_path):
    settings = {
        "checkpoint": str(_tiny_sam(tmp_path / "sam")),
        "pred_iou_thresh": 0.0,
        "stability_score_thresh": 0.0,
        "nms_thresh": 1.0,  # every region up to max_regions, not only the few NMS keeps
        "points_per_side": 4,
        "points_per_batch": 6,  # the point prompts in three chunks
        "batch_size": 3,
    }
    segmenter = create("segmenter", "hf-sam", settings)
    assert segmenter.batch_size == 3
    images = _sizes_apart()
    batched = segmenter.segment_many(images)
    alone = [segmenter.segment(image) for image in images]
    assert [len(r) for r in batched] == [len(r) for r in alone] == [12, 12, 12]
    for image, many, one in zip(images, batched, alone, strict=True):
        assert [(r.box, r.area) for r in many] == [(r.box, r.area) for r in one]
        assert all((a.mask == b.mask).all() for a, b in zip(many, one, strict=True))
        assert all(a.mask.shape == (image.height, image.width) for a in many)
        # The scores are the same up to float32 rounding of a batched matrix product.
        assert [a.score for a in many] == pytest.approx([b.score for b in one], rel=1e-5)


@pytest.mark.parametrize("prompt", [None, "a picture of"])
def test_transformers_captioner_batched_equals_one_by_one(tmp_path, prompt):
    settings = {"model": str(_tiny_blip(tmp_path / "blip")), "max_new_tokens": 5, "prompt": prompt}
    captioner = create("captioner", "hf", {**settings, "batch_size": 3})
    assert captioner.batch_size == 3 and create("captioner", "hf", settings).batch_size == 1
    images = _sizes_apart()
    batched = captioner.caption_many(images, [None, "ignored", None])
    assert batched == [captioner.caption(image) for image in images]
    if prompt is None:  # the tiny BLIP ends a prompt with [SEP] and says nothing after it
        assert all(len(c) == 1 and c[0].text for c in batched)
