"""The base of every config section: a frozen pydantic record that refuses unknown fields
and takes each field's docstring as its documentation; and the serialization context key
that dumps every field."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

ALL_FIELDS = "all_fields"
"""Serialization context key: dump every field, even those a dump leaves out to keep old
stage keys (BM25's default variant)."""



class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
