"""What a local vision-language model is given: its processor's inputs for one prompt of text,
images and clips, and the one piece of model state that must not outlive a prompt.

Generic rules, proven on tiny models of each family (tests/benchfoundry/gateway/test_families.py):
the prompt is the processor's own chat template with an `image` or `video` entry where each
part stands; images go nested per prompt; a clip goes as its sampled frames with metadata that
says when they were taken; everything the processor returns (pixel grids, token types, pixel
masks, image counts) reaches the model's forward pass.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from benchfoundry.gateway.errors import permanent
from benchfoundry.gateway.messages import ImagePart, Part, TextPart, VideoPart, clip_frames


def vision_inputs(
    processor: Any, parts: Sequence[Part], system: str | None, frames: int, name: str
) -> Any:
    """The processor's tensors for one prompt. `ProviderError`: `no_video` for a clip given to a
    processor that takes none, `local_model_error` for a prompt the processor refuses."""
    from PIL import Image

    content: list[dict[str, Any]] = []
    images, videos, metadata = [], [], []
    for part in parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.value})
        elif isinstance(part, ImagePart):
            images.append(Image.open(io.BytesIO(part.data)).convert("RGB"))
            content.append({"type": "image"})
        elif isinstance(part, VideoPart):  # the model's `video: true`: its processor's videos
            videos.append(clip_frames(part, frames))
            metadata.append(frame_metadata(part, frames))
            content.append({"type": "video"})
    if videos and getattr(processor, "video_processor", None) is None:
        raise permanent(
            "no_video",
            f"model '{name}': its processor takes no videos; leave `video` off to show it frames",
        )
    if getattr(processor, "chat_template", None):
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": content}
        ]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    else:
        prompt = plain_prompt(processor, parts, system, name)
    extra: dict[str, Any] = {}
    if videos:  # frames already sampled: the processor must not sample them again
        extra = {"videos": videos, "video_metadata": metadata, "do_sample_frames": False}
    try:
        # Images nested per prompt (one prompt here): a flat list reads, to some processors
        # (LLaVA-OneVision's), as one prompt per image, each laid out as a single image.
        inputs = processor(
            text=prompt, images=[images] if images else None, return_tensors="pt", **extra
        )
    except (ValueError, TypeError) as exc:
        raise permanent(
            "local_model_error", f"model '{name}': its processor refused the prompt: {exc}"
        ) from None
    inputs.pop("labels", None)  # training targets (PaliGemma's processor makes them), not inputs
    return inputs


def plain_prompt(processor: Any, parts: Sequence[Part], system: str | None, name: str) -> str:
    """The prompt for a processor with no chat template (PaliGemma's checkpoints have none):
    the processor's image (video) token where each image (clip) stands, texts on lines of their
    own after the system text. The processor adds what its family wants around them (PaliGemma:
    `<bos>` after the images, a newline at the end)."""
    prompt, after_text = "", False
    for part in ([TextPart(value=system)] if system else []) + list(parts):
        if isinstance(part, TextPart):
            prompt += ("\n" if after_text else "") + part.value
            after_text = True
            continue
        kind = "image" if isinstance(part, ImagePart) else "video"
        token = getattr(processor, f"{kind}_token", None)
        if not token:
            raise permanent(
                "local_model_error",
                f"model '{name}': its processor has no chat template and no {kind} token to "
                "place; give the model folder a chat template (chat_template.jinja)",
            )
        prompt, after_text = prompt + token, False
    return prompt


def frame_metadata(part: VideoPart, n: int) -> dict[str, Any]:
    """When the `n` frames of `clip_frames` were taken, for processors that write timestamps
    into the prompt (SmolVLM2) or place frames in time (Qwen2.5-VL's temporal positions). They
    are the middles of `n` equal parts of the stretch, so they are described as the odd frames
    of a video of `2n` frames over it."""
    duration = max(part.end - part.start, 1e-3)
    return {
        "total_num_frames": 2 * n,
        "fps": 2 * n / duration,
        "duration": duration,
        "frames_indices": [2 * i + 1 for i in range(n)],
    }


def forget_rope_offset(model: Any) -> None:
    """Models with multimodal RoPE (the Qwen-VL families) keep the last prompt's position offset
    on the model and continue a cached prompt from it; a prompt without images sets none, so it
    would continue from the previous prompt's. Forgotten before each prompt."""
    for part in (model, getattr(model, "model", None)):
        if getattr(part, "rope_deltas", None) is not None:
            part.rope_deltas = None
