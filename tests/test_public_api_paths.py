"""Every name of the documented public API imports from the path users know.

Modules move (issue 17 turned ``cli.py`` and ``demo.py`` into packages); public import paths must
not. Three sources of names, each asserted to import:

* the API reference: every ``.. currentmodule::`` + ``.. autosummary::`` entry of
  ``doc/api.rst`` (so the test follows the docs);
* the ``__all__`` of every public module of the package (no path component starting with
  ``_``), discovered by walking the package;
* ``FROZEN``: the ``module:name`` pairs of the first two sources, plus the command line's
  ``main`` and the demo's ``run_demo``, as they were before the issue-17 moves. The docs and the
  ``__all__`` lists move with the code; this list does not, so it is what guards a future move.
  Add new public names to it; remove one only after a deprecation.
"""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import sklearn_riskcontrol

ROOT = Path(__file__).resolve().parents[1]

FROZEN = [
    "sklearn_riskcontrol.autoeval:RAutoEvalPlus",
    "sklearn_riskcontrol.autoeval:RiskControlledModelSelector",
    "sklearn_riskcontrol.bandits.lowrank:ALSEnsemble",
    "sklearn_riskcontrol.bandits.lowrank:LowRankFactorization",
    "sklearn_riskcontrol.bandits.lowrank:RankCV",
    "sklearn_riskcontrol.bandits.lowrank:als_ensemble",
    "sklearn_riskcontrol.bandits.lowrank:fit_logistic_factors",
    "sklearn_riskcontrol.bandits.lowrank:fit_model_factors",
    "sklearn_riskcontrol.bandits.lowrank:select_rank_cv",
    "sklearn_riskcontrol.bandits.lowrank:sigmoid",
    "sklearn_riskcontrol.bandits.oracles:CallableOracle",
    "sklearn_riskcontrol.bandits.oracles:CostBudgetReached",
    "sklearn_riskcontrol.bandits.oracles:EstimatorOracle",
    "sklearn_riskcontrol.bandits.oracles:EvaluationError",
    "sklearn_riskcontrol.bandits.oracles:MatrixOracle",
    "sklearn_riskcontrol.bandits.oracles:ScaledAbsoluteError",
    "sklearn_riskcontrol.bandits.oracles:ScoreOracle",
    "sklearn_riskcontrol.bandits.oracles:as_oracle",
    "sklearn_riskcontrol.bandits.oracles:resolve_scoring",
    "sklearn_riskcontrol.bandits.simulate:accuracy_curve",
    "sklearn_riskcontrol.bandits.simulate:budget_to_reach",
    "sklearn_riskcontrol.bandits.simulate:make_score_matrix",
    "sklearn_riskcontrol.bandits.store:EvaluationRecord",
    "sklearn_riskcontrol.bandits.store:EvaluationStore",
    "sklearn_riskcontrol.bandits.store:SQLiteStore",
    "sklearn_riskcontrol.bandits.store:as_store",
    "sklearn_riskcontrol.bandits:BestModelSelector",
    "sklearn_riskcontrol.bandits:CallableOracle",
    "sklearn_riskcontrol.bandits:CostBudgetReached",
    "sklearn_riskcontrol.bandits:EstimatorOracle",
    "sklearn_riskcontrol.bandits:EvaluationError",
    "sklearn_riskcontrol.bandits:EvaluationStore",
    "sklearn_riskcontrol.bandits:FilledSubset",
    "sklearn_riskcontrol.bandits:LowRankScoreCompleter",
    "sklearn_riskcontrol.bandits:MatrixOracle",
    "sklearn_riskcontrol.bandits:NaivePooling",
    "sklearn_riskcontrol.bandits:PULSE",
    "sklearn_riskcontrol.bandits:SQLiteStore",
    "sklearn_riskcontrol.bandits:ScoreOracle",
    "sklearn_riskcontrol.bandits:UCBE",
    "sklearn_riskcontrol.bandits:UCBELRF",
    "sklearn_riskcontrol.bandits:UniformLRF",
    "sklearn_riskcontrol.bandits:UniformSampling",
    "sklearn_riskcontrol.bandits:accuracy_curve",
    "sklearn_riskcontrol.bandits:as_oracle",
    "sklearn_riskcontrol.bandits:budget_to_reach",
    "sklearn_riskcontrol.bandits:freedman_radius",
    "sklearn_riskcontrol.bandits:make_score_matrix",
    "sklearn_riskcontrol.cli:main",
    "sklearn_riskcontrol.datasets.simulators:ScoreSetting",
    "sklearn_riskcontrol.datasets.simulators:make_score_setting",
    "sklearn_riskcontrol.datasets:ScoreSetting",
    "sklearn_riskcontrol.datasets:load_diamonds",
    "sklearn_riskcontrol.datasets:load_letter",
    "sklearn_riskcontrol.datasets:make_score_setting",
    "sklearn_riskcontrol.demo:run_demo",
    "sklearn_riskcontrol.evalues.autoeval:ModelSelectionResult",
    "sklearn_riskcontrol.evalues.autoeval:RAutoEvalResult",
    "sklearn_riskcontrol.evalues.autoeval:RiskConfidenceInterval",
    "sklearn_riskcontrol.evalues.autoeval:effective_observations",
    "sklearn_riskcontrol.evalues.autoeval:rautoeval_confidence_interval",
    "sklearn_riskcontrol.evalues.autoeval:rautoeval_select",
    "sklearn_riskcontrol.evalues.autoeval:rautoeval_test",
    "sklearn_riskcontrol.evalues.betting:BettingEProcess",
    "sklearn_riskcontrol.evalues.betting:FixedBet",
    "sklearn_riskcontrol.evalues.betting:UniversalPortfolio",
    "sklearn_riskcontrol.evalues.betting:WSR",
    "sklearn_riskcontrol.evalues.betting:betting_eprocess",
    "sklearn_riskcontrol.evalues.betting:mixture_log_eprocess",
    "sklearn_riskcontrol.evalues.betting:mixture_weights",
    "sklearn_riskcontrol.evalues.bounds:ConcentrationResult",
    "sklearn_riskcontrol.evalues.bounds:concentration_threshold",
    "sklearn_riskcontrol.evalues.conformal:mdr_decisions",
    "sklearn_riskcontrol.evalues.conformal:mdr_evalues",
    "sklearn_riskcontrol.evalues.conformal:mdr_label_decisions",
    "sklearn_riskcontrol.evalues.conformal:mdr_label_evalues",
    "sklearn_riskcontrol.evalues.conformal:sdr_evalues",
    "sklearn_riskcontrol.evalues.ltt:binomial_pvalues",
    "sklearn_riskcontrol.evalues.ltt:fallback",
    "sklearn_riskcontrol.evalues.ltt:hb_pvalues",
    "sklearn_riskcontrol.evalues.ltt:hoeffding_pvalues",
    "sklearn_riskcontrol.evalues.ltt:rautoeval_pvalues",
    "sklearn_riskcontrol.evalues.ltt:threshold_pvalues",
    "sklearn_riskcontrol.evalues.ltt:wsr_pvalues",
    "sklearn_riskcontrol.evalues.testing:bh",
    "sklearn_riskcontrol.evalues.testing:bonferroni",
    "sklearn_riskcontrol.evalues.testing:boost_evalues",
    "sklearn_riskcontrol.evalues.testing:ebh",
    "sklearn_riskcontrol.evalues.testing:fixed_sequence",
    "sklearn_riskcontrol.evalues:BettingEProcess",
    "sklearn_riskcontrol.evalues:ConcentrationResult",
    "sklearn_riskcontrol.evalues:FixedBet",
    "sklearn_riskcontrol.evalues:ModelSelectionResult",
    "sklearn_riskcontrol.evalues:RAutoEvalResult",
    "sklearn_riskcontrol.evalues:RiskConfidenceInterval",
    "sklearn_riskcontrol.evalues:UniversalPortfolio",
    "sklearn_riskcontrol.evalues:WSR",
    "sklearn_riskcontrol.evalues:betting_eprocess",
    "sklearn_riskcontrol.evalues:bh",
    "sklearn_riskcontrol.evalues:binomial_pvalues",
    "sklearn_riskcontrol.evalues:bonferroni",
    "sklearn_riskcontrol.evalues:boost_evalues",
    "sklearn_riskcontrol.evalues:concentration_threshold",
    "sklearn_riskcontrol.evalues:ebh",
    "sklearn_riskcontrol.evalues:effective_observations",
    "sklearn_riskcontrol.evalues:fallback",
    "sklearn_riskcontrol.evalues:fixed_sequence",
    "sklearn_riskcontrol.evalues:hb_pvalues",
    "sklearn_riskcontrol.evalues:hoeffding_pvalues",
    "sklearn_riskcontrol.evalues:mdr_decisions",
    "sklearn_riskcontrol.evalues:mdr_evalues",
    "sklearn_riskcontrol.evalues:mdr_label_decisions",
    "sklearn_riskcontrol.evalues:mdr_label_evalues",
    "sklearn_riskcontrol.evalues:mixture_log_eprocess",
    "sklearn_riskcontrol.evalues:mixture_weights",
    "sklearn_riskcontrol.evalues:rautoeval_confidence_interval",
    "sklearn_riskcontrol.evalues:rautoeval_select",
    "sklearn_riskcontrol.evalues:rautoeval_test",
    "sklearn_riskcontrol.evalues:sdr_evalues",
    "sklearn_riskcontrol.evalues:threshold_pvalues",
    "sklearn_riskcontrol.evalues:wsr_pvalues",
    "sklearn_riskcontrol.labeling:LabelingSession",
    "sklearn_riskcontrol.labeling:LabelingStatus",
    "sklearn_riskcontrol.labeling:SelectionSession",
    "sklearn_riskcontrol.labeling:SelectionStatus",
    "sklearn_riskcontrol.metrics:DEPLOYMENT_SCORERS",
    "sklearn_riskcontrol.metrics:average_set_size",
    "sklearn_riskcontrol.metrics:coverage_rate",
    "sklearn_riskcontrol.metrics:cumulative_regret",
    "sklearn_riskcontrol.metrics:deployment_rate",
    "sklearn_riskcontrol.metrics:make_deployment_scorer",
    "sklearn_riskcontrol.metrics:make_selective_scorer",
    "sklearn_riskcontrol.metrics:oracle_threshold",
    "sklearn_riskcontrol.metrics:realized_mdr",
    "sklearn_riskcontrol.metrics:realized_reward",
    "sklearn_riskcontrol.metrics:realized_sdr",
    "sklearn_riskcontrol.metrics:set_sizes",
    "sklearn_riskcontrol.metrics:undercoverage_count",
    "sklearn_riskcontrol.online.metrics:average_set_size",
    "sklearn_riskcontrol.online.metrics:coverage_rate",
    "sklearn_riskcontrol.online.metrics:cumulative_regret",
    "sklearn_riskcontrol.online.metrics:oracle_threshold",
    "sklearn_riskcontrol.online.metrics:set_sizes",
    "sklearn_riskcontrol.online.metrics:undercoverage_count",
    "sklearn_riskcontrol.online:ACILearner",
    "sklearn_riskcontrol.online:DLRLearner",
    "sklearn_riskcontrol.online:ETCLearner",
    "sklearn_riskcontrol.online:GreedyLearner",
    "sklearn_riskcontrol.online:MissRateMonitor",
    "sklearn_riskcontrol.online:ON_DRIFT",
    "sklearn_riskcontrol.online:SPSLearner",
    "sklearn_riskcontrol.online:STRATEGIES",
    "sklearn_riskcontrol.online:SemiBanditPredictionSet",
    "sklearn_riskcontrol.online:ThresholdLearner",
    "sklearn_riskcontrol.online:average_set_size",
    "sklearn_riskcontrol.online:coverage_rate",
    "sklearn_riskcontrol.online:cumulative_regret",
    "sklearn_riskcontrol.online:make_learner",
    "sklearn_riskcontrol.online:metrics",
    "sklearn_riskcontrol.online:oracle_threshold",
    "sklearn_riskcontrol.online:set_sizes",
    "sklearn_riskcontrol.online:simulate_monitored",
    "sklearn_riskcontrol.online:simulate_thresholds",
    "sklearn_riskcontrol.online:undercoverage_count",
    "sklearn_riskcontrol.plotting:plot_accuracy_vs_budget",
    "sklearn_riskcontrol.plotting:plot_coverage",
    "sklearn_riskcontrol.plotting:plot_deployment_vs_alpha",
    "sklearn_riskcontrol.plotting:plot_eprocess",
    "sklearn_riskcontrol.plotting:plot_evaluations_per_model",
    "sklearn_riskcontrol.plotting:plot_group_deployment",
    "sklearn_riskcontrol.plotting:plot_regret",
    "sklearn_riskcontrol.plotting:plot_rho_weights",
    "sklearn_riskcontrol.plotting:plot_risk_vs_alpha",
    "sklearn_riskcontrol.plotting:plot_set_size",
    "sklearn_riskcontrol.plotting:plot_thresholds",
    "sklearn_riskcontrol.risks:RISK_NAMES",
    "sklearn_riskcontrol.risks:Risk",
    "sklearn_riskcontrol.risks:SATURATION_WARN_SHARE",
    "sklearn_riskcontrol.risks:make_risk",
    "sklearn_riskcontrol.selective:ConcentrationMDR",
    "sklearn_riskcontrol.selective:ConcentrationSDR",
    "sklearn_riskcontrol.selective:RewardAwareScore",
    "sklearn_riskcontrol.selective:SCoREMDR",
    "sklearn_riskcontrol.selective:SCoRESDR",
    "sklearn_riskcontrol.selective:pipeline_decide",
    "sklearn_riskcontrol.studies:bandit_accuracy_study",
    "sklearn_riskcontrol.studies:monte_carlo",
    "sklearn_riskcontrol.studies:validity_study",
    "sklearn_riskcontrol.tables:LongTable",
    "sklearn_riskcontrol.tables:read_harness_samples",
    "sklearn_riskcontrol.tables:read_long_table",
    "sklearn_riskcontrol:BestModelSelector",
    "sklearn_riskcontrol:ConcentrationMDR",
    "sklearn_riskcontrol:ConcentrationSDR",
    "sklearn_riskcontrol:LabelingSession",
    "sklearn_riskcontrol:LowRankScoreCompleter",
    "sklearn_riskcontrol:PULSE",
    "sklearn_riskcontrol:RAutoEvalPlus",
    "sklearn_riskcontrol:RewardAwareScore",
    "sklearn_riskcontrol:RiskControlWarning",
    "sklearn_riskcontrol:RiskControlledModelSelector",
    "sklearn_riskcontrol:SCoREMDR",
    "sklearn_riskcontrol:SCoRESDR",
    "sklearn_riskcontrol:SelectionSession",
    "sklearn_riskcontrol:SemiBanditPredictionSet",
    "sklearn_riskcontrol:UCBE",
    "sklearn_riskcontrol:UCBELRF",
    "sklearn_riskcontrol:__version__",
    "sklearn_riskcontrol:autoeval",
    "sklearn_riskcontrol:bandits",
    "sklearn_riskcontrol:evalues",
    "sklearn_riskcontrol:labeling",
    "sklearn_riskcontrol:make_risk",
    "sklearn_riskcontrol:metrics",
    "sklearn_riskcontrol:online",
    "sklearn_riskcontrol:pipeline_decide",
    "sklearn_riskcontrol:risks",
    "sklearn_riskcontrol:studies",
    "sklearn_riskcontrol:tables",
]


def _resolve(module, name):
    """The object ``module:name`` (``name`` may be dotted, ``Class.method``)."""
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _documented():
    """``(module, name)`` of every autosummary entry of doc/api.rst, under its currentmodule."""
    pairs, module, in_summary = [], None, False
    for line in (ROOT / "doc" / "api.rst").read_text().splitlines():
        match = re.match(r"\.\. currentmodule::\s*(\S+)", line)
        if match:
            module, in_summary = match.group(1), False
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and line.startswith("   "):
            entry = line.strip()
            if entry and not entry.startswith(":"):
                assert module is not None, f"doc/api.rst: {entry!r} before any currentmodule"
                pairs.append((module, entry))
        elif in_summary and line.strip():
            in_summary = False
    return pairs


def _public_modules():
    """Names of the package's public modules (no component starting with ``_``)."""
    names = ["sklearn_riskcontrol"]
    for info in pkgutil.walk_packages(sklearn_riskcontrol.__path__, "sklearn_riskcontrol."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return names


def test_frozen_list_is_sorted_and_unique():
    assert FROZEN == sorted(set(FROZEN))


@pytest.mark.parametrize("pair", FROZEN)
def test_frozen_public_name_imports(pair):
    module, name = pair.split(":")
    _resolve(module, name)


def test_api_reference_names_import():
    pairs = _documented()
    assert len(pairs) > 100, "doc/api.rst was not parsed: too few autosummary entries"
    missing = []
    for module, name in pairs:
        try:
            _resolve(module, name)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{module}:{name} ({exc})")
    assert not missing, "documented in doc/api.rst but not importable:\n" + "\n".join(missing)


def test_all_lists_import():
    modules = _public_modules()
    for expected in ("sklearn_riskcontrol.cli", "sklearn_riskcontrol.demo",
                     "sklearn_riskcontrol.tables", "sklearn_riskcontrol.evalues.betting",
                     "sklearn_riskcontrol.bandits.lowrank", "sklearn_riskcontrol.plotting"):
        assert expected in modules
    missing = []
    for module in modules:
        mod = importlib.import_module(module)
        missing += [f"{module}:{name}" for name in getattr(mod, "__all__", ())
                    if not hasattr(mod, name)]
    assert not missing, "listed in __all__ but not defined:\n" + "\n".join(missing)


def test_command_line_and_demo_entry_points():
    from sklearn_riskcontrol.cli import _build_parser, main
    from sklearn_riskcontrol.demo import run_demo

    assert callable(main) and callable(run_demo)
    assert _build_parser().prog == "python -m sklearn_riskcontrol"
    assert importlib.import_module("sklearn_riskcontrol.__main__").main is main
