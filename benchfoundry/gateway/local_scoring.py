"""Option scoring for local text models, many questions at a time (SEED-Bench's likelihood
ranking). On a CPU a small model's forward pass costs about the same for one token as for
sixty: each pass streams every weight from memory. So questions are scored together, in two
passes per group of questions that share a prompt prefix (the facts of one image, or only the
chat template's opening for questions asked without an image):

1. the prefix once, continued from the longest prefix a recent group left in the `PrefixCache`;
2. every question's own tail (its words), left-padded so that each row ends on its last token,
   whose logits give each option's first token;
3. every option's tokens but its last, continuing its question's row, whose logits give the
   option's later tokens (an option of one token needs no pass of its own).

The numbers are those of scoring each question alone, up to float rounding (tested).
"""

from __future__ import annotations

import copy
import inspect
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from benchfoundry.gateway.errors import ProviderError, permanent
from benchfoundry.gateway.types import OptionScores


@dataclass
class ScoringItem:
    """One question to score: its prompt's tokens, its options and their tokens."""

    group: Hashable  # questions with the same group share the prompt up to their own words
    prompt: list[int]
    options: list[str]
    encoded: list[list[int]]


def encode_options(tokenizer: Any, prompt: list[int], options: Sequence[str]) -> list[list[int]]:
    """Each option's tokens as they follow the prompt: after a prompt that ends in a space or
    newline (a chat template's turn) the option starts a word on its own; otherwise it needs
    its leading space. `ProviderError` (bad_input) names options with no tokens."""
    ends_open = tokenizer.decode(prompt[-1:]).endswith((" ", "\n"))
    encoded = [
        tokenizer(option.strip() if ends_open else " " + option.strip(), add_special_tokens=False)[
            "input_ids"
        ]
        for option in options
    ]
    empty = [options[i] for i, ids in enumerate(encoded) if not ids]
    if empty:
        raise permanent("bad_input", f"option(s) {empty} have no tokens to score")
    return encoded


def score_many(
    model: Any,
    device: str,
    pad_id: int,
    prefixes: PrefixCache,
    items: Sequence[ScoringItem | ProviderError],
) -> list[OptionScores | ProviderError]:
    """Scores for every item, in order; an item that is already a `ProviderError` (it could not
    be prepared) stays one."""
    results: list[OptionScores | ProviderError | None] = [None] * len(items)
    groups: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        if isinstance(item, ProviderError):
            results[i] = item
        else:
            groups.setdefault(item.group, []).append(i)
    # A group whose prompts share no token at all (no chat template, different first words)
    # would leave its padding rows nothing to attend to: its questions are scored one by one.
    split: list[list[int]] = []
    for members in groups.values():
        if common_prefix([items[i].prompt for i in members]) == 0:  # type: ignore[union-attr]
            split.extend([i] for i in members)
        else:
            split.append(members)
    for members in split:
        chosen = [items[i] for i in members]
        try:
            scores = _score_group(model, device, pad_id, prefixes, chosen)  # type: ignore[arg-type]
        except (RuntimeError, ValueError) as exc:
            failure = permanent("local_model_error", f"{type(exc).__name__}: {exc}")
            scores = [failure] * len(members)  # type: ignore[list-item]
        for i, score in zip(members, scores, strict=True):
            results[i] = score
    return results  # type: ignore[return-value]


def _score_group(
    model: Any, device: str, pad_id: int, prefixes: PrefixCache, items: Sequence[ScoringItem]
) -> list[OptionScores]:
    import torch

    shared = common_prefix([item.prompt for item in items])
    with torch.no_grad():
        cache = prefix_keys(model, device, prefixes, tuple(items[0].prompt[:shared]))
        first, cache, lengths = _tails(model, device, pad_id, cache, shared, items)
        later = _continuations(model, device, pad_id, cache, shared, lengths, items)
    out = []
    for row, item in enumerate(items):
        summed = []
        for j, ids in enumerate(item.encoded):
            total = float(first[row, ids[0]])
            for k in range(1, len(ids)):
                total += float(later[(row, j)][k - 1, ids[k]])
            summed.append(total)
        out.append(option_scores(item, summed))
    return out


def option_scores(item: ScoringItem, summed: list[float]) -> OptionScores:
    """An item's scores from the summed log-probabilities of its options (and per token)."""
    counts = [len(ids) for ids in item.encoded]
    return OptionScores(
        options=list(item.options),
        summed=summed,
        normalised=[s / max(1, n) for s, n in zip(summed, counts, strict=True)],
        n_tokens=counts,
    )


def common_prefix(prompts: Sequence[list[int]]) -> int:
    """Tokens every prompt shares at its start, leaving each at least its last token to run."""
    shortest = min(len(p) for p in prompts)
    n = 0
    while n < shortest - 1 and all(p[n] == prompts[0][n] for p in prompts):
        n += 1
    return n


def prefix_keys(model: Any, device: str, prefixes: PrefixCache, prefix: tuple[int, ...]) -> Any:
    """Keys and values of `prefix` (None when empty), continued from the longest prefix a
    recent group kept, and kept in turn for the next."""
    import torch

    if not prefix:
        return None
    if (same := prefixes.exact(prefix)) is not None:
        return same.past_key_values
    done, cache = prefixes.longest(prefix)
    ids = torch.tensor([prefix[done:]], dtype=torch.long, device=device)
    extra = {} if cache is None else {cache_argument(model): cache}
    output = model(input_ids=ids, use_cache=True, **last_logits_only(model), **extra)
    prefixes.keep(prefix, output)
    return output.past_key_values


def _tails(
    model: Any, device: str, pad_id: int, cache: Any, shared: int, items: Sequence[ScoringItem]
) -> tuple[Any, Any, list[int]]:
    """One pass over every question's own tokens, left-padded after the shared prefix: the
    log-probabilities after each question's last token, the cache, and the tails' lengths."""
    import torch

    tails = [item.prompt[shared:] for item in items]
    lengths = [len(t) for t in tails]
    width = max(lengths)
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(items), shared + width), dtype=torch.long)
    mask[:, :shared] = 1
    positions = torch.full((len(items), width), shared, dtype=torch.long)
    for row, tail in enumerate(tails):
        start = width - len(tail)
        ids[row, start:] = torch.tensor(tail)
        mask[row, shared + start :] = 1
        positions[row, start:] = torch.arange(shared, shared + len(tail))
    extra = {}
    if cache is not None:
        cache.batch_repeat_interleave(len(items))
        extra[cache_argument(model)] = cache
    output = model(
        input_ids=ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        use_cache=True,
        **last_logits_only(model),
        **extra,
    )
    first = torch.log_softmax(output.logits[:, -1].float(), dim=-1)
    return first, output.past_key_values, lengths


def _continuations(
    model: Any,
    device: str,
    pad_id: int,
    cache: Any,
    shared: int,
    lengths: list[int],
    items: Sequence[ScoringItem],
) -> dict[tuple[int, int], Any]:
    """Log-probabilities along each option of more than one token, fed all but its last token
    after its question: (question row, option) -> (positions, vocabulary)."""
    import torch

    rows = [
        (row, j, ids[:-1])
        for row, item in enumerate(items)
        for j, ids in enumerate(item.encoded)
        if len(ids) > 1
    ]
    if not rows:
        return {}
    width = max(len(ids) for _, _, ids in rows)
    tail_width = max(lengths)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), shared + tail_width + width), dtype=torch.long)
    mask[:, :shared] = 1
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    for r, (row, _, tokens) in enumerate(rows):
        ids[r, : len(tokens)] = torch.tensor(tokens)
        mask[r, shared + tail_width - lengths[row] : shared + tail_width] = 1
        mask[r, shared + tail_width : shared + tail_width + len(tokens)] = 1
        start = shared + lengths[row]
        positions[r] = torch.arange(start, start + width)
    cache.batch_select_indices(torch.tensor([row for row, _, _ in rows], device=device))
    logits = model(
        input_ids=ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        use_cache=True,
        **{cache_argument(model): cache},
    ).logits
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    return {(row, j): logprobs[r] for r, (row, j, _) in enumerate(rows)}


class PrefixCache:
    """Keys and values of the last few prompt prefixes a model ran, to continue a new one from
    the longest token prefix it shares with one of them. A hit hands out a cropped copy, so the
    stored entry stays whole."""

    def __init__(self, size: int = 4, min_shared: int = 8) -> None:
        self.size = size
        self.min_shared = min_shared
        # prompt tokens -> (keys and values, logits of the last prompt token)
        self._entries: OrderedDict[tuple[int, ...], tuple[Any, Any]] = OrderedDict()
        self.hits = 0
        self.tokens_saved = 0

    def longest(self, ids: tuple[int, ...]) -> tuple[int, Any]:
        """(tokens shared, a cache of them to continue from) or (0, None). At least the last
        token is always left to run, for its logits."""
        best, best_key = 0, None
        for key in self._entries:
            n = 0
            for a, b in zip(key, ids, strict=False):
                if a != b:
                    break
                n += 1
            if n > best:
                best, best_key = n, key
        best = min(best, len(ids) - 1)
        if best_key is None or best < self.min_shared:
            return 0, None
        self._entries.move_to_end(best_key)
        cache = copy.deepcopy(self._entries[best_key][0])
        if (extra := cache.get_seq_length() - best) > 0:
            try:
                cache.crop(-extra)  # transformers crops by a count of tokens to drop
            except (RuntimeError, ValueError, NotImplementedError):
                return 0, None  # a cache that cannot be cut back (sliding windows): run whole
        self.hits += 1
        self.tokens_saved += best
        return best, cache

    def exact(self, ids: tuple[int, ...]) -> Any | None:
        """The stored output of this very prompt (its logits and a copy of its cache), if any."""
        if ids not in self._entries:
            return None
        self._entries.move_to_end(ids)
        cache, logits = self._entries[ids]
        self.hits += 1
        self.tokens_saved += len(ids)
        return SimpleNamespace(logits=logits, past_key_values=copy.deepcopy(cache))

    def keep(self, ids: tuple[int, ...], output: Any) -> None:
        """Keep a prompt's keys and values and the logits of its last token."""
        if self.size <= 0:
            return
        self._entries[ids] = (copy.deepcopy(output.past_key_values), output.logits[:, -1:].clone())
        self._entries.move_to_end(ids)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


def cache_argument(model: Any) -> str:
    """The forward argument that takes past keys and values: newer transformers name it `cache`
    and warn on the old name."""
    return "cache" if "cache" in _forward_parameters(model) else "past_key_values"


def last_logits_only(model: Any) -> dict[str, int]:
    """The forward argument that computes the logits of the last position alone (the prompt's
    other positions need only their keys and values): a vocabulary-wide projection per prompt
    token saved, a fifth of a small model's work. Empty for a model that has no such argument."""
    return {"logits_to_keep": 1} if "logits_to_keep" in _forward_parameters(model) else {}


def _forward_parameters(model: Any) -> Any:
    return inspect.signature(model.forward).parameters
