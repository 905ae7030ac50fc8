"""The local model path on a GPU: random-weight models at real sizes, through the gateway as
the answering engine calls it, beside plain transformers on the same device.

    python bench/gpu_check.py [--sizes 135m,1.7b] [--questions 4000] [--device cuda]
                              [--chunk 512] [--vlm 256] [--sam 20] [--json out.json]

For each size (SmolLM2-135M's shape and a 1.7B Llama shape, random weights, the packaged
SmolLM2 tokenizer or `--tokenizer PATH`) it builds groups of 8 four-option questions that share
a ~260-token prefix, scores them with `Gateway.score_options_many` in the engine's chunks
(`score_batch`), and prints:
- questions per second and prompt tokens per second of the gateway's likelihood path (packed
  prefix trees), and questions per second of the unpacked path (`pack: false`) beside it;
- plain transformers' forward rate on the same device and dtype (batches of 64 sequences of
  320 tokens, SDPA, logits of the last position only), for comparison;
- peak GPU memory, the dtype the gateway loaded, whether every score is finite;
- whether the packed choices equal one-by-one choices (`pack: false`, the first 64 questions)
  and CPU float32 choices (the first 16);
- the generate path's tokens per second (32 greedy prompts of 32 new tokens, batched).
`--vlm N` also asks a LLaVA of about 220M parameters (CLIP ViT-B/16 and the 135M text shape,
random weights) N questions with an image each: likelihood and generate questions per second,
finite scores, batched = one by one. `--sam N` also times the `hf-sam` segmenter at SAM ViT-B's
size (random weights) on N synthetic scenes, one image at a time and in batches of `--sam-batch`
(default 8): images, masks and point prompts per second of each, and whether the batches found
the same regions (reported, not a failure: a GPU's kernels may round a batch differently), on
the GPU when there is one.
It runs on a CPU too (`--device cpu --sizes tiny --questions 64`: the suite's smoke test), but
its figures mean something on a GPU. Nothing is downloaded: weights are random, the tokenizer
is the packaged one. The GPU machine needs this repository and its Python dependencies
(pydantic, imagehash, PyWavelets besides torch and transformers).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHAPES = {
    # hidden, intermediate, layers, heads, kv heads
    "tiny": (64, 128, 2, 4, 2),
    "135m": (576, 1536, 30, 9, 3),
    "1.7b": (2048, 8192, 24, 32, 32),
}
WORDS = [
    "red",
    "blue",
    "green",
    "yellow",
    "circle",
    "square",
    "triangle",
    "star",
    "left",
    "right",
    "top",
    "bottom",
    "middle",
    "large",
    "small",
    "near",
    "far",
    "above",
    "below",
    "beside",
    "inside",
    "table",
    "chair",
    "door",
    "window",
    "sign",
    "text",
    "number",
    "count",
    "person",
]


def build_model(folder: Path, shape: str, tokenizer, dtype) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    hidden, inner, layers, heads, kv = SHAPES[shape]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=inner,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(dtype)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def workload(n: int, seed: int = 0) -> list[tuple[list[dict], list[str]]]:
    """Groups of 8 four-option questions sharing a ~260-token prefix (an image's facts)."""
    rng = random.Random(seed)
    items = []
    for group in range((n + 7) // 8):
        facts = " ".join(rng.choice(WORDS) for _ in range(240))
        for k in range(8):
            question = f"Question {group}.{k}: " + " ".join(rng.choice(WORDS) for _ in range(14))
            options = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in "ABCD"
            ]
            messages = [
                {"type": "text", "value": f"[Facts]\n{facts}"},
                {"type": "text", "value": f"{question}\nAnswer:"},
            ]
            items.append((messages, options))
    return items[:n]


def score(gateway, name: str, items, chunk: int):
    out = []
    for at in range(0, len(items), chunk):
        out += gateway.score_options_many(name, items[at : at + chunk])
    return out


def choices(results) -> list[int]:
    return [r.best(normalised=True) for r in results]


def forward_rate(model, device: str, batch: int = 64, width: int = 320) -> float:
    """Plain transformers: tokens per second of forward passes over random ids."""
    import torch

    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (batch, width), device=device)
    with torch.no_grad():
        model(input_ids=ids, logits_to_keep=1)
        sync(device)
        start, passes = time.perf_counter(), 0
        while time.perf_counter() - start < 3 or passes < 2:
            model(input_ids=ids, logits_to_keep=1)
            passes += 1
        sync(device)
    return passes * batch * width / (time.perf_counter() - start)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def check_size(shape: str, args, tokenizer, work: Path) -> dict:
    import torch

    from benchfoundry.gateway import Gateway, GenerateParams, ModelSpec, Request

    cuda = args.device.startswith("cuda")
    stored = torch.bfloat16 if cuda else torch.float32
    folder = build_model(work / shape, shape, tokenizer, stored)
    options = {"device": args.device, "score_batch": args.chunk}
    specs = {
        "packed": ModelSpec(name="packed", provider="hf", model=str(folder), options=options),
        "alone": ModelSpec(
            name="alone", provider="hf", model=str(folder), options={**options, "pack": False}
        ),
        "cpu": ModelSpec(
            name="cpu",
            provider="hf",
            model=str(folder),
            options={"device": "cpu", "dtype": "float32"},
        ),
    }
    gateway = Gateway(specs)
    items = workload(args.questions)
    provider = gateway.provider("packed")
    model, tok, _ = provider.load()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    # A gateway with no response cache replays nothing: the warmed one is timed (a new one
    # would load the model again inside the timing).
    score(gateway, "packed", items[: args.chunk], args.chunk)  # warm-up, not timed
    sync(args.device)
    start = time.perf_counter()
    results = score(gateway, "packed", items, args.chunk)
    sync(args.device)
    seconds = time.perf_counter() - start
    prompt_tokens = sum(
        len(tok(" ".join(m["value"] for m in msgs))["input_ids"]) for msgs, _ in items
    )
    finite = all(math.isfinite(v) for r in results for v in r.summed)
    # The unpacked path (grouped prefixes, padded rows), on the first 256 questions, loaded
    # and warmed before it is timed.
    score(gateway, "alone", items[:2], args.chunk)
    sync(args.device)
    start = time.perf_counter()
    unpacked = score(gateway, "alone", items[:256], args.chunk)
    unpacked_rate = len(unpacked) / (time.perf_counter() - start)
    alone = [gateway.score_options("alone", msgs, opts) for msgs, opts in items[:64]]
    cpu = [gateway.score_options("cpu", msgs, opts) for msgs, opts in items[:16]]
    prompts = [
        Request("packed", f"Describe {w} in one sentence.", GenerateParams(max_tokens=32))
        for w in WORDS[:32]
    ]
    sync(args.device)
    start = time.perf_counter()
    replies = gateway.generate_many(prompts)
    sync(args.device)
    gen_seconds = time.perf_counter() - start
    return {
        "size": shape,
        "device": args.device,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "parameters_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "questions": len(items),
        "questions_per_s": round(len(items) / seconds, 1),
        "prompt_tokens_per_s": round(prompt_tokens / seconds),
        "unpacked_questions_per_s": round(unpacked_rate, 1),
        "plain_forward_tokens_per_s": round(forward_rate(model, provider.device)),
        "generate_tokens_per_s": round(sum(r.tokens_out for r in replies) / gen_seconds, 1),
        "peak_gpu_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
        "all_finite": finite,
        "batched_equals_one_by_one": choices(results[:64]) == choices(alone),
        "equals_cpu_float32": choices(results[:16]) == choices(cpu),
    }


def build_vlm(folder: Path, tokenizer, dtype) -> Path:
    """A LLaVA of about 220M parameters: CLIP ViT-B/16 on 224-pixel images (196 patches an
    image) and the 135M Llama shape, random weights, SmolLM2's tokenizer with an `<image>`
    token and a ChatML template that places each image."""
    import copy

    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}"
        "{{ m['content'] }}{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}"
        "<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}
        ),
        tokenizer=tokenizer,
        patch_size=16,
        vision_feature_select_strategy="default",
        chat_template=template,
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    hidden, inner, layers, heads, kv = SHAPES["135m"]
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(image_size=224, patch_size=16),  # ViT-B/16's defaults
        text_config=LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=inner,
            num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
            max_position_embeddings=2048, pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        ),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )  # fmt: skip
    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).to(dtype).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def check_vlm(args, tokenizer, work: Path) -> dict:
    """The VLM through the gateway: questions with an image each, answered by generation and
    ranked by likelihood (one question at a time: prompts with images are not packed)."""
    import torch

    from benchfoundry.devtools.synthetic import make_scenes, render
    from benchfoundry.gateway import Gateway, GenerateParams, ModelSpec, Request

    cuda = args.device.startswith("cuda")
    folder = build_vlm(work / "llava-220m", tokenizer, torch.bfloat16 if cuda else torch.float32)
    spec = ModelSpec(name="vlm", provider="hf", model=str(folder), options={"device": args.device})
    gateway = Gateway({"vlm": spec})
    pictures = []
    for scene in make_scenes(n_objects=8, n_text=0, seed=4):
        buffer = io.BytesIO()
        render(scene).save(buffer, format="PNG")
        pictures.append(buffer.getvalue())
    items = [
        (
            [{"type": "image", "value": pictures[i % len(pictures)]}]
            + [{"type": "text", "value": f"Question {i}: which shape is largest?\nAnswer:"}],
            ["a red circle", "a blue square", "a green triangle", "a yellow star"],
        )
        for i in range(args.vlm)
    ]
    model, _, _ = gateway.provider("vlm").load()
    gateway.score_options_many("vlm", items[:2])  # warm-up
    sync(args.device)
    start = time.perf_counter()
    results = gateway.score_options_many("vlm", items)
    sync(args.device)
    scored = len(results) / (time.perf_counter() - start)
    requests = [Request("vlm", m, GenerateParams(max_tokens=16)) for m, _ in items]
    start = time.perf_counter()
    replies = gateway.generate_many(requests)
    sync(args.device)
    generated = time.perf_counter() - start
    return {
        "size": "llava-220m",
        "device": args.device,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "parameters_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "questions": len(items),
        "likelihood_questions_per_s": round(scored, 2),
        "generate_questions_per_s": round(len(items) / generated, 2),
        "generate_tokens_per_s": round(sum(r.tokens_out for r in replies) / generated, 1),
        "all_finite": all(math.isfinite(v) for r in results for v in r.summed),
        "batched_equals_one_by_one": [r.best(normalised=True) for r in results[:8]]
        == [gateway.score_options("vlm", m, o).best(normalised=True) for m, o in items[:8]],
    }


def check_sam(args, work: Path) -> dict:
    """The `hf-sam` segmenter at SAM ViT-B's size (transformers' default SAM configuration),
    random weights, on synthetic scenes: images and masks per second one image at a time
    (`segment`) and over batches (`segment_many`), and whether the batches found the same
    regions (boxes and areas equal, scores to 1e-4)."""
    import torch
    from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

    from benchfoundry.devtools.synthetic import make_scenes, render
    from benchfoundry.extractors.registry import create

    folder = work / "sam-vit-b"
    torch.manual_seed(0)
    SamModel(SamConfig()).save_pretrained(folder)
    SamProcessor(image_processor=SamImageProcessor()).save_pretrained(folder)
    settings = {
        "checkpoint": str(folder),
        "pred_iou_thresh": 0.0,
        "stability_score_thresh": 0.0,
        "batch_size": args.sam_batch,
    }
    segmenter = create("segmenter", "hf-sam", settings)
    images = [render(scene) for scene in make_scenes(n_objects=args.sam, n_text=0, seed=3)]
    size = segmenter.batch_size
    segmenter.segment(images[0])  # warm-up
    segmenter.segment_many(images[:size])
    sync(args.device)
    start = time.perf_counter()
    alone = [segmenter.segment(image) for image in images]
    sync(args.device)
    alone_s = time.perf_counter() - start
    start = time.perf_counter()
    batched = [
        r
        for at in range(0, len(images), size)
        for r in segmenter.segment_many(images[at : at + size])
    ]
    sync(args.device)
    batched_s = time.perf_counter() - start
    points = len(images) * segmenter.points_per_side**2
    same = all(
        [(r.box, r.area) for r in a] == [(r.box, r.area) for r in b]
        and all(abs(x.score - y.score) <= 1e-4 for x, y in zip(a, b, strict=True))
        for a, b in zip(alone, batched, strict=True)
    )
    found = sum(len(regions) for regions in alone)
    return {
        "extractor": "hf-sam (ViT-B size, random weights)",
        "device": segmenter.device,
        "images": len(images),
        "images_per_s": rate(len(images), alone_s),
        "masks_per_s": rate(found, alone_s),
        "point_masks_per_s": rate(points, alone_s),
        "batch_size": size,
        "batched_images_per_s": rate(len(images), batched_s),
        "batched_masks_per_s": rate(sum(len(regions) for regions in batched), batched_s),
        "batched_point_masks_per_s": rate(points, batched_s),
        "batched_equals_one_by_one": same,
    }


def rate(count: int, seconds: float) -> float:
    """Per second, to three significant figures (a CPU's SAM rates are well under one)."""
    return float(f"{count / seconds:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="135m,1.7b")
    parser.add_argument("--questions", type=int, default=4000)
    parser.add_argument("--chunk", type=int, default=512, help="questions per gateway call")
    parser.add_argument("--device", default=None, help="cuda (default when there is one) or cpu")
    parser.add_argument("--tokenizer", type=Path, help="a tokenizer folder (default: SmolLM2's)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--sam", type=int, default=0, help="also time hf-sam on this many scenes")
    parser.add_argument("--sam-batch", type=int, default=8, help="hf-sam's images per batch")
    parser.add_argument("--vlm", type=int, default=0, help="also ask a 220M LLaVA this many")
    args = parser.parse_args()
    import torch
    from transformers import AutoTokenizer

    from benchfoundry.core import env

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    work = Path(tempfile.mkdtemp(prefix="bench-gpu-check-"))
    env.configure(work, console_level="CRITICAL")
    if args.tokenizer is None:
        from benchfoundry.gateway.local_smollm2 import smollm2_folder

        args.tokenizer = smollm2_folder()
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    print(
        f"device {args.device}"
        + (f" ({torch.cuda.get_device_name()})" if args.device.startswith("cuda") else "")
    )
    rows = []
    for shape in args.sizes.split(","):
        row = check_size(shape.strip(), args, tokenizer, work)
        rows.append(row)
        print(json.dumps(row))
    if args.vlm:
        row = check_vlm(args, tokenizer, work)
        rows.append(row)
        print(json.dumps(row))
    if args.sam:
        row = check_sam(args, work)
        rows.append(row)
        print(json.dumps(row))
        print(
            f"hf-sam one by one: {row['images_per_s']} images/s, {row['masks_per_s']} masks/s; "
            f"batches of {row['batch_size']}: {row['batched_images_per_s']} images/s, "
            f"{row['batched_masks_per_s']} masks/s; same regions: {row['batched_equals_one_by_one']}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    bad = [
        r["size"]
        for r in rows
        if "size" in r and not (r["all_finite"] and r["batched_equals_one_by_one"])
    ]
    if bad:
        sys.exit(f"not clean: {', '.join(bad)}")


if __name__ == "__main__":
    main()
