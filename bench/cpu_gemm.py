"""How fast this CPU multiplies a local model's float32 layers: PyTorch's own (Intel MKL) against
oneDNN on packed weights (`gateway/local_gemm.py`), per layer shape of SmolLM2-135M and for the
model's whole forward pass over packed-scoring-sized input.

Prints GFLOP/s per shape (CPU seconds of this process, so that other work on the machine moves
them less than wall-clock ones) and the forward pass's seconds, with the largest difference in
logits between the two. Runs on the torch threads this process may use (`--threads` to pin).

    python bench/cpu_gemm.py
    python bench/cpu_gemm.py --threads 1 --repeat 20
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import time
from datetime import UTC, datetime

SHAPES = [  # SmolLM2-135M: (inputs, outputs) of its linear layers
    ("q, o", 576, 576),
    ("k, v", 576, 192),
    ("gate, up", 576, 1536),
    ("down", 1536, 576),
]


def _cpu_seconds(fn, repeat: int) -> float:
    fn()
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=2048, help="rows of input (a packed pass)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", type=int, help="torch threads (default: this process's)")
    parser.add_argument("--no-model", action="store_true", help="layer shapes only")
    args = parser.parse_args()

    import torch

    from benchfoundry.gateway.local_gemm import pack_linears, packed_linear, packing_problem
    from benchfoundry.gateway.local_hf import use_available_cores

    if args.threads:
        torch.set_num_threads(args.threads)
    else:
        use_available_cores()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{torch.get_num_threads()} torch threads, torch {torch.__version__}, load {load}"
    )
    linear = torch.nn.Linear(8, 8)
    if problem := packing_problem(linear):
        print(f"oneDNN's packed multiplication cannot be used here: {problem}")
        return 1
    print(f"{'layer':10} {'in':>5} {'out':>5} {'MKL GFLOP/s':>12} {'oneDNN GFLOP/s':>15} {'x':>6}")
    with torch.no_grad():
        for name, n_in, n_out in SHAPES:
            linear = torch.nn.Linear(n_in, n_out, bias=False).eval()
            packed = packed_linear(linear)
            x = torch.randn(args.tokens, n_in)
            flop = 2 * args.tokens * n_in * n_out
            mkl = _cpu_seconds(lambda: linear(x), args.repeat)  # noqa: B023
            dnn = _cpu_seconds(lambda: packed(x), args.repeat)  # noqa: B023
            print(
                f"{name:10} {n_in:5} {n_out:5} {flop / mkl / 1e9:12.0f} "
                f"{flop / dnn / 1e9:15.0f} {mkl / dnn:6.2f}"
            )
        if args.no_model:
            return 0
        from transformers import AutoModelForCausalLM

        from benchfoundry.gateway.local_smollm2 import smollm2_folder

        model = AutoModelForCausalLM.from_pretrained(smollm2_folder(), dtype=torch.float32).eval()
        fast = copy.deepcopy(model)
        replaced = pack_linears(fast, "cpu", {"cpu_gemm": "onednn"})
        ids = torch.randint(0, model.config.vocab_size, (4, args.tokens // 4))
        kept = {"logits_to_keep": 1}
        plain_s = _cpu_seconds(lambda: model(input_ids=ids, **kept), max(1, args.repeat // 5))
        fast_s = _cpu_seconds(lambda: fast(input_ids=ids, **kept), max(1, args.repeat // 5))
        full_a, full_b = model(input_ids=ids).logits, fast(input_ids=ids).logits
        print(
            f"SmolLM2-135M forward, 4 x {args.tokens // 4} tokens ({replaced} layers packed): "
            f"MKL {plain_s:.2f} CPU s, oneDNN {fast_s:.2f} CPU s, x{plain_s / fast_s:.2f}; "
            f"largest logit difference {float((full_a - full_b).abs().max()):.1e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
