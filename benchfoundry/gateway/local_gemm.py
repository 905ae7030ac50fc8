"""A local model's float32 linear layers on a CPU, multiplied by oneDNN with weights packed once.

PyTorch's CPU build multiplies a float32 `nn.Linear` with Intel MKL, which on a CPU of another
vendor takes its AVX2 path whatever the CPU has. oneDNN, also inside every x86 PyTorch build,
picks its kernels from the instruction sets the CPU reports. On this project's 2-core AMD EPYC
(AVX-512, no AMX) it multiplies SmolLM2's layers 2.3 times faster than MKL, in float32 with
the same inputs and outputs (`bench/likelihood_cost.py` prints the figures). The weights are
reordered once, at load, into the blocked layout oneDNN's kernels read (what PyTorch's own
compiler does for frozen CPU models).

The arithmetic is float32 either way; a sum taken in another order rounds differently in the
last bits, so a score may move by a few millionths and a near tie between two options may turn
(said in docs/models.md). A probe at load checks one layer against `nn.Linear` on random input;
where the op is missing (a build without oneDNN, an ARM CPU) or disagrees, the model keeps its
layers and the log says why. A model's `options.cpu_gemm: torch` keeps PyTorch's own
multiplication for it; the environment variable `BENCHFOUNDRY_CPU_GEMM=torch` does so for all.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

from benchfoundry.gateway.errors import ModelConfigError

log = logging.getLogger(__name__)

CPU_GEMM_VARIABLE = "BENCHFOUNDRY_CPU_GEMM"
_CHOICES = ("onednn", "torch")


def cpu_gemm(options: dict[str, Any]) -> str:
    """Which library multiplies a CPU model's float32 linear layers: the model's `cpu_gemm`,
    else the environment's, else oneDNN."""
    chosen = str(options.get("cpu_gemm") or os.environ.get(CPU_GEMM_VARIABLE) or "onednn")
    chosen = chosen.strip().lower()
    if chosen not in _CHOICES:
        raise ModelConfigError(f"cpu_gemm {chosen!r}: give one of {', '.join(_CHOICES)}")
    return chosen


def pack_linears(model: Any, device: str, options: dict[str, Any]) -> int:
    """Replace each float32 `nn.Linear` of a CPU model by one that multiplies with oneDNN on a
    packed copy of its weight; the count replaced (0 where none is, and why is logged)."""
    import torch

    if not device.startswith("cpu") or cpu_gemm(options) != "onednn":
        return 0
    linears = [
        (name, module)
        for name, module in model.named_modules()
        if type(module) is torch.nn.Linear
        and module.weight.dtype == torch.float32
        and module.weight.device.type == "cpu"
    ]
    if not linears:
        return 0
    if (problem := packing_problem(linears[0][1])) is not None:
        log.info("linear layers stay with PyTorch's multiplication: %s", problem)
        return 0
    for name, module in linears:
        parent, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent) if parent else model, child, packed_linear(module))
    return len(linears)


def packed_linear(linear: Any) -> Any:
    """A `torch.nn.Module` in place of a float32 `nn.Linear`: its weight, reordered once for
    oneDNN, multiplied by oneDNN (the class is made on first use: torch loads lazily)."""
    return _module_class()(linear)


@functools.cache
def _module_class() -> type:
    import torch

    class _Packed(torch.nn.Module):
        def __init__(self, linear: torch.nn.Linear) -> None:
            super().__init__()
            self.in_features = linear.in_features
            self.out_features = linear.out_features
            weight = linear.weight.detach()
            self.packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
            self.bias = None if linear.bias is None else linear.bias.detach()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if x.dtype != torch.float32 or x.requires_grad:
                raise RuntimeError(
                    "a layer packed for oneDNN takes float32 input without gradients"
                )
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")

        def extra_repr(self) -> str:
            return f"in_features={self.in_features}, out_features={self.out_features}, oneDNN"

    return _Packed


def packing_problem(linear: Any) -> str | None:
    """None when oneDNN's packed multiplication gives what `linear` gives on random input (to
    float32 rounding); else what went wrong."""
    import torch

    try:
        packed = packed_linear(linear)
        x = torch.randn(3, 7, linear.in_features, generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            want, got = linear(x), packed(x)
    except (RuntimeError, AttributeError, NotImplementedError) as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if got.shape != want.shape or not torch.allclose(got, want, rtol=1e-4, atol=1e-4):
        return "oneDNN's product differs from PyTorch's beyond float32 rounding"
    return None
