"""R-AutoEval+ section of the demo (``python -m sklearn_riskcontrol demo``).

Certifies the error rate of a letter classifier from 300 human labels plus a stronger model used
as auto-evaluator (the role an LLM judge plays for LLMs), compares R-Eval / R-AutoEval /
R-AutoEval+, then selects the smallest decision tree whose error is certified.
"""

import warnings

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from ..autoeval import RAutoEvalPlus, RiskControlledModelSelector
from ..datasets import load_letter

__all__ = ["autoeval_section"]

_METHODS = (("R-Eval (labels only)", "eval"), ("R-AutoEval (rho = 1)", "autoeval"),
            ("R-AutoEval+", "plus"))


def autoeval_section(seed=0, quick=False):
    """Print the R-AutoEval+ part of the demo (letter recognition); return its summary lines."""
    X, y = load_letter(return_X_y=True)
    n_fit, n_labeled, ratio = (3000, 200, 5) if quick else (5000, 300, 10)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=n_fit, random_state=seed)
    n_eval = n_labeled * (1 + ratio)
    X_eval, X_test, y_eval, y_test = train_test_split(
        X_rest, y_rest, train_size=n_eval, random_state=seed
    )
    y_semi = np.array(y_eval, dtype=object)
    y_semi[n_labeled:] = -1  # -1 = no human label (sklearn's semi-supervised convention)
    judge = RandomForestClassifier(n_estimators=30 if quick else 50, random_state=seed)
    judge.fit(X_fit, y_fit)
    depths = (24, 16, 13, 11, 9)
    trees = [DecisionTreeClassifier(max_depth=d, random_state=seed).fit(X_fit, y_fit)
             for d in depths]
    test_error = [float(np.mean(t.predict(X_test) != y_test)) for t in trees]
    alpha, delta = 0.3, 0.1

    print("R-AutoEval+: certify a classifier's error rate with few labels and an auto-evaluator")
    print(f"  letter recognition; {n_labeled} human-labeled + {n_eval - n_labeled} unlabeled "
          f"rows; alpha = {alpha}, delta = {delta}")
    print(f"  auto-evaluator: random forest (held-out error "
          f"{np.mean(judge.predict(X_test) != y_test):.3f})")
    model = trees[1]
    print(f"  model: decision tree of depth {depths[1]} (error on {len(y_test)} held-out rows "
          f"{test_error[1]:.3f}, an estimate of its true error)")
    print("  guarantee: P(certified and error > alpha) <= delta, whatever the auto-evaluator; "
          f"each {1 - delta:.0%} CI\n  contains the true error w.p. >= {1 - delta:g} (i.i.d. rows); "
          "p-values, labels needed and CIs below are one draw")
    for name, method in _METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not certified" is shown in the table
            cert = RAutoEvalPlus(model, autoevaluator=judge, alpha=alpha, delta=delta,
                                 method=method, random_state=seed).fit(X_eval, y_semi)
        need = cert.result_.stopping_index
        ci = cert.confidence_interval()
        print(f"  {name:<21s} certified: {cert.decide()!s:<5} p-value {cert.pvalue_:.4f}"
              f"  labels needed {'-' if need is None else need + 1:>4}"
              f"  {1 - delta:.0%} CI [{ci.low:.3f}, {ci.high:.3f}]")
    summary = [(
        f"certified   R-AutoEval+: error of the depth-{depths[1]} tree <= {alpha} "
        f"{'certified' if cert.decide() else 'NOT certified'} from {n_labeled} labels (one draw); "
        f"guarantee P(certified while error > {alpha}) <= {delta} (i.i.d. rows, any "
        "auto-evaluator)"
    )]

    print(f"  model selection: smallest certified tree among depths {list(depths)}")
    print("  (fixed-sequence testing from the largest; w.p. >= 1 - delta every certified tree has "
          "error <= alpha)")
    for name, method in _METHODS:
        tester = RAutoEvalPlus(None, autoevaluator=judge, alpha=alpha, delta=delta,
                               method=method, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel = RiskControlledModelSelector(trees, tester=tester, cost=list(depths))
            sel.fit(X_eval, y_semi)
        if sel.selected_index_ is None:
            chosen = "none (no tree certified)"
        else:
            k = sel.selected_index_
            chosen = f"depth {depths[k]} (held-out error {test_error[k]:.3f})"
        print(f"  {name:<21s} certified {int(sel.certified_.sum())} of {len(trees)}; "
              f"selected {chosen}")
    summary.append(
        f"selected    R-AutoEval+ model selection (one draw): {chosen}; guarantee w.p. >= "
        f"{1 - delta:g} every certified tree has error <= {alpha} (family-wise error <= {delta})"
    )
    return summary
