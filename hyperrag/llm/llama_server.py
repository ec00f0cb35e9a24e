"""llama-cpp-python's OpenAI-compatible server, started without llama.cpp's extra CPU buffer types.

    python -m hyperrag.llm.llama_server --model model.gguf --port 8000 ...   # the arguments of llama_cpp.server

A llama.cpp built natively on a CPU that advertises AMX uses AMX tile kernels for quantised matrix products (an
"extra buffer type"). Some virtual machines advertise AMX in CPUID and grant the kernel's AMX permission, yet fault
on the first tile instruction: the server dies on its first completion ("Illegal instruction"). Starting it with
``use_extra_bufts = False`` (llama.cpp's ``--no-repack``, which llama-cpp-python does not expose) keeps the plain
CPU kernels. For the embedded SmolLM2 (Q4_1) nothing is lost elsewhere: on x86 CPUs without AMX no repacked layout
exists for Q4_1. ``HYPERRAG_LLAMA_EXTRA_BUFTS=1`` keeps llama.cpp's default.
"""

from __future__ import annotations

import os
from typing import Any


def disable_extra_buffer_types() -> bool:
    """Make every model that llama-cpp-python loads in this process use llama.cpp's plain CPU buffers.

    Returns whether the default was changed (``False`` with ``HYPERRAG_LLAMA_EXTRA_BUFTS=1`` or when the installed
    llama.cpp has no such setting)."""
    if os.environ.get("HYPERRAG_LLAMA_EXTRA_BUFTS") == "1":
        return False
    import llama_cpp
    import llama_cpp.llama_cpp as low

    default = low.llama_model_default_params
    if getattr(default, "_hyperrag_plain_buffers", False):
        return True
    if "use_extra_bufts" not in {name for name, _ in default().__class__._fields_}:
        return False

    def plain_buffers() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    plain_buffers._hyperrag_plain_buffers = True  # type: ignore[attr-defined]
    low.llama_model_default_params = plain_buffers
    llama_cpp.llama_model_default_params = plain_buffers  # Llama() reads it from the package namespace
    return True


def main() -> None:
    disable_extra_buffer_types()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
