"""Option scoring by packed prefix trees: many questions' likelihoods in a few large forward
passes, with no padding inside a row and no token run twice.

The prompts of a batch of questions and their options' tokens are laid out as a tree of
tokens (a trie: the chat template's opening, an image's facts, one question's words, then each
option's tokens but its last). Every node appears once. Several trees share one row of the
forward pass; a 4D attention mask lets each token see exactly its ancestors, and each token's
position is its depth, so every token computes what it would compute in its own question's
prompt run alone (tested against that, up to float rounding). Logits are taken only at the
nodes that predict an option token: the end of each prompt and the inner tokens of options.

Rows are filled up to `row_tokens` nodes and passes up to `pass_tokens` nodes in all (the
caller sizes both: a CPU wants a few thousand tokens a pass, a GPU as many as its memory
holds). A model that cannot take a custom mask (flash attention) or whose sliding window is
shorter than a prompt is scored by `local_scoring` instead (`can_pack`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchfoundry.gateway.errors import ProviderError, permanent
from benchfoundry.gateway.local_scoring import ScoringItem, option_scores
from benchfoundry.gateway.types import OptionScores


@dataclass
class _Row:
    """One row of a pass: a forest of token tries, as flat node lists (parents first)."""

    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    children: dict[tuple[int, int], int] = field(default_factory=dict)  # (parent, token) -> node
    # per question in the row: (item index, prompt end node, [option nodes but the last])
    items: list[tuple[int, int, list[list[int]]]] = field(default_factory=list)

    def node(self, parent: int, token: int) -> int:
        key = (parent, token)
        if key not in self.children:
            self.children[key] = len(self.tokens)
            self.tokens.append(token)
            self.parents.append(parent)
            self.depths.append(0 if parent < 0 else self.depths[parent] + 1)
        return self.children[key]

    def path(self, start: int, tokens: Sequence[int]) -> list[int]:
        nodes, at = [], start
        for token in tokens:
            at = self.node(at, token)
            nodes.append(at)
        return nodes

    def add(self, index: int, item: ScoringItem) -> None:
        end = self.path(-1, item.prompt)[-1]
        options = [self.path(end, ids[:-1]) for ids in item.encoded]
        self.items.append((index, end, options))

    def cost(self, item: ScoringItem) -> int:
        """The nodes `item` would add to this row (at most)."""
        at, shared = -1, 0
        for token in item.prompt:
            if (at, token) not in self.children:
                break
            at, shared = self.children[(at, token)], shared + 1
        return len(item.prompt) - shared + sum(len(ids) - 1 for ids in item.encoded)


def _starts_row(row: _Row, item: ScoringItem, last: ScoringItem, row_tokens: int) -> bool:
    """Whether `item` goes to a new row: it would make the row longer than `row_tokens` and
    is not about the image of the question before it (an image's questions share a row, so
    that the image's part of the prompt is never run twice)."""
    return len(row.tokens) + row.cost(item) > row_tokens and item.group != last.group


def can_pack(model: Any, items: Sequence[ScoringItem]) -> bool:
    """Whether `model` can score `items` by packed trees: an attention that takes a 4D mask,
    and no sliding window shorter than the longest prompt and option."""
    config = model.config
    if getattr(config, "_attn_implementation", "eager") not in ("eager", "sdpa"):
        return False
    window = getattr(config, "sliding_window", None)
    if not window or getattr(config, "use_sliding_window", True) is False:
        return True
    longest = max(len(i.prompt) + max(len(ids) for ids in i.encoded) for i in items)
    return longest < int(window)


def score_packed(
    model: Any,
    device: str,
    pad_id: int,
    items: Sequence[ScoringItem | ProviderError],
    row_tokens: int,
    pass_tokens: int,
) -> list[OptionScores | ProviderError]:
    """Scores for every item, in order; an item that is already a `ProviderError` stays one,
    and a pass that fails fails its own questions alone."""
    results: list[OptionScores | ProviderError | None] = [
        item if isinstance(item, ProviderError) else None for item in items
    ]
    # An image's questions side by side, and neighbours in token order share the most.
    order = sorted(
        (i for i, item in enumerate(items) if not isinstance(item, ProviderError)),
        key=lambda i: (repr(items[i].group), items[i].prompt),  # type: ignore[union-attr]
    )
    rows: list[_Row] = []
    last: ScoringItem | None = None
    for i in order:
        item = items[i]
        assert isinstance(item, ScoringItem)
        if last is None or _starts_row(rows[-1], item, last, row_tokens):
            rows.append(_Row())
        rows[-1].add(i, item)
        last = item
    passes: list[list[_Row]] = []
    for row in rows:
        if passes:
            width = max(len(r.tokens) for r in [*passes[-1], row])
            if (len(passes[-1]) + 1) * width <= pass_tokens:
                passes[-1].append(row)
                continue
        passes.append([row])
    while passes:
        chosen = passes.pop(0)
        try:
            for index, scores in _run_pass(model, device, pad_id, chosen, items):
                results[index] = scores
        except (RuntimeError, ValueError) as exc:
            if _out_of_memory(exc) and len(chosen) > 1:  # halve the pass and go on
                half = len(chosen) // 2
                passes[:0] = [chosen[:half], chosen[half:]]
                _free_memory(device)
                continue
            failure = permanent("local_model_error", f"{type(exc).__name__}: {exc}")
            for row in chosen:
                for index, _, _ in row.items:
                    results[index] = failure
    return results  # type: ignore[return-value]


def _keeps_positions(model: Any) -> bool:
    """Whether the model computes logits only at the positions a 2D boolean `logits_to_keep`
    names: its forward slices with transformers' `slice_logits_to_keep` (a few older models
    slice by hand and take an int or 1D positions only). Otherwise it computes them all."""
    return _slices_by_mask(type(model))


@functools.lru_cache(maxsize=32)
def _slices_by_mask(model_class: type) -> bool:
    try:
        return "slice_logits_to_keep(" in inspect.getsource(model_class.forward)
    except (OSError, TypeError):  # no source to read: compute every position
        return False


def _out_of_memory(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _free_memory(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _run_pass(
    model: Any,
    device: str,
    pad_id: int,
    rows: Sequence[_Row],
    items: Sequence[ScoringItem | ProviderError],
) -> list[tuple[int, OptionScores]]:
    import numpy as np
    import torch

    width = max(len(row.tokens) for row in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    positions = np.zeros((len(rows), width), dtype=np.int64)
    allowed = np.zeros((len(rows), width, width), dtype=bool)
    keep = np.zeros((len(rows), width), dtype=bool)
    for r, row in enumerate(rows):
        n = len(row.tokens)
        ids[r, :n] = row.tokens
        positions[r, :n] = row.depths
        for node, parent in enumerate(row.parents):  # parents come before their children
            if parent >= 0:
                allowed[r, node] = allowed[r, parent]
            allowed[r, node, node] = True
        allowed[r, range(n, width), range(n, width)] = True  # padding sees itself alone
        for _, end, options in row.items:
            keep[r, end] = True
            for nodes in options:
                keep[r, nodes] = True
    dtype = next(model.parameters()).dtype
    mask = torch.zeros((len(rows), 1, width, width), dtype=dtype)
    mask.masked_fill_(~torch.from_numpy(allowed)[:, None], torch.finfo(dtype).min)
    keep_t = torch.from_numpy(keep)
    with torch.no_grad():
        sliced = _keeps_positions(model)
        logits = model(
            input_ids=torch.from_numpy(ids).to(device),
            attention_mask=mask.to(device),
            position_ids=torch.from_numpy(positions).to(device),
            use_cache=False,
            **({"logits_to_keep": keep_t.to(device)} if sliced else {}),
        ).logits
        if not sliced:  # a model that computes every position's logits: keep the ones needed
            logits = logits[keep_t.to(logits.device)]
        logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
    # Kept logits come row by row, node by node: where each kept node landed.
    at = np.cumsum(keep.reshape(-1)) - 1
    out = []
    for r, row in enumerate(rows):
        base = r * width
        for index, end, options in row.items:
            item = items[index]
            assert isinstance(item, ScoringItem)
            summed = []
            for ids_j, nodes in zip(item.encoded, options, strict=True):
                total = float(logprobs[at[base + end], ids_j[0]])
                for k in range(1, len(ids_j)):
                    total += float(logprobs[at[base + nodes[k - 1]], ids_j[k]])
                summed.append(total)
            out.append((index, option_scores(item, summed)))
    return out
