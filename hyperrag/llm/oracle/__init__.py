"""The gold-informed oracle backend (``llm=oracle``): upper-bound analyses and wiring checks of LLM steps."""

from hyperrag.llm.oracle.answers import ORACLES, NoGold, oracle_reply
from hyperrag.llm.oracle.backend import ORACLE_LABEL, OracleLLM
from hyperrag.llm.oracle.gold import GoldIndex, QueryGold

__all__ = ["ORACLES", "ORACLE_LABEL", "GoldIndex", "NoGold", "OracleLLM", "QueryGold", "oracle_reply"]
