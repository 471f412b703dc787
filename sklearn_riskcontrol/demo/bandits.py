"""Best-model identification section of the demo (``python -m sklearn_riskcontrol demo``).

PULSE and UCB-E look for the best of 60 models on a synthetic models x examples correctness
matrix from the package's simulator (:func:`~sklearn_riskcontrol.bandits.make_score_matrix`, a
low-rank item-response model with a set gap between the two best models, plus other models'
scores on the same examples as side information), each scoring under 2% of the cells.
"""

import warnings

from .._validation import RiskControlWarning
from ..bandits import PULSE, UCBE, make_score_matrix
from ..bandits import vacuous_intervals
from ..bandits import budget_to_reach

__all__ = ["bandits_section"]


def _settled(run, best):
    """Evaluations after which the run's pick is the best model for good (inf: never)."""
    return budget_to_reach([run], best, level=1.0)


def bandits_section(seed=0):
    """Print the best-model part of the demo; return its one-line summary."""
    n_models, n_examples = 60, 4000
    budget, delta = n_examples, 0.05
    total = n_models * n_examples
    data = make_score_matrix(n_models, n_examples, n_side_models=60, gap=0.04, rank=8,
                             random_state=seed)
    best = int(data.best_index)
    print("Best-model identification: find the best of many models under an evaluation budget")
    print(f"  synthetic correctness matrix (make_score_matrix): {n_models} models x {n_examples} "
          f"examples, top-2 gap {data.gap:.3f}, plus 60 other models' scores on the same "
          "examples as side information")
    print(f"  budget {budget} of {total} evaluations ({budget / total:.1%}); exact best model "
          f"{best} (mean {data.means[best]:.3f})")
    pulse = PULSE(budget=budget, batch_size=8, refit_every=20, rank=4, random_state=seed)
    pulse.fit(data.scores, side_scores=data.side_scores)
    ucbe = UCBE(budget=budget, batch_size=8, random_state=seed).fit(data.scores)
    cis = {}
    for name, run in (("PULSE", pulse), ("UCB-E", ucbe)):
        k = int(run.best_index_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RiskControlWarning)  # vacuous ones are counted below
            ci = cis[name] = run.confidence_intervals(delta)
        inside = (ci[:, 0] <= data.means) & (data.means <= ci[:, 1])
        print(f"  {name:<6s} picks model {k} ({'the exact best' if k == best else 'NOT the best'}"
              f"), estimate {run.means_[k]:.3f}; its pick settled on the best after "
              f"{_settled(run, best):.0f} evaluations (one run)\n"
              f"         {1 - delta:.0%} CI for model {k}: [{ci[k, 0]:.3f}, {ci[k, 1]:.3f}]; "
              f"{int(inside.sum())} of {n_models} intervals contain their model's exact mean "
              f"(this run),\n         {int(vacuous_intervals(ci).sum())} of them vacuous "
              "([0, 1]: models scored only a few times, as the bandit spends its budget on the "
              "contenders)")
    print(f"  guarantee: w.p. >= {1 - delta:g} all {n_models} intervals of a method hold at once, "
          "whenever the run stops (anytime-valid betting\n  confidence sequences); PULSE's "
          "estimates are conditionally unbiased whatever the low-rank predictions")
    k, ci = int(pulse.best_index_), cis["PULSE"]
    return (f"identified  model {k} by PULSE with {budget} of {total} evaluations "
            f"({'the exact best' if k == best else 'not the best'}; one run): estimate "
            f"{pulse.means_[k]:.3f}; {1 - delta:.0%} CI [{ci[k, 0]:.3f}, {ci[k, 1]:.3f}]; "
            f"guarantee w.p. >= {1 - delta:g} the intervals hold simultaneously over the "
            f"{n_models} models (scores in [0, 1], no model assumption)")
