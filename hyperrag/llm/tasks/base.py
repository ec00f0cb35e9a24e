"""The task contract: one prompt template, one output schema, one parser per task.

A task turns caller inputs (a mapping) into chat messages, declares the pydantic model its reply
must validate against (sent to the server as constrained decoding), checks IDs in the reply against
the IDs its prompt showed, and reads the validated output back in the caller's terms (``interpret``).
Messages must be a pure function of the inputs: they are part of the cache key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, StringConstraints

from hyperrag.llm.prompting import system_prompt
from hyperrag.llm.structured import IdChecker, as_object, inline_schema, load_json_lenient, validate_output
from hyperrag.utils.hashing import text_digest

# Constrained field types shared by task schemas (the bounds also bound grammar-constrained decoding).
#: the longest name (entity, query, sub-question) a task accepts
NAME_MAX = 200
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_MAX)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, max_length=1000)]
#: a task that restates a paper's prompt: ``paper`` (the figure's message exactly as printed — one user message,
#: no system message, no data blocks, no constrained decoding — and its reply read as the figure asks for it),
#: ``paper_json`` (the figure's text inside our data blocks, with our system message: the structured-output rule, a
#: JSON schema and the data rule) or ``extended`` (our restatement with our additions); HugRAG's ``prompts`` setting
PromptForm = Literal["paper", "paper_json", "extended"]
PROMPT_FORMS: tuple[str, ...] = ("paper", "paper_json", "extended")
ID_LIST_MAX = 64  # the most IDs one list of a reply holds (the schema's bound)
IdList = Annotated[list[Annotated[str, StringConstraints(strip_whitespace=True, max_length=40)]],
                   Field(max_length=ID_LIST_MAX)]


def passage_string(p: Any) -> str:
    """``title + "\\n" + text`` for a Passage, a mapping with title/text, or a plain string (the text a prompt
    shows and an OpenIE checkpoint keys on)."""
    if isinstance(p, str):
        return p
    title = p.get("title", "") if isinstance(p, Mapping) else getattr(p, "title", "")
    text = p.get("text", "") if isinstance(p, Mapping) else getattr(p, "text", "")
    return f"{title}\n{text}" if title else str(text)


def passage_of(inputs: Mapping[str, Any], key: str = "passage") -> str:
    """The passage text from ``inputs[key]`` (see :func:`passage_string`)."""
    return passage_string(inputs[key])


@dataclass
class Parsed:
    output: BaseModel
    value: Any
    dropped_ids: int
    repaired: bool


class Task:
    """Base class of every LLM task.

    Subclasses set ``name``, ``SCHEMA_VERSION``, ``Output`` (pydantic model), ``ROLE`` (the system
    prompt's task description) and implement :meth:`user`; ID-returning tasks override :meth:`check`
    and usually :meth:`interpret`.
    """

    name: ClassVar[str] = "task"
    SCHEMA_VERSION: ClassVar[str] = "1"
    Output: ClassVar[type[BaseModel]]
    ROLE: ClassVar[str] = ""
    max_tokens: ClassVar[int] = 512
    #: the prompt form of a task that restates a paper's prompt (HugRAG's, set by its ``prompts`` argument):
    #: ``paper`` sends the figure as printed, the whole message, and reads a free-text reply (see
    #: :meth:`messages`, :attr:`structured`); every other task keeps ``extended``
    prompts: PromptForm = "extended"

    @property
    def structured(self) -> bool:
        """Send the output schema as constrained decoding (the backend's ``structured_output``); ``False``: the
        reply is free text the task reads itself (a paper's prompt as printed: ``prompts == "paper"``)."""
        return self.prompts != "paper"

    @property
    def variant(self) -> str:
        """Distinguishes configurations of one task that change prompt or schema (part of ``key``)."""
        return ""

    @property
    def key(self) -> str:
        """``name[/variant]@vVERSION`` — the accounting row and part of the cache key."""
        return f"{self.name}{'/' + self.variant if self.variant else ''}@v{self.SCHEMA_VERSION}"

    @property
    def label(self) -> str:
        return f"{self.name}{'/' + self.variant if self.variant else ''}"

    def output_model(self) -> type[BaseModel]:
        return self.Output

    @cached_property
    def _schema(self) -> dict[str, Any]:
        return inline_schema(self.output_model())

    def schema(self) -> dict[str, Any]:
        """The flat JSON schema sent as constrained decoding."""
        return self._schema

    @cached_property
    def schema_hash(self) -> str:
        return text_digest(json.dumps(self._schema, sort_keys=True), length=16)

    def system(self, inputs: Mapping[str, Any]) -> str:
        return system_prompt(self.ROLE)

    def user(self, inputs: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def messages(self, inputs: Mapping[str, Any]) -> list[dict[str, str]]:
        """The system message, then the user's; a paper's prompt as printed (``prompts == "paper"``) is the whole
        message, with no system message."""
        if self.prompts == "paper":
            return [{"role": "user", "content": self.user(inputs)}]
        return [{"role": "system", "content": self.system(inputs)}, {"role": "user", "content": self.user(inputs)}]

    def reply_text(self, reply: Mapping[str, Any]) -> str:
        """A reply given as values (the gold oracle's), written as the model would have to write it for
        :meth:`parse`: JSON by default."""
        return json.dumps(dict(reply), ensure_ascii=False)

    def prevalidate(self, value: dict[str, Any], inputs: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """Lenient clean-up of the decoded JSON before strict validation (e.g. drop malformed items,
        which are counted in ``dropped``) — so one bad element does not sink a whole reply."""
        return value, 0

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        """Clean a validated output (drop IDs the prompt never showed); returns ``(output, dropped)``."""
        return output, 0

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> Any:
        """The output in the caller's terms (default: the output itself)."""
        return output

    def parse(self, raw: str, inputs: Mapping[str, Any]) -> Parsed:
        """Raw model text → validated, ID-checked output. Raises ``OutputInvalid``."""
        value, repaired = load_json_lenient(raw)
        value, pre_dropped = self.prevalidate(as_object(value, self.output_model()), inputs)
        output = validate_output(value, self.output_model())
        output, dropped = self.check(output, inputs)
        return Parsed(output, self.interpret(output, inputs), pre_dropped + dropped, repaired)


def filter_ids(values: list[Any], shown: list[str]) -> tuple[list[str], int]:
    """Keep the values that name an ID from ``shown`` (normalised, deduplicated); count the rest."""
    return IdChecker(shown).filter(values)
