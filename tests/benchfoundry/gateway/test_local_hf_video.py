"""A local transformers model that takes video, for real: a LLaVA-NeXT-Video with a one-layer
CLIP encoder and a one-layer Llama, random weights, a word-level tokenizer and a chat template,
asked through the gateway with `video: true`. transformers' video processors need torchvision,
which does not import beside the default venv's torch, so this runs in the venv that has the
pair (the SAM test's, `torchvision_python`)."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.slow

MAKE = """
import sys
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (
    CLIPVisionConfig, LlamaConfig, LlavaNextImageProcessor, LlavaNextVideoConfig,
    LlavaNextVideoForConditionalGeneration, LlavaNextVideoProcessor, LlavaNextVideoVideoProcessor,
    PreTrainedTokenizerFast,
)
words = ["<pad>", "<s>", "</s>", "<unk>", "<image>", "<video>", "what", "happens", "?", "user",
         "assistant", ":", "up", "down"]
vocab = {w: i for i, w in enumerate(words)}
tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>",
                               unk_token="<unk>", pad_token="<pad>")
fast.add_special_tokens({"additional_special_tokens": ["<image>", "<video>"]})
template = (
    "{% for m in messages %}{{ m['role'] }} : {% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image> {% elif c['type'] == 'video' %}<video> "
    "{% else %}{{ c['text'] }} {% endif %}{% endfor %}\\n{% endfor %}"
    "{% if add_generation_prompt %}assistant : {% endif %}"
)
small = {"size": {"shortest_edge": 32}, "crop_size": {"height": 32, "width": 32}}
processor = LlavaNextVideoProcessor(
    video_processor=LlavaNextVideoVideoProcessor(**small),
    image_processor=LlavaNextImageProcessor(**small, image_grid_pinpoints=[[32, 32]]),
    tokenizer=fast, patch_size=8, vision_feature_select_strategy="default",
    chat_template=template, image_token="<image>", video_token="<video>",
    num_additional_image_tokens=1,
)
config = LlavaNextVideoConfig(
    vision_config=CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, image_size=32, patch_size=8),
    text_config=LlamaConfig(vocab_size=len(words), hidden_size=16, intermediate_size=32,
                            num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                            max_position_embeddings=512, pad_token_id=0, bos_token_id=1,
                            eos_token_id=2),
    image_token_index=vocab["<image>"], video_token_index=vocab["<video>"],
    vision_feature_select_strategy="default", vision_feature_layer=-1,
    image_grid_pinpoints=[[32, 32]], spatial_pool_stride=2,
)
torch.manual_seed(0)
LlavaNextVideoForConditionalGeneration(config).save_pretrained(sys.argv[1])
processor.save_pretrained(sys.argv[1])
"""

ASK = """
import io, json, sys
import numpy as np
from PIL import Image
from benchfoundry.core.video import encode_clip
from benchfoundry.gateway import Gateway, GenerateParams
from benchfoundry.gateway.models import ModelSpec

clip = encode_clip([np.full((32, 32, 3), 8 * i, np.uint8) for i in range(12)], fps=12)
keyframe = io.BytesIO()
Image.new("RGB", (32, 32), (200, 0, 0)).save(keyframe, format="PNG")
shown = [{"type": "video", "value": clip, "start": 0.0, "end": 1.0, "keyframe": keyframe.getvalue()},
         {"type": "text", "value": "what happens ?"}]
gateway = Gateway()
model = ModelSpec(name="tiny-video", provider="hf", model=sys.argv[1], video=True, frames=4)
asked = gateway.generate(model, shown, GenerateParams(max_tokens=2))
alone = gateway.generate(model, shown[1:], GenerateParams(max_tokens=2))
scores = gateway.score_options(model, shown, ["up", "down"])
print(json.dumps({"with_clip": asked.tokens_in, "without": alone.tokens_in,
                  "out": asked.tokens_out, "scored": scores.summed}))
"""


def test_a_local_video_model_is_given_the_clip_itself(tmp_path, torchvision_python):
    env = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    made = subprocess.run(
        [str(torchvision_python), "-c", MAKE, str(tmp_path / "model")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    asked = subprocess.run(
        [str(torchvision_python), "-c", ASK, str(tmp_path / "model")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr[-3000:]
    result = json.loads(asked.stdout.strip().splitlines()[-1])
    # The clip's frames became the prompt's video tokens (4 frames, pooled), answered and scored.
    assert result["with_clip"] > result["without"] + 4 and 1 <= result["out"] <= 2
    assert len(result["scored"]) == 2 and all(s < 0 for s in result["scored"])
