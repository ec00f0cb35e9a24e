"""The scripted fake LLM server fixture of the evaluation tests."""

from tests.eval.conftest import scripted_llm  # noqa: F401 - re-exported fixture
