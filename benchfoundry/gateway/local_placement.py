"""Where and in what precision a local `transformers` model runs, and how much it is fed at
once: the checkpoint's own dtype on a GPU where it names one, else bfloat16 where the GPU has
it and float16 where it does not; on a CPU, bfloat16 where the CPU multiplies it in hardware
(Intel AMX: SmolLM2's forward pass 3.4 times faster than in float32 on this project's 2-core
machine) and float32 elsewhere. SDPA attention. A model bigger than one
GPU's free memory (or a machine with several GPUs) is spread by `device_map="auto"` across
them, and onto the CPU past that. Packed likelihood passes are sized from free GPU memory.

A model's `options` override each choice: `dtype` (`bfloat16`, `float16`, `float32`),
`device_map` (any value `from_pretrained` takes), `attention` (`sdpa`, `eager`, ...),
`row_tokens` and `pass_tokens`. On a CPU, the environment variable `BENCHFOUNDRY_CPU_DTYPE`
(`float32` or `bfloat16`) replaces the default for every model that names no `dtype` of its
own: `BENCHFOUNDRY_CPU_DTYPE=float32 make demo` runs a machine with AMX as one without.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchfoundry.gateway.errors import ModelConfigError

_DTYPES = ("bfloat16", "float16", "float32")
CPU_DTYPE_VARIABLE = "BENCHFOUNDRY_CPU_DTYPE"
CPU_ROW_TOKENS = 512  # short rows: attention within a row grows with its length squared
CPU_PASS_TOKENS = 2048
MAX_PASS_TOKENS = 131072


def choose_dtype(config: Any, device: str, options: dict[str, Any]) -> Any:
    """The dtype to load in (see the module's text)."""
    import torch

    if (asked := options.get("dtype")) is not None:
        if asked not in _DTYPES:
            raise ModelConfigError(f"dtype {asked!r}: give one of {', '.join(_DTYPES)}")
        return getattr(torch, asked)
    if not device.startswith("cuda"):
        if forced := os.environ.get(CPU_DTYPE_VARIABLE, "").strip():
            if forced not in ("bfloat16", "float32"):
                raise ModelConfigError(
                    f"{CPU_DTYPE_VARIABLE}={forced!r}: give float32 or bfloat16 (or leave it "
                    "unset: bfloat16 where the CPU has AMX, float32 elsewhere)"
                )
            return getattr(torch, forced)
        return torch.bfloat16 if cpu_has_bfloat16_units() else torch.float32
    bf16 = torch.cuda.is_bf16_supported()
    named = _named_dtype(config)
    if named is None or (named == torch.bfloat16 and not bf16):
        return torch.bfloat16 if bf16 else torch.float16
    return named


def cpu_has_bfloat16_units() -> bool:
    """Whether this CPU has matrix units for bfloat16 (Intel AMX, Sapphire Rapids and later).
    Without them a CPU computes bfloat16 slower than float32."""
    import torch

    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    try:
        return bool(probe is not None and probe())
    except (RuntimeError, AttributeError):
        return False


def cpu_precision(device: str, options: dict[str, Any]) -> dict[str, str]:
    """What of a model's precision keys its answers in the response cache: on a CPU, the dtype
    where it is not float32 (answers in bfloat16 are not served as float32 ones, nor the other
    way round); float32 adds nothing, so that earlier caches stay valid. A GPU's dtype follows
    its checkpoint and is not keyed."""
    if device.startswith("cuda"):
        return {}
    name = str(choose_dtype(None, device, options)).removeprefix("torch.")  # checks `dtype`
    return {} if name == "float32" else {"dtype": name}


def _named_dtype(config: Any) -> Any:
    import torch

    for part in (config, getattr(config, "text_config", None)):
        value = getattr(part, "dtype", None) or getattr(part, "torch_dtype", None)
        if isinstance(value, str) and value in _DTYPES:
            return getattr(torch, value)
        if isinstance(value, torch.dtype) and str(value).removeprefix("torch.") in _DTYPES:
            return value
    return None


def load_arguments(source: str, config: Any, device: str, options: dict[str, Any]) -> dict:
    """Keyword arguments for `from_pretrained`: dtype, attention and, where it is needed,
    `device_map`."""
    import torch

    dtype = choose_dtype(config, device, options)
    arguments: dict[str, Any] = {
        "dtype": dtype,
        "attn_implementation": options.get("attention", "sdpa"),
    }
    if "device_map" in options:
        arguments["device_map"] = options["device_map"]
    elif device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info()
        size = weights_bytes(source, dtype)
        if torch.cuda.device_count() > 1 or (size is not None and size > 0.85 * free):
            arguments["device_map"] = "auto"
    return arguments


def weights_bytes(source: str, dtype: Any) -> int | None:
    """The model's weights in `dtype`, estimated from the checkpoint's files (None for a hub
    id, whose files are not here)."""
    import torch

    folder = Path(source)
    if not folder.is_dir():
        return None
    files = list(folder.glob("*.safetensors")) or list(folder.glob("*.bin"))
    if not files:
        return None
    stored = sum(f.stat().st_size for f in files)
    # Checkpoints are mostly stored in 16 bits; a float32 load doubles them.
    return stored * 2 if dtype == torch.float32 else stored


def placed_device(model: Any, device: str) -> str:
    """The device a model's inputs go to: its first parameter's, once placed."""
    try:
        return str(next(model.parameters()).device)
    except StopIteration:
        return device


def pack_sizes(model: Any, device: str, options: dict[str, Any]) -> tuple[int, int]:
    """(tokens per row, tokens per forward pass) of packed likelihood scoring: the model's
    options, else a CPU's few thousand, else what a GPU's free memory holds of this model's
    activations and kept logits (about half the positions of a pass keep a row of logits)."""
    row = int(options.get("row_tokens", CPU_ROW_TOKENS))
    if "pass_tokens" in options:
        return row, int(options["pass_tokens"])
    if not device.startswith("cuda"):
        return row, CPU_PASS_TOKENS
    import torch

    config = getattr(model.config, "text_config", None) or model.config
    hidden = int(getattr(config, "hidden_size", 2048))
    inner = int(getattr(config, "intermediate_size", 4 * hidden))
    vocab = int(getattr(config, "vocab_size", 50000))
    width = next(model.parameters()).element_size()
    per_token = (6 * hidden + 2 * inner) * width + vocab * 4 * 3 // 2
    free, _ = torch.cuda.mem_get_info()
    return row, max(row, min(MAX_PASS_TOKENS, int(0.6 * free / per_token)))
