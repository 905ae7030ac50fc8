"""Micro-batching: concurrent calls are run together, each caller gets its own result, and a
failing batch fails each of its callers."""

import threading
import time

import pytest

from benchfoundry.gateway.batching import MicroBatcher


def _run_in_threads(batcher, calls):
    results = [None] * len(calls)

    def call(i, key, item):
        try:
            results[i] = batcher.submit(key, item)
        except Exception as exc:  # noqa: BLE001 - the test inspects what each caller got
            results[i] = exc

    threads = [threading.Thread(target=call, args=(i, *c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return results


def test_concurrent_calls_share_batches_and_keep_their_results():
    seen = []

    def run(key, items):
        seen.append((key, list(items)))
        time.sleep(0.05)
        return [f"{key}:{item * 2}" for item in items]

    batcher = MicroBatcher(run, max_batch=4, wait_s=0.2)
    calls = [("k", i) for i in range(8)] + [("other", 100)]
    results = _run_in_threads(batcher, calls)
    assert results == [f"k:{i * 2}" for i in range(8)] + ["other:200"]
    assert all(len(items) <= 4 for _, items in seen)
    for key, items in seen:  # a batch never mixes keys
        assert all(i < 100 for i in items) if key == "k" else items == [100]
    assert sum(len(items) for _, items in seen) == 9
    assert max(batcher.batches) > 1  # calls were really run together


def test_a_failing_batch_fails_each_of_its_callers():
    def run(key, items):
        raise RuntimeError("boom")

    batcher = MicroBatcher(run, max_batch=8, wait_s=0.05)
    results = _run_in_threads(batcher, [("k", i) for i in range(3)])
    assert all(isinstance(r, RuntimeError) and str(r) == "boom" for r in results)


def test_a_batch_returning_the_wrong_count_is_an_error():
    batcher = MicroBatcher(lambda key, items: [], max_batch=2, wait_s=0.01)
    with pytest.raises(RuntimeError, match="returned 0 results"):
        batcher.submit("k", 1)
