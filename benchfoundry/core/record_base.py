"""The base of every table's record, and the Arrow schema derived from a record's annotations,
so that the two can never disagree: `str` -> string, `int` -> int64, `float` -> float64, `bool`
-> bool, `bytes` -> binary, `list[X]` -> list<X>, `dict[str, str]` -> map<string, string>, a
nested record -> struct, and `X | None` -> a nullable column."""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, ClassVar, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, model_validator


def _maps_as_dicts(model: type[BaseModel], data: Any) -> Any:
    """Arrow gives a map column's value as a list of (key, value) pairs: make it a dict (each
    item's, in a list of maps)."""
    if isinstance(data, dict):
        for name, field in model.model_fields.items():
            value = data.get(name)
            if not isinstance(value, list):
                continue
            if typing.get_origin(field.annotation) is dict:
                data = {**data, name: dict(value)}
            elif typing.get_origin(field.annotation) is list and any(
                typing.get_origin(a) is dict for a in typing.get_args(field.annotation)
            ):
                data = {**data, name: [dict(v) if isinstance(v, list) else v for v in value]}
    return data


class Record(BaseModel):
    """A row of one table. `table` names the table, `key` its key columns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _maps(cls, data: Any) -> Any:
        return _maps_as_dicts(cls, data)

    table: ClassVar[str] = ""
    key: ClassVar[tuple[str, ...]] = ()

    def key_values(self) -> tuple[Any, ...]:
        """The values of this record's key columns, in order."""
        return tuple(getattr(self, name) for name in self.key)


class Nested(BaseModel):
    """A struct nested inside a column (an instance, an OCR line...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_SCALARS: dict[Any, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    bytes: pa.binary(),
}


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """Map one annotation to (Arrow type, nullable)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            raise TypeError(f"only `X | None` unions map to Arrow, got {annotation!r}")
        return _arrow_type(members[0])[0], True
    if origin is Literal:
        return pa.string(), False
    if origin is dict:
        if typing.get_args(annotation) != (str, str):
            raise TypeError(f"only dict[str, str] maps to Arrow, got {annotation!r}")
        return pa.map_(pa.string(), pa.string()), False
    if origin is list:
        (item,) = typing.get_args(annotation)
        item_type, _ = _arrow_type(item)
        return pa.list_(item_type), False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(_fields(annotation)), False
    if annotation in _SCALARS:
        return _SCALARS[annotation], False
    raise TypeError(f"no Arrow type for annotation {annotation!r}")


def _fields(model: type[BaseModel]) -> list[pa.Field]:
    hints = typing.get_type_hints(model)
    fields = []
    for name in model.model_fields:
        arrow_type, nullable = _arrow_type(hints[name])
        fields.append(pa.field(name, arrow_type, nullable=nullable))
    return fields


@functools.cache
def arrow_schema(record_type: type[Record]) -> pa.Schema:
    """The Arrow schema of a record's table, with the table name in its metadata (made once
    per record type: schemas are immutable)."""
    return pa.schema(_fields(record_type), metadata={"benchfoundry.table": record_type.table})
