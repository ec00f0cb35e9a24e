"""Structured outputs: the JSON schema a backend is asked to follow, and parsing of what it returns.

Constrained decoding is chosen by the backend's *declared* capability (``structured_output`` in its
config), never guessed from the model name:

=====================  ===========================================================================
``json_schema``        OpenAI ``response_format={"type": "json_schema", ...}`` (OpenAI, vLLM >= 0.6)
``guided_json``        vLLM's ``extra_body={"guided_json": schema}`` (older vLLM releases)
``structured_outputs`` vLLM >= 0.10's ``extra_body={"structured_outputs": {"json": schema}}``
``json_object_schema`` llama.cpp / llama-cpp-python: ``{"type": "json_object", "schema": schema}``
``json_object``        JSON mode without a schema
``none``               no constraint; the prompt asks for JSON and the parser repairs
=====================  ===========================================================================

Whatever comes back is parsed leniently (``json-repair`` for near-JSON: code fences, prose around
the object, single quotes, trailing commas, truncation) and then validated strictly by pydantic.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from hyperrag.llm.errors import OutputInvalid

STRUCTURED_MODES = ("json_schema", "guided_json", "structured_outputs", "json_object_schema", "json_object", "none")

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with every ``$ref`` inlined, ``title`` noise removed and every
    property listed as required (fields with defaults stay optional for validation only).

    Grammar compilers (llama.cpp, xgrammar, outlines) accept the flat form most reliably.
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any, depth: int = 0, fields: bool = False) -> Any:
        if depth > 32:
            raise ValueError(f"recursive schema in {model.__name__}")
        if isinstance(node, dict):
            if "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                merged = {**copy.deepcopy(defs[name]), **{k: v for k, v in node.items() if k != "$ref"}}
                return resolve(merged, depth + 1)
            # "title" is pydantic noise except as a field name inside "properties" (ModuleReport.title)
            out = {k: resolve(v, depth + 1, k == "properties") for k, v in node.items() if fields or k != "title"}
            if isinstance(out.get("properties"), dict):
                # ask the decoder for every field (strict decoding); pydantic still accepts defaults
                out["required"] = list(out["properties"])
            return out
        if isinstance(node, list):
            return [resolve(v, depth + 1) for v in node]
        return node

    return resolve(schema)


def response_format_body(mode: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
    """The JSON-body fields that ask a server of capability ``mode`` to follow ``schema``."""
    if mode == "json_schema":
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]
        return {"response_format": {"type": "json_schema", "json_schema": {"name": safe, "schema": schema}}}
    if mode == "guided_json":
        return {"guided_json": schema}
    if mode == "structured_outputs":
        return {"structured_outputs": {"json": schema}}
    if mode == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    if mode == "none":
        return {}
    raise ValueError(f"unknown structured_output mode {mode!r}; expected one of {STRUCTURED_MODES}")


def _single_list_field(model: type[BaseModel]) -> str | None:
    fields = model.model_fields
    required = [n for n, f in fields.items() if f.is_required()]
    if len(required) == 1:
        return required[0]
    if len(fields) == 1:
        return next(iter(fields))
    return None


def load_json_lenient(raw: str) -> tuple[Any, bool]:
    """Parse ``raw`` as JSON, repairing near-JSON. Returns ``(value, repaired)``.

    Raises:
        OutputInvalid: nothing JSON-like could be recovered.
    """
    text = _THINK.sub("", raw or "").strip()
    if not text:
        raise OutputInvalid("empty reply")
    try:
        return json.loads(text), False
    except ValueError:
        pass
    import json_repair

    try:
        value = json_repair.repair_json(text, return_objects=True, skip_json_loads=True)
    except Exception as err:  # noqa: BLE001 - json-repair raises assorted errors on garbage
        raise OutputInvalid(f"unrepairable JSON: {err}") from None
    if not isinstance(value, (dict, list)) or (not value and "{" not in text and "[" not in text):
        raise OutputInvalid(f"no JSON object in reply: {text[:80]!r}")
    return value, True


def as_object(value: Any, model: type[BaseModel]) -> dict[str, Any]:
    """A decoded JSON value as the object ``model`` expects (a bare list is wrapped when unambiguous)."""
    if isinstance(value, list):
        field = _single_list_field(model)
        if field is not None:
            value = {field: value}
        elif len(value) == 1 and isinstance(value[0], dict):
            value = value[0]
    if not isinstance(value, dict):
        raise OutputInvalid(f"expected a JSON object, got {type(value).__name__}")
    return value


def validate_output(value: Any, model: type[BaseModel]) -> BaseModel:
    """Validate a decoded JSON value against ``model``."""
    value = as_object(value, model)
    try:
        return model.model_validate(value)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in err.errors()[:5])
        raise OutputInvalid(f"schema mismatch: {problems}") from None


def parse_output(raw: str, model: type[BaseModel]) -> tuple[BaseModel, bool]:
    """``raw`` model text → validated ``model`` instance; ``repaired`` says json-repair was needed."""
    value, repaired = load_json_lenient(raw)
    return validate_output(value, model), repaired


_ID_TOKEN = re.compile(r"[A-Za-z]*\d+|[A-Za-z_][\w-]*")


def _norm_id(value: Any) -> str:
    return str(value).strip().strip("[](){}<>#\"'`.,;:").strip().casefold()


class IdChecker:
    """Checks IDs returned by a model against the IDs its prompt showed.

    Matching ignores case, surrounding brackets/quotes and a trailing description
    (``"F3: Paris is ..."`` → ``F3``). Unknown IDs are dropped and counted; duplicates are removed.
    """

    def __init__(self, shown: list[str]) -> None:
        self.shown = list(shown)
        self._by_norm = {_norm_id(s): s for s in self.shown}

    def match(self, value: Any) -> str | None:
        norm = _norm_id(value)
        if norm in self._by_norm:
            return self._by_norm[norm]
        head = _ID_TOKEN.match(str(value).strip().strip("[](){}<>#\"'`"))
        if head is not None and _norm_id(head.group(0)) in self._by_norm:
            return self._by_norm[_norm_id(head.group(0))]
        return None

    def filter(self, values: list[Any]) -> tuple[list[str], int]:
        """``(kept, dropped)``: known IDs in first-seen order, and how many values were unknown."""
        kept: list[str] = []
        seen: set[str] = set()
        dropped = 0
        for v in values:
            m = self.match(v)
            if m is None:
                dropped += 1
            elif m not in seen:
                seen.add(m)
                kept.append(m)
        return kept, dropped
