from hyperrag.embedding.encoder import TextEncoder, resolve_model_path

__all__ = ['TextEncoder', 'resolve_model_path']
