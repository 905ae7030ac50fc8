"""How an evaluation's questions are put to a model. An endpoint model (a server over HTTP) gets
its questions side by side: each question runs its CircularEval passes in a worker of its own,
as many at once as the model's concurrency, and its result is handed back the moment it is
finished, so no question waits on another's passes, retries or hung call; a hung call costs its
own question its timeout. A local model (or a blind baseline) is asked a batch at a time, pass by
pass over the batch (`AnsweringEngine.run`), which lets it read an image once for all its
questions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from benchfoundry.answering.engine import AnsweringEngine, MCQItem, QuestionResult

# (the results just finished, the calls every pass of them would take)
Finished = tuple[list[QuestionResult], int]


def side_by_side(engine: AnsweringEngine, model: str) -> bool:
    """Whether the model's questions go side by side: a server over HTTP, not a local model
    (which gathers calls into batches) nor one that ranks options by likelihood."""
    spec = engine.gateway.spec(model)
    return spec.provider == "openai" and not engine.answers_by_likelihood(model)


def ask(
    engine: AnsweringEngine,
    items: Sequence[MCQItem],
    model: str,
    circular: bool,
    batch_size: int,
    stop: Callable[[], bool],
    workers: int | None = None,
) -> Iterator[Finished]:
    """Every item asked of `model`, results handed back as they finish, until `stop()` says
    to start no more (the questions under way still finish)."""
    if side_by_side(engine, model):
        workers = workers or engine.gateway.spec(model).concurrency
        yield from _side_by_side(engine, items, model, circular, workers, stop)
        return
    for start in range(0, len(items), batch_size):
        if stop():
            return
        chunk = items[start : start + batch_size]
        results, report = engine.run(chunk, model, circular=circular)
        yield results, report.calls_if_every_pass


def _side_by_side(
    engine: AnsweringEngine,
    items: Sequence[MCQItem],
    model: str,
    circular: bool,
    workers: int,
    stop: Callable[[], bool],
) -> Iterator[Finished]:
    """At most `workers` questions under way; a new one starts as each finishes."""
    waiting = iter(items)
    running: set[Future[QuestionResult]] = set()

    def start_more(pool: ThreadPoolExecutor) -> None:
        while len(running) < workers and not stop():
            item = next(waiting, None)
            if item is None:
                return
            running.add(pool.submit(engine.ask, item, model, circular))

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ask") as pool:
        start_more(pool)
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            running.difference_update(done)
            for future in done:
                result = future.result()
                yield [result], len(result.item.options) if circular else 1
            start_more(pool)
