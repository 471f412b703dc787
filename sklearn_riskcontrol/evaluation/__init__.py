"""The evaluation layer: where scores and losses come from, shared by every method.

* Scoring back-ends (:class:`ScoreOracle` and its kinds): each cell ``(model, example)`` is
  bought at most once and cached, with retries, a rate limit and a cost budget;
* durable evaluation stores (:class:`EvaluationStore`, :class:`SQLiteStore`): every bought score
  is committed, so a killed run resumes without buying anything twice;
* tables: :func:`read_long_table` (one row per (model, example) from a DataFrame, CSV, JSON
  Lines or Parquet file) and :func:`read_harness_samples` (LLM evaluation harnesses' sample
  files), both returning a :class:`LongTable`; :func:`read_inspect_log` (Inspect AI logs) returns
  the long table itself, one loss column per scorer, as a pandas DataFrame.

The method packages (:mod:`sklearn_riskcontrol.bandits`, :mod:`sklearn_riskcontrol.autoeval`)
and the command line build on it; it imports none of them.
"""

from ._oracles import (
    CallableOracle,
    CostBudgetReached,
    EstimatorOracle,
    EvaluationError,
    MatrixOracle,
    ScoreOracle,
    as_oracle,
)
from ._store import EvaluationRecord, EvaluationStore, SQLiteStore
from ._tables import LongTable, read_harness_samples, read_inspect_log, read_long_table

__all__ = [
    "ScoreOracle",
    "MatrixOracle",
    "EstimatorOracle",
    "CallableOracle",
    "as_oracle",
    "EvaluationError",
    "CostBudgetReached",
    "EvaluationStore",
    "SQLiteStore",
    "EvaluationRecord",
    "LongTable",
    "read_long_table",
    "read_harness_samples",
    "read_inspect_log",
]
