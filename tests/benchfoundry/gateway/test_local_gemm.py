"""A CPU model's float32 linear layers multiplied by oneDNN on packed weights: the same logits
as PyTorch's own multiplication to float32 rounding, and a switch back per model or machine."""

import pytest

from benchfoundry.gateway import Gateway
from benchfoundry.gateway.errors import ModelConfigError
from benchfoundry.gateway.local_gemm import CPU_GEMM_VARIABLE, cpu_gemm, pack_linears
from benchfoundry.gateway.models import ModelSpec


def _tiny_llama():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=300,
        hidden_size=64,
        intermediate_size=160,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    return LlamaForCausalLM(config).eval()


def _linears(model):
    import torch

    return [m for m in model.modules() if type(m) is torch.nn.Linear]


def test_packed_layers_give_the_logits_of_torchs_own(monkeypatch):
    import copy

    import torch

    monkeypatch.delenv(CPU_GEMM_VARIABLE, raising=False)
    plain = _tiny_llama()
    packed = copy.deepcopy(plain)
    # 2 layers x (q, k, v, o, gate, up, down) + the output projection
    assert len(_linears(plain)) == 15
    assert pack_linears(packed, "cpu", {}) == 15
    assert _linears(packed) == []
    assert "oneDNN" in repr(packed.model.layers[0].mlp.up_proj)
    ids = torch.tensor([[5, 17, 42, 99, 3, 250, 7]])
    with torch.no_grad():
        want, got = plain(input_ids=ids).logits, packed(input_ids=ids).logits
    assert got.shape == (1, 7, 300)
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)


def test_torch_keeps_its_own_multiplication_per_model_or_for_the_machine(monkeypatch):
    monkeypatch.delenv(CPU_GEMM_VARIABLE, raising=False)
    model = _tiny_llama()
    assert pack_linears(model, "cpu", {"cpu_gemm": "torch"}) == 0
    assert len(_linears(model)) == 15
    monkeypatch.setenv(CPU_GEMM_VARIABLE, "torch")
    assert pack_linears(model, "cpu", {}) == 0
    assert cpu_gemm({"cpu_gemm": "onednn"}) == "onednn", "the model's own choice comes first"
    assert pack_linears(model, "cuda", {"cpu_gemm": "onednn"}) == 0, "a GPU model is left alone"


def test_an_unknown_choice_is_refused_naming_the_choices(monkeypatch):
    with pytest.raises(ModelConfigError, match="onednn, torch"):
        cpu_gemm({"cpu_gemm": "mkl"})
    monkeypatch.setenv(CPU_GEMM_VARIABLE, "blas")
    with pytest.raises(ModelConfigError, match="'blas'"):
        cpu_gemm({})


def test_a_bfloat16_model_is_left_as_it_is(monkeypatch):
    import torch

    monkeypatch.delenv(CPU_GEMM_VARIABLE, raising=False)
    model = _tiny_llama().to(torch.bfloat16)
    assert pack_linears(model, "cpu", {}) == 0
    assert len(_linears(model)) == 15


@pytest.mark.slow
def test_the_packaged_smollm2_runs_on_packed_layers_and_scores_as_before(monkeypatch):
    monkeypatch.delenv(CPU_GEMM_VARIABLE, raising=False)
    spec = {"dtype": "float32"}
    packed = Gateway({"m": ModelSpec(name="m", provider="smollm2", options=spec)})
    plain = Gateway(
        {"m": ModelSpec(name="m", provider="smollm2", options={**spec, "cpu_gemm": "torch"})}
    )
    options = ["blue", "green", "made of cheese and old shoes"]
    got = packed.score_options("m", "The sky on a clear day is", options)
    want = plain.score_options("m", "The sky on a clear day is", options)
    model = packed.provider("m").load()[0]
    assert "oneDNN" in repr(model.model.layers[0].self_attn.q_proj)
    assert got.summed == pytest.approx(want.summed, abs=1e-3)
    assert got.best(normalised=False) == want.best(normalised=False) == 0
    assert got.best(normalised=True) == want.best(normalised=True)
