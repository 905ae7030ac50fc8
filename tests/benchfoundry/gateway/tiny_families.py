"""Tiny randomly initialised vision-language models of real `transformers` families, built
without any download: each family's own config, model and processor classes, a word-level
tokenizer carrying the family's special tokens, small images (32 to 64 pixels), one-layer
encoders and text models of 16 to 32 dimensions, and a chat template written here that places
the family's image and video tokens the way the family's own template does. `family_checks.py`
asks them through the gateway.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

WORDS = ["what", "colour", "is", "it", "red", "blue", "green", "happens", "up", "down", "?"]
WORDS += ["user", "assistant", "User", "Assistant", "model", ":", "system"]

# Qwen's chat markup (Qwen2-VL, Qwen2.5-VL, and the Qwen2 text models of LLaVA-OneVision and
# InternVL); `{image}` and `{video}` are the family's placeholders.
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}IMAGE{% elif c['type'] == 'video' %}VIDEO"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def chatml(image: str, video: str) -> str:
    return CHATML.replace("IMAGE", image).replace("VIDEO", video)


def word_tokenizer(specials: list[str], **named: str) -> Any:
    """A word-level tokenizer over `WORDS` with `specials` as special tokens; `named` are the
    family's named tokens (`bos_token`, `boi_token`, ...), all of them in `specials`."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<unk>", *specials, *WORDS]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    usual = {k: named.pop(k) for k in ("bos_token", "eos_token") if k in named}
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens=named,
        **usual,
    )


def _text(tokenizer: Any, **fields: Any) -> dict[str, Any]:
    """A one-layer text model's config fields for `tokenizer` (its whole vocabulary)."""
    return {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "max_position_embeddings": 2048,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        **fields,
    }


def _save(folder: Path, model_class: Any, config: Any, processor: Any) -> Path:
    import torch

    torch.manual_seed(0)
    model_class(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def qwen2_vl(folder: Path, *, version: str = "2") -> Path:
    """Qwen2-VL (or Qwen2.5-VL with `version="2.5"`): dynamic resolution, 14-pixel patches
    merged 2 by 2, multimodal RoPE; images up to 56 x 56 pixels (4 tokens)."""
    import transformers as tf

    specials = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>"]
    specials += ["<|image_pad|>", "<|video_pad|>"]
    tokenizer = word_tokenizer(specials, eos_token="<|im_end|>")
    pixels = {"min_pixels": 28 * 28, "max_pixels": 56 * 56}
    family = "Qwen2_5_VL" if version == "2.5" else "Qwen2VL"
    processor = getattr(tf, f"{family}Processor")(
        image_processor=tf.Qwen2VLImageProcessor(**pixels),
        video_processor=tf.Qwen2VLVideoProcessor(**pixels),
        tokenizer=tokenizer,
        chat_template=chatml(
            "<|vision_start|><|image_pad|><|vision_end|>",
            "<|vision_start|><|video_pad|><|vision_end|>",
        ),
    )
    # A small RoPE base: positions turn the keys far, so a misplaced position shows in scores.
    rope = {"rope_type": "default", "rope_theta": 2.0, "mrope_section": [2, 3, 3]}
    vision: dict[str, Any] = {"depth": 1, "num_heads": 2, "patch_size": 14}
    if version == "2.5":
        vision |= {"hidden_size": 16, "intermediate_size": 32, "out_hidden_size": 32}
        vision |= {"window_size": 56, "fullatt_block_indexes": [0]}
    else:
        vision |= {"embed_dim": 16, "hidden_size": 32, "mlp_ratio": 2}
    ids = tokenizer.convert_tokens_to_ids
    config = getattr(tf, f"{family}Config")(
        text_config=_text(tokenizer, rope_parameters=rope),
        vision_config=vision,
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )
    return _save(folder, getattr(tf, f"{family}ForConditionalGeneration"), config, processor)


def qwen2_5_vl(folder: Path) -> Path:
    return qwen2_vl(folder, version="2.5")


def idefics3(folder: Path, *, smolvlm: bool = False) -> Path:
    """Idefics3 (or SmolVLM, SmolVLM2 with its video processor, with `smolvlm=True`): a SigLIP
    encoder on 32-pixel crops of 8-pixel patches, pixel-shuffled 2 by 2 (4 tokens a crop);
    an image is split into crops of 32 pixels plus a global view, as the family does."""
    import transformers as tf

    specials = ["<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>"]
    specials += ["<global-img>", "<video>"]
    tokenizer = word_tokenizer(specials, eos_token="<end_of_utterance>")
    sizes = {"size": {"longest_edge": 64}, "max_image_size": {"longest_edge": 32}}
    template = (  # the family's own: "User:<image>what ...<end_of_utterance>\nAssistant:"
        "<|im_start|>{% for m in messages %}{{ m['role'] | capitalize }}"
        "{% if m['content'] is string %}: {{ m['content'] }}{% else %}"
        "{% if m['content'][0]['type'] in ['image', 'video'] %}:{% else %}: {% endif %}"
        "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>"
        "{% elif c['type'] == 'video' %}<video>{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
        "{% endif %}<end_of_utterance>\n{% endfor %}"
        "{% if add_generation_prompt %}Assistant:{% endif %}"
    )
    family = "SmolVLM" if smolvlm else "Idefics3"
    parts: dict[str, Any] = {
        "image_processor": getattr(tf, f"{family}ImageProcessor")(**sizes),
        "tokenizer": tokenizer,
    }
    if smolvlm:
        parts["video_processor"] = tf.SmolVLMVideoProcessor(**sizes)
    processor = getattr(tf, f"{family}Processor")(**parts, image_seq_len=4, chat_template=template)
    vision = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": 32, "patch_size": 8}
    # The processor adds its own tokens (<row_1_col_1>, ...): the vocabulary is counted after.
    config = getattr(tf, f"{family}Config")(
        text_config={"model_type": "llama", **_text(processor.tokenizer)},
        vision_config=vision,
        scale_factor=2,
        image_token_id=processor.tokenizer.convert_tokens_to_ids("<image>"),
    )
    return _save(folder, getattr(tf, f"{family}ForConditionalGeneration"), config, processor)


def smolvlm(folder: Path) -> Path:
    return idefics3(folder, smolvlm=True)


def _siglip(**fields: Any) -> dict[str, Any]:
    """A one-layer SigLIP encoder on 32-pixel images of 8-pixel patches (16 patches)."""
    return {
        "model_type": "siglip_vision_model",
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "image_size": 32,
        "patch_size": 8,
        **fields,
    }


def llava_onevision(folder: Path) -> Path:
    """LLaVA-OneVision: SigLIP features of the whole image and of its anyres crops (grids up to
    64 x 64 pixels) for one image, the base features alone for each of several; a video's
    frames pooled 2 by 2; a Qwen2 text model."""
    import transformers as tf

    specials = ["<|im_start|>", "<|im_end|>", "<image>", "<video>"]
    tokenizer = word_tokenizer(specials, eos_token="<|im_end|>")
    grids = [[32, 32], [32, 64], [64, 32], [64, 64]]
    small = {"size": {"height": 32, "width": 32}}
    processor = tf.LlavaOnevisionProcessor(
        image_processor=tf.LlavaOnevisionImageProcessor(**small, image_grid_pinpoints=grids),
        video_processor=tf.LlavaOnevisionVideoProcessor(**small),
        tokenizer=tokenizer,
        num_image_tokens=16,
        vision_feature_select_strategy="full",
        chat_template=chatml("<image>\n", "<video>\n"),
    )
    config = tf.LlavaOnevisionConfig(
        text_config={"model_type": "qwen2", **_text(tokenizer)},
        vision_config=_siglip(),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
        vision_feature_select_strategy="full",
        image_grid_pinpoints=grids,
    )
    return _save(folder, tf.LlavaOnevisionForConditionalGeneration, config, processor)


def internvl(folder: Path) -> Path:
    """InternVL (3, transformers-native): a ViT on 32-pixel tiles of 8-pixel patches, pixel-
    shuffled by half (4 tokens a tile) between <img> and </img>; a video as numbered frames;
    a Qwen2 text model."""
    import transformers as tf

    specials = ["<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
    tokenizer = word_tokenizer(
        specials,
        eos_token="<|im_end|>",
        start_image_token="<img>",
        end_image_token="</img>",
        context_image_token="<IMG_CONTEXT>",
        video_token="<video>",
    )
    small = {"size": {"height": 32, "width": 32}}
    processor = tf.InternVLProcessor(
        image_processor=tf.GotOcr2ImageProcessor(
            **small, crop_to_patches=True, min_patches=1, max_patches=4
        ),
        video_processor=tf.InternVLVideoProcessor(**small),
        tokenizer=tokenizer,
        image_seq_length=4,
        chat_template=chatml("<IMG_CONTEXT>\n", "<video>\n"),
    )
    vision = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1}
    vision |= {"num_attention_heads": 2, "image_size": [32, 32], "patch_size": [8, 8]}
    config = tf.InternVLConfig(
        text_config={"model_type": "qwen2", **_text(tokenizer)},
        vision_config=vision,
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"),
        image_seq_length=4,
        downsample_ratio=0.5,
    )
    return _save(folder, tf.InternVLForConditionalGeneration, config, processor)


def _gemma(tokenizer: Any, model_type: str) -> dict[str, Any]:
    """A one-layer Gemma text model (Gemma 2 or 3): one key-value head of 16 dimensions."""
    fields = _text(tokenizer, num_key_value_heads=1, head_dim=16, query_pre_attn_scalar=16)
    return {"model_type": model_type, **fields, "sliding_window": 512}


def gemma3(folder: Path) -> Path:
    """Gemma 3: SigLIP patches average-pooled to 4 soft tokens an image, between
    <start_of_image> and <end_of_image>; the image tokens attend to each other both ways."""
    import transformers as tf

    specials = ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>"]
    specials += ["<end_of_image>", "<image_soft_token>"]
    tokenizer = word_tokenizer(
        specials,
        bos_token="<bos>",
        eos_token="<eos>",
        boi_token="<start_of_image>",
        eoi_token="<end_of_image>",
        image_token="<image_soft_token>",
    )
    template = (  # the family's own turns; an image is <start_of_image>, expanded by the processor
        "{{ bos_token }}{% for m in messages %}<start_of_turn>"
        "{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
        "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
        "{% if c['type'] == 'image' %}<start_of_image>{% else %}{{ c['text'] }}{% endif %}"
        "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}"
        "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
    )
    processor = tf.Gemma3Processor(
        image_processor=tf.Gemma3ImageProcessor(size={"height": 32, "width": 32}),
        tokenizer=tokenizer,
        image_seq_length=4,
        chat_template=template,
    )
    ids = tokenizer.convert_tokens_to_ids
    config = tf.Gemma3Config(
        text_config=_gemma(tokenizer, "gemma3_text"),
        vision_config=_siglip(),
        mm_tokens_per_image=4,
        boi_token_index=ids("<start_of_image>"),
        eoi_token_index=ids("<end_of_image>"),
        image_token_index=ids("<image_soft_token>"),
    )
    return _save(folder, tf.Gemma3ForConditionalGeneration, config, processor)


def paligemma2(folder: Path) -> Path:
    """PaliGemma 2: SigLIP patches (16 an image) before `<bos>` and the prompt, which attends
    to the image and itself both ways; a Gemma 2 text model. No chat template, as the family's
    checkpoints have none: the gateway writes the image token and the text."""
    import transformers as tf

    tokenizer = word_tokenizer(["<bos>", "<eos>", "<image>"], bos_token="<bos>", eos_token="<eos>")
    image_processor = tf.SiglipImageProcessor(size={"height": 32, "width": 32})
    image_processor.image_seq_length = 16
    processor = tf.PaliGemmaProcessor(image_processor=image_processor, tokenizer=tokenizer)
    # The processor adds its location and segmentation tokens: the vocabulary is counted after.
    text = _gemma(processor.tokenizer, "gemma2")
    config = tf.PaliGemmaConfig(
        text_config=text,
        vision_config=_siglip(projection_dim=32),
        projection_dim=32,
        hidden_size=32,
        vocab_size=text["vocab_size"],
        image_token_index=processor.tokenizer.convert_tokens_to_ids("<image>"),
    )
    return _save(folder, tf.PaliGemmaForConditionalGeneration, config, processor)


FAMILIES: dict[str, Callable[[Path], Path]] = {
    "qwen2_vl": qwen2_vl,
    "qwen2_5_vl": qwen2_5_vl,
    "smolvlm": smolvlm,
    "idefics3": idefics3,
    "llava_onevision": llava_onevision,
    "gemma3": gemma3,
    "paligemma2": paligemma2,
    "internvl": internvl,
}
