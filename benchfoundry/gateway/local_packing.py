"""Option scoring by packed prefix trees: many questions' likelihoods in a few large forward
passes, with no token run twice and little padding.

The prompts of a batch of questions and their options' tokens are laid out as a tree of
tokens (a trie: an image's facts, one question's words, then each option's tokens but its
last). The prompt's opening that every question of the call shares (the chat template's
system turn, the facts' heading) is run once and kept in the model's `PrefixCache`: every row
continues from its keys and values, so it is neither repeated per row nor recomputed by the
next call. Below it, every node appears once. An image's questions form one tree, and trees
are packed into rows of about `row_tokens` nodes (largest first, each into the first row with
room), rows into passes of about `pass_tokens` nodes (rows of like length together, so that
little of a pass is padding). A 4D attention mask lets each token see the shared opening and
exactly its ancestors, and each token's position is the opening's length plus its depth, so
every token computes what it would compute in its own question's prompt run alone (tested
against that, up to float rounding). Logits are taken only at the nodes that predict an option
token: the end of each prompt and the inner tokens of options.

Short rows keep attention cheap (a row's cost grows with its length squared) while the shared
opening costs nothing per row. The caller sizes both (a CPU wants a few thousand tokens a
pass, a GPU as many as its memory holds). A model that cannot take a custom mask (flash
attention) or whose sliding window is shorter than a prompt is scored by `local_scoring`
instead (`can_pack`).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchfoundry.gateway.errors import ProviderError, permanent
from benchfoundry.gateway.local_scoring import (
    PrefixCache,
    ScoringItem,
    cache_argument,
    common_prefix,
    option_scores,
    prefix_keys,
)
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

    def add(self, index: int, item: ScoringItem, shared: int) -> None:
        """Lay out `item`'s prompt below the shared opening (`shared` tokens), then its options."""
        end = self.path(-1, item.prompt[shared:])[-1]
        options = [self.path(end, ids[:-1]) for ids in item.encoded]
        self.items.append((index, end, options))


@dataclass
class Layout:
    """How a call's questions were laid out: what the bench and the docs count."""

    shared: int = 0  # tokens of the opening every question shares, run once (or kept)
    passes: int = 0
    rows: int = 0
    nodes: int = 0  # tokens run below the opening: every node once
    padding: int = 0  # places of the passes that hold no token


def _rows(items: Sequence[ScoringItem | ProviderError], shared: int, row_tokens: int) -> list[_Row]:
    """An image's questions as one tree (its facts once), trees packed into rows of about
    `row_tokens` nodes: largest first, each into the first row with room (a tree larger than
    a row has a row of its own)."""
    groups: dict[str, list[int]] = {}
    for i in sorted(
        (i for i, item in enumerate(items) if not isinstance(item, ProviderError)),
        key=lambda i: (repr(items[i].group), items[i].prompt),  # type: ignore[union-attr]
    ):
        groups.setdefault(repr(items[i].group), []).append(i)  # type: ignore[union-attr]
    trees = []
    for members in groups.values():
        tree = _Row()
        for i in members:
            tree.add(i, items[i], shared)  # type: ignore[arg-type]
        trees.append((len(tree.tokens), members))
    trees.sort(key=lambda t: -t[0])
    rows: list[tuple[int, list[int]]] = []  # (nodes, item indices)
    for size, members in trees:
        at = next((k for k, (n, _) in enumerate(rows) if n + size <= row_tokens), None)
        if at is None:
            rows.append((size, list(members)))
        else:
            rows[at] = (rows[at][0] + size, rows[at][1] + members)
    laid = []
    for _, members in rows:
        row = _Row()
        for i in members:
            row.add(i, items[i], shared)  # type: ignore[arg-type]
        laid.append(row)
    return laid


def _passes(rows: list[_Row], pass_tokens: int) -> list[list[_Row]]:
    """Rows into passes of at most `pass_tokens` places (a row longer than that alone), the
    longest rows together so that a pass's padding (up to its longest row) stays small."""
    passes: list[list[_Row]] = []
    for row in sorted(rows, key=lambda r: -len(r.tokens)):
        if passes and (len(passes[-1]) + 1) * len(passes[-1][0].tokens) <= pass_tokens:
            passes[-1].append(row)
        else:
            passes.append([row])
    return passes


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


def _windowed(model: Any) -> bool:
    """Whether the model attends through a sliding window (its cache keeps a window, not every
    key): its rows run the opening themselves rather than continue from kept keys."""
    config = getattr(model.config, "text_config", None) or model.config
    window = getattr(config, "sliding_window", None)
    return bool(window) and getattr(config, "use_sliding_window", True) is not False


def score_packed(
    model: Any,
    device: str,
    pad_id: int,
    items: Sequence[ScoringItem | ProviderError],
    row_tokens: int,
    pass_tokens: int,
    prefixes: PrefixCache | None = None,
    layout: Layout | None = None,
) -> list[OptionScores | ProviderError]:
    """Scores for every item, in order; an item that is already a `ProviderError` stays one,
    and a pass that fails fails its own questions alone. With `prefixes`, the opening every
    question shares is run once, continued from (and kept in) that cache. `layout`, when
    given, is told how the questions were laid out."""
    import torch

    results: list[OptionScores | ProviderError | None] = [
        item if isinstance(item, ProviderError) else None for item in items
    ]
    ready = [item for item in items if isinstance(item, ScoringItem)]
    if not ready:
        return results  # type: ignore[return-value]
    shared, past = 0, None
    if prefixes is not None and not _windowed(model):
        opening = common_prefix([item.prompt for item in ready])
        if opening >= prefixes.min_shared:
            try:
                with torch.no_grad():
                    past = prefix_keys(model, device, prefixes, tuple(ready[0].prompt[:opening]))
                shared = opening
            except (RuntimeError, ValueError, TypeError, AttributeError):
                past = None  # the passes run the opening in every row
    passes = _passes(_rows(items, shared, row_tokens), pass_tokens)
    if layout is not None:
        layout.shared += shared
        layout.passes += len(passes)
        layout.rows += sum(len(p) for p in passes)
        layout.nodes += sum(len(r.tokens) for p in passes for r in p)
        layout.padding += sum(
            len(p) * len(p[0].tokens) - sum(len(r.tokens) for r in p) for p in passes
        )
    while passes:
        chosen = passes.pop(0)
        try:
            for index, scores in _run_pass(model, device, pad_id, chosen, items, shared, past):
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
    shared: int = 0,
    past: Any = None,
) -> list[tuple[int, OptionScores]]:
    """One forward pass over `rows`, continuing from `past` (the keys and values of the
    `shared` opening, copied for each row) where there is one."""
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
    # Every token sees the shared opening (the first `shared` keys), then its ancestors.
    mask = torch.zeros((len(rows), 1, width, shared + width), dtype=dtype)
    mask[..., shared:].masked_fill_(~torch.from_numpy(allowed)[:, None], torch.finfo(dtype).min)
    keep_t = torch.from_numpy(keep)
    extra: dict[str, Any] = {"use_cache": False}
    if past is not None:
        cache = copy.deepcopy(past)
        cache.batch_repeat_interleave(len(rows))
        extra = {"use_cache": True, cache_argument(model): cache}
    with torch.no_grad():
        sliced = _keeps_positions(model)
        logits = model(
            input_ids=torch.from_numpy(ids).to(device),
            attention_mask=mask.to(device),
            position_ids=torch.from_numpy(positions + shared).to(device),
            **extra,
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
