"""Packed likelihood scoring (prefix trees in a 4D mask) against the unpacked path, on the
packaged SmolLM2: the same numbers however the questions are cut into rows and passes, and a
pass that runs out of memory is halved, not failed."""

import pytest

from benchfoundry.gateway import Gateway
from benchfoundry.gateway.local_packing import _windowed, can_pack
from benchfoundry.gateway.local_placement import choose_dtype, pack_sizes
from benchfoundry.gateway.messages import TextPart
from benchfoundry.gateway.models import ModelSpec

pytestmark = pytest.mark.slow

FACTS = {
    "a": "[Image described by extracted visual facts]\nA red circle above a blue square.",
    "b": "[Image described by extracted visual facts]\nThe words OPEN DAILY on a green door.",
}
ASKED = [
    ("a", "What colour is the circle?", ["bright red", "blue", "green", "purple"]),
    ("a", "What colour is the circle?", ["blue", "bright red", "purple", "green"]),  # same words
    ("a", "Which shape is below the circle?", ["a square", "a star", "a square with a dot"]),
    ("b", "What do the words say?", ["OPEN DAILY", "CLOSED FOR THE WINTER", "SALE", "EXIT"]),
    (None, "Is the sky blue?", ["yes", "no"]),
    ("b", "Is it a door?", ["yes, it is a door", "no"]),
]


def _items():
    return [
        (
            ([TextPart(value=FACTS[image])] if image else [])
            + [TextPart(value=f"Question: {q}\nAnswer:")],
            options,
        )
        for image, q, options in ASKED
    ]


def _provider(**options):
    """The packaged SmolLM2, in float32 unless `dtype` says otherwise: packing is checked to
    float32's precision (bfloat16 rounds differently in each layout)."""
    options.setdefault("dtype", "float32")
    return Gateway({"m": ModelSpec(name="m", provider="smollm2", options=options)}).provider("m")


def test_packed_scores_equal_unpacked_ones_however_rows_and_passes_are_cut():
    reference = _provider(pack=False).score_options_many(_items())
    for cut in ({}, {"row_tokens": 40, "pass_tokens": 60}, {"row_tokens": 1, "pass_tokens": 1}):
        provider = _provider(**cut)
        packed = provider.score_options_many(_items())
        for a, b in zip(packed, reference, strict=True):
            assert a.n_tokens == b.n_tokens
            assert a.summed == pytest.approx(b.summed, abs=1e-3), cut
            assert a.best(normalised=True) == b.best(normalised=True)
        # SmolLM2's chat template opens every prompt with the same system turn (about thirty
        # tokens): run once before the rows, not once per row.
        layout = provider.layout
        assert layout.shared > 20, (cut, layout)
        if cut.get("row_tokens") == 1:  # a row per image (and one for the question without)
            assert layout.rows == 3, layout
        asked_alone = sum(
            len(provider._inputs(parts, None)["input_ids"][0]) for parts, _ in _items()
        )
        assert layout.shared + layout.nodes < asked_alone, "no prompt token is run twice"
    # The next call continues from the opening kept by the model: it is not run again.
    hits = provider._prefixes.hits
    again = provider.score_options_many(_items()[:2])
    assert provider._prefixes.hits == hits + 1
    assert again[1].summed == pytest.approx(reference[1].summed, abs=1e-3)


def test_a_pass_out_of_memory_is_halved_until_it_fits():
    """The model's forward raises the error CUDA raises when a pass holds more than one row:
    every question is still scored, as it is unpacked."""
    import torch

    provider = _provider(row_tokens=1, pass_tokens=100000)
    model, _, _ = provider.load()
    forward = model.forward
    rows_seen = []

    def tight(*args, **kwargs):
        rows_seen.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return forward(*args, **kwargs)

    model.forward = tight
    try:
        packed = provider.score_options_many(_items())
    finally:
        model.forward = forward
    # (the shared opening runs first, in one row of its own)
    assert max(rows_seen) > 1 and rows_seen[-1] == 1, "a wide pass was tried, then halved"
    reference = _provider(pack=False).score_options_many(_items())
    for a, b in zip(packed, reference, strict=True):
        assert a.summed == pytest.approx(b.summed, abs=1e-3)


def _cpu_flags() -> set[str]:
    """The CPU's feature flags as the kernel lists them (/proc/cpuinfo)."""
    from pathlib import Path

    text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split()}


def test_a_cpu_loads_in_bfloat16_where_it_has_the_units_and_an_asked_dtype_is_checked():
    import torch

    from benchfoundry.gateway.errors import ModelConfigError
    from benchfoundry.gateway.local_placement import cpu_has_bfloat16_units

    default = Gateway({"m": ModelSpec(name="m", provider="smollm2")}).provider("m")
    model, _, _ = default.load()
    # the matrix units are Intel's AMX tiles, which the kernel lists among the CPU's flags
    # (this project's machine, an AMD EPYC, has none: float32)
    units = "amx_tile" in _cpu_flags()
    assert cpu_has_bfloat16_units() == units
    assert next(model.parameters()).dtype == (torch.bfloat16 if units else torch.float32)
    assert model.config._attn_implementation == "sdpa"
    # Answers in bfloat16 are cached apart from float32 ones; float32 keeps the old key.
    assert default.cache_identity().get("dtype") == ("bfloat16" if units else None)
    assert "dtype" not in _provider().cache_identity()
    assert _provider(dtype="bfloat16").cache_identity()["dtype"] == "bfloat16"
    assert choose_dtype(model.config, "cpu", {"dtype": "bfloat16"}) == torch.bfloat16
    assert choose_dtype(model.config, "cpu", {"dtype": "float32"}) == torch.float32
    assert choose_dtype(model.config, "cpu", {}) == next(model.parameters()).dtype
    with pytest.raises(ModelConfigError, match="dtype 'half'"):
        choose_dtype(model.config, "cpu", {"dtype": "half"})
    with pytest.raises(ModelConfigError, match="dtype 'half'"):  # before any call is keyed
        _provider(dtype="half").cache_identity()
    assert pack_sizes(model, "cpu", {}) == (512, 2048)
    assert pack_sizes(model, "cpu", {"pass_tokens": 99}) == (512, 99)


def test_bfloat16_packs_to_the_same_choices_as_float32():
    """bfloat16 rounds each layout differently (a few hundredths of a nat per token, up to 3%
    of a summed score), and the questions here, none a near tie, are chosen alike in every
    layout and precision."""
    reference = _provider(pack=False).score_options_many(_items())
    for cut in ({}, {"row_tokens": 40, "pass_tokens": 60}):
        packed = _provider(dtype="bfloat16", **cut).score_options_many(_items())
        for a, b in zip(packed, reference, strict=True):
            assert a.n_tokens == b.n_tokens
            assert a.summed == pytest.approx(b.summed, rel=0.05), cut
            assert a.best(normalised=True) == b.best(normalised=True), cut


def test_models_that_cannot_take_a_tree_mask_are_not_packed():
    """Flash attention takes no 4D mask; a sliding window shorter than a prompt would see
    more than the model does: both go the unpacked way."""
    from types import SimpleNamespace

    from benchfoundry.gateway.local_scoring import ScoringItem

    item = ScoringItem(group=None, prompt=list(range(50)), options=["a"], encoded=[[1, 2]])

    def model(**config):
        return SimpleNamespace(config=SimpleNamespace(**config))

    assert can_pack(model(_attn_implementation="sdpa"), [item])
    assert not can_pack(model(_attn_implementation="flash_attention_2"), [item])
    assert not can_pack(model(_attn_implementation="sdpa", sliding_window=32), [item])
    assert can_pack(model(_attn_implementation="sdpa", sliding_window=4096), [item])
    assert can_pack(
        model(_attn_implementation="sdpa", sliding_window=32, use_sliding_window=False), [item]
    )
    # A windowed model packs (a long window) but its rows run the shared opening themselves:
    # its cache keeps a window of keys, not the opening's.
    assert _windowed(model(sliding_window=4096)) and not _windowed(model())
    assert not _windowed(model(sliding_window=4096, use_sliding_window=False))


def test_the_environment_forces_a_cpu_precision_for_models_that_name_none(monkeypatch):
    """BENCHFOUNDRY_CPU_DTYPE=float32 runs a CPU with AMX as one without (a model's own dtype
    still wins; a GPU is not concerned); an unknown value is refused, saying what it takes."""
    import torch

    from benchfoundry.gateway.errors import ModelConfigError
    from benchfoundry.gateway.local_placement import cpu_precision

    monkeypatch.setenv("BENCHFOUNDRY_CPU_DTYPE", "float32")
    assert choose_dtype(None, "cpu", {}) == torch.float32
    assert cpu_precision("cpu", {}) == {}  # float32 answers keep their cache keys
    assert choose_dtype(None, "cpu", {"dtype": "bfloat16"}) == torch.bfloat16
    monkeypatch.setenv("BENCHFOUNDRY_CPU_DTYPE", "bfloat16")
    assert choose_dtype(None, "cpu", {}) == torch.bfloat16
    assert cpu_precision("cpu", {}) == {"dtype": "bfloat16"}
    monkeypatch.setenv("BENCHFOUNDRY_CPU_DTYPE", "fp16")
    with pytest.raises(ModelConfigError, match="BENCHFOUNDRY_CPU_DTYPE='fp16': give float32"):
        choose_dtype(None, "cpu", {})
