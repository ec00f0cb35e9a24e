"""The encoder and LLM protocols every method is typed against are met by the framework's classes."""

from hyperrag.llm.backends import NoLLM, OpenAICompatible
from hyperrag.protocols import Encoder, LanguageModel
from tests.reliability.doubles import HashEncoder


def test_encoders_satisfy_the_encoder_protocol(encoder):
    assert isinstance(encoder, Encoder) and isinstance(HashEncoder(), Encoder)
    assert isinstance(encoder.model_key, str) and encoder.encode(["a text"]).shape == (1, encoder.dim)
    assert not isinstance(object(), Encoder)


def test_llm_backends_satisfy_the_language_model_protocol():
    from hyperrag.llm.client import client_settings

    none = NoLLM()
    remote = OpenAICompatible(base_url="http://127.0.0.1:9/v1", api_key_env=None, show_usage=False,
                              client=client_settings())
    assert isinstance(none, LanguageModel) and isinstance(remote, LanguageModel)
    assert (none.available, none.kind) == (False, "none") and remote.available


def test_no_signature_types_an_llm_or_encoder_as_any():
    """Every ``llm`` / ``reader`` / ``encoder`` argument in hyperrag and the entry scripts names a protocol (or a
    concrete class), not ``Any``."""
    import ast

    from tests.conftest import REPO_ROOT

    files = [*(REPO_ROOT / "hyperrag").rglob("*.py"), *(REPO_ROOT / n for n in ("retrieve.py", "train.py",
                                                                                   "evaluate.py", "report.py"))]
    loose = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    if arg.arg in ("llm", "reader", "encoder") and arg.annotation is not None \
                            and "Any" in ast.unparse(arg.annotation):
                        loose.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name}({arg.arg})")
    assert not loose, loose
