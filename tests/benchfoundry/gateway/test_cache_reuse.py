"""Never asking the same thing twice: what quality control asked (16 tokens a pass) answers the
evaluation's same questions (64 tokens) from the response cache, through a real HTTP server;
an answer cut by its cap, or a longer one than the new cap, is asked again."""

from __future__ import annotations

from benchfoundry.answering.engine import AnsweringEngine, MCQItem
from benchfoundry.devtools.testserver import Script, TestServer
from benchfoundry.gateway import Gateway, GenerateParams, ResponseCache


def _items(image_bytes) -> list[MCQItem]:
    return [
        MCQItem(
            question_id=f"q{i}",
            question=f"Which colour is the block in picture {i}?",
            options=("red", "blue", "green", "grey"),
            answer="A",
            image=image_bytes(seed=i),
        )
        for i in range(3)
    ]


def test_the_evaluation_replays_what_consensus_asked_under_a_smaller_cap(tmp_path, image_bytes):
    items = _items(image_bytes)
    with TestServer(Script(default="red")) as server:
        model = f"openai/vlm@{server.base_url}"
        # Consensus: CircularEval, 16 tokens a pass (ConsensusOptions.max_tokens).
        consensus = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"), stage="consensus")
        asked, _ = AnsweringEngine(
            consensus, params=GenerateParams(max_tokens=16), with_image=True
        ).run(items, model)
        assert server.stats.requests == 12  # 3 questions, 4 rotations each, all right
        # The evaluation, in a process of its own on the run's cache: 64 tokens a pass.
        evaluation = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"), stage="evaluate")
        replayed, report = AnsweringEngine(evaluation, with_image=True).run(items, model)
        assert server.stats.requests == 12, "no question asked twice"
        used = evaluation.ledger.totals()
        assert (used.calls, used.cached, used.cost) == (12, 12, 0.0)
        assert [[p.extracted for p in r.passes] for r in replayed] == [
            [p.extracted for p in r.passes] for r in asked
        ]
        assert report.circular_accuracy == 1.0
        # Sampled calls are not greedy: another cap is another call.
        evaluation.generate(model, "Say red.", GenerateParams(temperature=0.7, max_tokens=16))
        evaluation.generate(model, "Say red.", GenerateParams(temperature=0.7, max_tokens=64))
        assert server.stats.requests == 14


def test_an_answer_longer_than_the_new_cap_is_asked_again(tmp_path):
    with TestServer(Script(default="the block is red and square")) as server:  # 6 tokens
        model = f"openai/talker@{server.base_url}"
        gateway = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"))
        first = gateway.generate(model, "Colour?", GenerateParams(max_tokens=64))
        assert gateway.generate(model, "Colour?", GenerateParams(max_tokens=8)).cached
        again = gateway.generate(model, "Colour?", GenerateParams(max_tokens=4))
        assert not again.cached and server.stats.requests == 2
        assert (first.finish_reason, first.tokens_out) == ("stop", 6)
        # The cache counts answers, not the second entry of each.
        assert len(gateway.cache) == 2
