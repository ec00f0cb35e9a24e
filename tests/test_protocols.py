"""The encoder and LLM protocols every method is typed against are met by the framework's classes."""

from hyperrag.llm.backends import NoLLM, OpenAICompatible
from hyperrag.protocols import Encoder, LanguageModel
from tests.reliability.doubles import HashEncoder


def test_encoders_satisfy_the_encoder_protocol(encoder):
    assert isinstance(encoder, Encoder) and isinstance(HashEncoder(), Encoder)
    assert isinstance(encoder.model_key, str) and encoder.encode(["a text"]).shape == (1, encoder.dim)
    assert not isinstance(object(), Encoder)


def test_llm_backends_satisfy_the_language_model_protocol():
    none, remote = NoLLM(), OpenAICompatible(base_url="http://127.0.0.1:9/v1", api_key_env=None, show_usage=False)
    assert isinstance(none, LanguageModel) and isinstance(remote, LanguageModel)
    assert (none.available, none.kind) == (False, "none") and remote.available
