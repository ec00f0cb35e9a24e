from hyperrag.embedding.encoder import TextEncoder, resolve_model_path
from hyperrag.embedding.openai_compatible import EmbeddingEndpointError, OpenAICompatibleEmbedder

__all__ = ['EmbeddingEndpointError', 'OpenAICompatibleEmbedder', 'TextEncoder', 'resolve_model_path']
