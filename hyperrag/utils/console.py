"""What the entry points print: the one place console logging is set up.

By default the console shows progress bars (one per long stage), warnings (something skipped, a fallback taken),
errors and the final tables — nothing per request. ``verbose=true`` (``retrieve.py`` / ``train.py`` /
``evaluate.py``) shows every INFO line too, HTTP requests included. The run's log file (Hydra's ``<out>/*.log``)
keeps the INFO lines either way, except the per-request ones, which appear only with ``verbose=true``.

Called by each entry point after Hydra has configured logging (it changes Hydra's console handler in place) and
after importing Lightning, which adds a console handler of its own to its loggers when imported.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

# loggers that write one line per HTTP request (the LLM and embedding clients, the hubs)
PER_REQUEST_LOGGERS = ("httpx", "httpcore", "urllib3", "huggingface_hub")
# libraries that install a console handler of their own (their lines would print twice through Hydra's root one)
OWN_HANDLER_LOGGERS = ("lightning", "lightning.pytorch", "lightning.fabric", "pytorch_lightning", "lightning_fabric")


def _is_console(handler: logging.Handler) -> bool:
    # exactly a StreamHandler (Hydra's, Lightning's): file handlers and capture handlers (pytest's) are subclasses
    return type(handler) is logging.StreamHandler


def configure_console(verbose: bool = False) -> None:
    """Quiet console (default) or everything (``verbose``).

    * the root logger's console handlers (Hydra's) print WARNING and above, or INFO with ``verbose``;
    * per-request loggers (httpx, ...) are held at WARNING unless ``verbose`` — in the log file too;
    * Lightning's own console handlers are removed and its loggers propagate, so each of its lines appears once
      (through the root handlers: console at the level above, file at INFO);
    * without ``verbose``, deprecation and future warnings raised outside hyperrag (third-party notices) are
      hidden, as are the Hugging Face libraries' download / weight-loading bars.
    """
    console_level = logging.INFO if verbose else logging.WARNING
    root = logging.getLogger()
    for handler in root.handlers:
        if _is_console(handler):
            handler.setLevel(console_level)
    for name in PER_REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)
    for name in OWN_HANDLER_LOGGERS:
        lg = logging.getLogger(name)
        for handler in [h for h in lg.handlers if _is_console(h)]:
            lg.removeHandler(handler)
        lg.propagate = True
    if verbose:
        return
    for category in (DeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category, module=r"(?!hyperrag)")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' "Loading weights" bar follows it
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()


__all__ = ["PER_REQUEST_LOGGERS", "configure_console"]
