import pyarrow as pa
import pytest

from benchfoundry.core.ids import content_hash, image_id, question_id
from benchfoundry.core.records import (
    ALL_RECORDS,
    CandidateRecord,
    ImageRecord,
    VisualFactsRecord,
    arrow_schema,
)

DESIGN_COLUMNS = {
    "images": {"image_id", "source", "width", "height", "format", "phash", "duplicate_of"},
    "quarantine": {"source", "stage", "reason", "detail"},
    "visual_facts": {"image_id", "captions", "instances", "ocr_lines"},
    "candidates": {
        "question_id",
        "image_id",
        "dimension",
        "question",
        "options",
        "answer",
        "generator",
        "prompt_id",
        "evidence",
    },
    "scored": {"question_id", "hits_text", "hits_vlm", "difficulty", "decision", "reason"},
    "judgements": {
        "question_id",
        "model",
        "mode",
        "option_order",
        "raw_response",
        "extracted",
        "correct",
    },
    "reviews": {"question_id", "reviewer", "decision", "note"},
    "results": {"run_id", "model", "question_id", "pass_index", "extracted", "correct", "score"},
}


@pytest.mark.parametrize("record", ALL_RECORDS, ids=lambda r: r.table)
def test_every_table_has_the_design_columns_and_a_valid_key(record):
    schema = arrow_schema(record)
    assert DESIGN_COLUMNS.get(record.table, set()) <= set(schema.names)
    assert record.key and set(record.key) <= set(schema.names)
    assert schema.metadata[b"benchfoundry.table"] == record.table.encode()


def test_schema_types_follow_annotations():
    schema = arrow_schema(CandidateRecord)
    assert schema.field("options").type == pa.list_(pa.string())
    assert not schema.field("question").nullable
    assert schema.field("prompt_id").nullable
    assert arrow_schema(ImageRecord).field("bytes").type == pa.binary()
    instances = arrow_schema(VisualFactsRecord).field("instances").type
    assert pa.types.is_list(instances) and pa.types.is_struct(instances.value_type)
    assert instances.value_type.field("box").type == pa.list_(pa.float64())


def test_records_refuse_unknown_fields():
    with pytest.raises(ValueError, match="extra"):
        CandidateRecord(question_id="q", nonsense=1)


def test_ids_are_content_hashes():
    assert image_id(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    q = question_id("img", "What is it?", ["a cat", "a dog"])
    assert q == question_id("img", "  What is it? ", [" a cat", "a dog "])
    assert q != question_id("img", "What is it?", ["a dog", "a cat"])
    assert q != question_id("img2", "What is it?", ["a cat", "a dog"])
    assert content_hash({"b": 1, "a": 2}) == content_hash({"a": 2, "b": 1})
