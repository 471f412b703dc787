"""PAC selective risk control: our default against MAPIE's Learn-then-Test controllers (issue 25).

Guarantee compared: with probability at least ``1 - delta`` over the calibration data
(``delta = 0.1``), the population risk among deployed points (SDR; here the error rate of the
model on the points it is deployed on) is at most ``alpha``.

Cases (``--cases``: numbers or names, comma-separated). Each model is fitted once per data set
on a shuffled training part (digits, letter and the synthetic data sets: half of the rows, the
split of :func:`fitted_forest`; diamonds: 20,000 rows); the other rows are split ``--splits``
times, shuffled, into calibration and test halves, the same splits for every model and method of
a data set. Classifiers: score ``s(x) = 1 - max class probability``, loss = 0/1 error of the
predicted class (the argmax of ``predict_proba``).

Tuned cases (``held_out=False`` in ``CASES``): the default's weights were chosen on cases 1-7,
then re-tuned on all of cases 1-12 (8-12 had been added as held-out checks; they are no longer
held out); the third round (``selective_pac_start.py``) chose the current weights on cases 1-25,
the fourth round picked its candidates on cases 1-35 and the fifth its candidate on cases 1-45,
so of the cases marked held out below only 46-55 are unseen by it:

1. ``digits-lr-.02``: digits, standardized logistic regression, alpha .02;
2. ``digits-lr-.01``: the same model, alpha .01;
3. ``letter-lr-.05``: letter, standardized logistic regression, alpha .05;
4. ``letter-hgb-.02``: letter, histogram gradient boosting (50 iterations, learning rate .2)
   fitted on 70% of the training part and calibrated (isotonic ``CalibratedClassifierCV``) on the
   other 30%, alpha .02;
5. ``digits-rf-.02``: digits, random forest (100 trees), alpha .02;
6. ``letter-rf-.01``: letter, random forest (100 trees), alpha .01;
7. ``diamonds-ridge-.05`` (the package's bundled copy, ``load_diamonds``; the case is skipped,
   saying so, if it is missing): a regressor's risk score. Gradient boosting predicts the log-price;
   loss = 1{|log-price error| > 0.15} (price off by more than ~16%); score = a ridge regression
   of that 0/1 loss (out-of-fold losses of the training rows; one-hot cut / colour / clarity,
   splines of the numeric columns and of the predicted log-price), whose values fall outside
   [0, 1] on some rows; alpha .05;
8. ``digits-gnb-.05``: digits, Gaussian naive Bayes (overconfident probabilities: about half
   of the scores are exactly 0 and most are within 1e-6 of it, heavy ties), alpha .05;
9. ``letter-knn-.02``: letter, ``KNeighborsClassifier(n_neighbors=15)`` on the raw features
   (probabilities are multiples of 1/15: a score with at most 15 values, ties), alpha .02;
10. ``letter-mlp-.02``: letter, standardized ``MLPClassifier`` (one hidden layer of 100 units,
    200 epochs: sklearn's defaults, stopped before its tolerance; the ConvergenceWarning is
    silenced), alpha .02;
11. ``synth-lr-.05``: synthetic, ``make_classification(n_samples=12000, n_features=20,
    n_informative=8, flip_y=0.03, class_sep=1.0, random_state=seed)``, standardized logistic
    regression; the flipped labels put errors among the most confident points; alpha .05;
12. ``digits-lr-.05``: the model of cases 1-2 at alpha .05.

Held-out cases (not used to choose the default; ``held_out=True`` in ``CASES``, the output marks
them ``(held out)``): cases 13-17, added after the re-tuning on cases 1-12 to check the default on
models, scores, data and alphas it was not tuned on (not run by ``--quick`` unless named in
``--cases``):

13. ``synth4-rf-.1``: synthetic, ``make_classification(n_samples=10000, n_features=30,
    n_informative=10, n_classes=4, n_clusters_per_class=1, flip_y=0.06, random_state=seed)``
    (four classes, more label noise than case 11), random forest (200 trees), alpha .1;
14. ``digits-svc-.02``: digits, ``SVC(probability=True)`` (RBF kernel on the raw features, Platt
    scaling by sklearn's internal 5-fold cross-validation; deprecated in scikit-learn 1.9, whose
    FutureWarning is silenced; where ``SVC`` has no ``probability`` any more, its replacement
    ``CalibratedClassifierCV(SVC(), ensemble=False)``), alpha .02;
15. ``letter-lr-.1``: the model of case 3 at a larger alpha, .1;
16. ``diamonds-abserr-.1``: the regressor of case 7 with another risk score, not a probability:
    a ``HistGradientBoostingRegressor`` (squared error, 100 iterations) of the absolute
    out-of-fold log-price error of the training rows (same features as the regressor, plus
    its out-of-fold prediction), its prediction being the score (any real value: slightly
    negative on some rows); loss = 1{|log-price error| > 0.1} (price off by more than ~10.5%);
    alpha .1. MAPIE and the old default see ``F(s)`` as for case 7 (below), whatever the range
    of the score;
17. ``letter-tree-.05``: letter, ``DecisionTreeClassifier(max_depth=12)``: probabilities are
    leaf frequencies, so the score has few distinct values (under a hundred) and about half of
    the points tie at score 0 (pure leaves), alpha .05.

Held-out cases 18-22 (second round, issue 25): cases 13-17 became "seen" when the default's start
was revisited; these five were added before any candidate for it was measured, and run once on
the chosen candidate (models fitted on half of the rows, the other half split as above):

18. ``breast-lr-.05``: ``load_breast_cancer``, standardized logistic regression, alpha .05: a
    small calibration set (142 rows);
19. ``friedman-abserr-.05``: a regressor's risk score on another data set, ``make_friedman1``
    with heteroscedastic noise (see ``_friedman_problem``), loss = 1{|error| > 0.5} (about half
    of the rows err), score = a boosted regression of the absolute out-of-fold error; MAPIE sees
    ``F(s)`` as for the diamonds cases; alpha .05: only the safest scores can be deployed;
20. ``synth2-hgb-.005``: ``make_classification(n_samples=20000, n_features=10,
    n_informative=5, n_redundant=2, class_sep=1.5, flip_y=0)``, gradient boosting with sigmoid
    calibration (3-fold ``CalibratedClassifierCV``): a confident calibrated classifier at a
    small alpha, .005;
21. ``imbalanced-lr-.01``: ``make_classification(n_samples=20000, n_features=10,
    n_informative=4, weights=[0.97], class_sep=1.2, flip_y=0)``, standardized logistic
    regression: a rare loss (about 3% errors), alpha .01;
22. ``synth4-lr-.02``: the data of case 13 with standardized logistic regression (about 16%
    errors), alpha .02: a small deployable region.

Cases 19, 21 and 22 deployed nothing for any method (ours and MAPIE's); cases 23-25 are their
models at larger alphas (.15, .02, .05), added after the candidate had been chosen and before
they were run:

23. ``friedman-abserr-.15``; 24. ``imbalanced-lr-.02``; 25. ``synth4-lr-.05``.

Held-out cases 26-35 (third round, issue 25): the default's start was chosen again on cases 1-25
(all seen); these ten were added to the script before any candidate was run on them, to test it
on more imbalanced and confidently-wrong models:

26. ``imbalanced2-hgb-.02``: ``make_classification(n_samples=20000, n_features=12,
    n_informative=5, weights=[0.95], class_sep=1.0, flip_y=0.01)``, the calibrated boosting of
    case 4, alpha .02;
27. ``noisy-lr-.1``: ``make_classification(n_samples=12000, n_features=10, n_informative=6,
    class_sep=2.0, flip_y=0.12)``: well separated classes with 6% of the labels flipped at
    random, so errors sit among the most confident points; logistic regression, alpha .1;
28. ``noisy-rf-.1``: the same data, random forest (200 trees), alpha .1;
29. ``imbalanced-hgb-.02``: the data of case 24 with the calibrated boosting, alpha .02;
30. ``breast-rf-.05``: the small data of case 18 with a random forest (200 trees), alpha .05;
31. ``letter-gnb-.1``: letter, Gaussian naive Bayes (overconfident), alpha .1;
32. ``digits-knn-.01``: digits, 15 nearest neighbours (ties), alpha .01;
33. ``synth4-mlp-.05``: the data of case 13 with the MLP of case 10, alpha .05;
34. ``friedman-abserr-.25``: the regressor's risk score of case 19, alpha .25;
35. ``diamonds-abserr-.15``: the risk score of case 16, alpha .15.

Held-out cases 36-45 (fourth round, issue 25): the round's candidates were picked on cases 1-35
(all seen); these ten, on new data and models, were added before any candidate ran on them:

36. ``moons-knn5-.05``: ``make_moons(n_samples=8000, noise=0.35)``, standardized 5 nearest
    neighbours (scores in steps of .2: large tie blocks), alpha .05;
37. ``hastie-hgb-.05``: ``make_hastie_10_2(n_samples=12000)``, the calibrated boosting of case 4,
    alpha .05;
38. ``letter-et-.02``: letter, extra trees (200), alpha .02;
39. ``digits-et-.01``: digits, extra trees (200), alpha .01;
40. ``circles-svc-.05``: ``make_circles(n_samples=8000, noise=0.15, factor=0.5)``, the RBF SVC
    of case 14, alpha .05;
41. ``synth3-lr-.1``: ``make_classification(n_samples=10000, n_features=15, n_informative=6,
    n_classes=3, class_sep=0.8, flip_y=0.02)``, logistic regression, alpha .1;
42. ``hastie-ada-.1``: the data of case 37, AdaBoost on stumps (200; probabilities squeezed
    towards 1/2), alpha .1;
43. ``breast-knn5-.05``: the small data of case 18, 5 nearest neighbours, alpha .05;
44. ``moons-mlp-.02``: the data of case 36, the MLP of case 10, alpha .02;
45. ``synth3-gnb-.05``: the data of case 41, Gaussian naive Bayes, alpha .05.

Held-out cases 46-55 (fifth round, issue 25): the round's candidate was picked on cases 1-45 (all
seen); these ten, on new data and models, were added before it ran on them:

46. ``letter-qda-.05``: letter, quadratic discriminant analysis (``reg_param=0.01``), alpha .05;
47. ``digits-lda-.02``: digits, linear discriminant analysis, alpha .02;
48. ``blobs-sgd-.05``: ``make_blobs(n_samples=9000, centers=4, n_features=6,
    cluster_std=3.0)``, standardized logistic loss by SGD, alpha .05;
49. ``quantiles-gb-.05``: ``make_gaussian_quantiles(n_samples=10000, n_features=4,
    n_classes=3)``, gradient boosting (100), alpha .05;
50. ``letter-bag-.01``: letter, bagged trees (100; scores in steps of .01), alpha .01;
51. ``breast-lda-.02``: the small data of case 18, linear discriminant analysis, alpha .02;
52. ``moons-rf-.05``: the data of case 36, random forest (200), alpha .05;
53. ``quantiles-knn-.1``: the data of case 49, 15 nearest neighbours, alpha .1;
54. ``synth5-lr-.01``: ``make_classification(n_samples=12000, n_features=20, n_informative=10,
    class_sep=2.5, flip_y=0.01)``, logistic regression, alpha .01;
55. ``blobs-lr-.02``: the data of case 48, logistic regression, alpha .02.

Methods (per case, same splits):

* ``ours default``: ``concentration_threshold(loss, score, alpha, target="sdr", delta=.1)``,
  whatever its defaults are in this checkout;
* ``ours fixed_sequence``: ``procedure="fixed_sequence"``, default grid;
* ``ours old default``: ``grid=np.linspace(0, 1, 100), procedure="fallback"`` (the default before
  issue 25, for [0, 1] scores only); on diamonds (case 7, whose scores leave [0, 1]; case 16, not
  a probability) it runs on ``F(s)`` (below; the label says ``on F(s)``), a map fixed before the
  calibration data is seen;
* ``MAPIE <fwer>``: MAPIE 1.6 ``BinaryClassificationController`` (``compare`` extra; without it
  these rows are left out, as the script says), ``risk="precision"`` on the binary event "the
  model is right" with probability ``P(right)``, ``target_level = 1 - alpha``,
  ``confidence_level = 1 - delta``, its default 100 thresholds ``linspace(0, 0.99, 100)``, one
  row per ``fwer_method``: ``bonferroni``, ``bonferroni_holm``, ``fixed_sequence`` and
  ``split_fixed_sequence`` (which needs ``learn_fixed_sequence_order`` on data independent of
  the calibration: the calibration half is split at random into a learning and a calibration
  half, as MAPIE documents; its ``beta_grid`` is MAPIE's default, 1000 points, except in
  quick mode: 100, to save time). ``P(right)`` = the max class probability for the classifiers; for
  the diamonds scores (not probabilities) ``1 - F(s)``, ``F`` the empirical distribution of the
  risk score (ridge, case 7; predicted absolute error, case 16) on the training rows: decreasing
  in ``s`` and fixed before any calibration data is seen, and it spreads MAPIE's 100 thresholds
  over the quantiles of the score.

Reported per (case, method): fraction of test points deployed (mean over splits and 10%
quantile); ``P(fail)``, the share of splits whose **test** error among deployed exceeds alpha
(a noisy estimate of the failure probability: the test error fluctuates around the population
risk, so a method at the limit shows somewhat above ``delta``; the guarantee itself is checked
in Monte Carlo with known risk functions in ``tests/selective/test_concentration_ltt.py`` and
``tests/selective/test_concentration_grid.py``); seconds per split. Then one line per case: ours
default against the MAPIE controller that deployed most on average, with the mean paired
difference over splits and its standard error. Without ``--quick``, the script exits with status
1 (``_common.fail_if``) if ours default deploys less than that controller by more than 2
standard errors of the paired difference, held-out cases included; with ``--quick`` (10 splits,
too few; the tuned cases 1-12 only, unless ``--cases`` names held-out ones, to stay under a
minute) it only prints.

Per-group section (issue 25, part 2; digits and letter, logistic regression, alpha .05): one
threshold per predicted class, ``ConcentrationSDR(model, alpha=.05, delta=.1,
groups="predicted_class")`` fitted on the calibration rows (the model is fitted, so every row
given to ``fit`` calibrates), against MAPIE's ``MultiClassificationLTTController`` with
``build_precision_ovr`` (one threshold on the top-class probability such that every class's
one-vs-rest precision is >= 1 - alpha; ``bonferroni_holm``, its default, and
``split_fixed_sequence`` as above), and ``ConcentrationSDR`` without groups for reference.
Reported: total deployed share and the share of splits where some class's test error among
deployed points predicted as that class exceeds alpha (very noisy: a few dozen test points per
class). Skipped, saying so, while ``ConcentrationSDR`` has no ``groups`` parameter.

Usage::

    python benchmarks/selective_pac.py                 # all 55 cases, 100 splits
    python benchmarks/selective_pac.py --quick         # cases 1-12, 10 splits, smoke test
    python benchmarks/selective_pac.py --cases 1,digits-rf-.02 --splits 200
    python benchmarks/selective_pac.py --cases 18,19,20,21,22 --no-groups  # held out only
"""

import argparse
import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import make_column_transformer
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    make_blobs,
    make_circles,
    make_classification,
    make_friedman1,
    make_gaussian_quantiles,
    make_hastie_10_2,
    make_moons,
)
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.ensemble import (
    AdaBoostClassifier,
    BaggingClassifier,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier
from sklearn.model_selection import cross_val_predict, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
    OrdinalEncoder,
    SplineTransformer,
    StandardScaler,
)
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from sklearn_riskcontrol.selective import ConcentrationSDR, concentration_threshold
from sklearn_riskcontrol import RiskControlWarning
from sklearn_riskcontrol.datasets import load_diamonds, load_letter

from _common import fail_if, optional, skip  # benchmarks/ is on sys.path when run as a script

DELTA = 0.1
CASES = [  # (name, data set, model, alpha, held_out: not used to choose the default)
    # tuned cases: the default was chosen on 1-7, then re-tuned on 1-12
    ("digits-lr-.02", "digits", "lr", 0.02, False),
    ("digits-lr-.01", "digits", "lr", 0.01, False),
    ("letter-lr-.05", "letter", "lr", 0.05, False),
    ("letter-hgb-.02", "letter", "hgb", 0.02, False),
    ("digits-rf-.02", "digits", "rf", 0.02, False),
    ("letter-rf-.01", "letter", "rf", 0.01, False),
    ("diamonds-ridge-.05", "diamonds", "ridge", 0.05, False),
    ("digits-gnb-.05", "digits", "gnb", 0.05, False),
    ("letter-knn-.02", "letter", "knn", 0.02, False),
    ("letter-mlp-.02", "letter", "mlp", 0.02, False),
    ("synth-lr-.05", "synth", "lr", 0.05, False),
    ("digits-lr-.05", "digits", "lr", 0.05, False),
    # held-out cases 13-17 (not used to choose the default; added after the re-tuning on 1-12)
    ("synth4-rf-.1", "synth4", "rf200", 0.1, True),
    ("digits-svc-.02", "digits", "svc", 0.02, True),
    ("letter-lr-.1", "letter", "lr", 0.1, True),
    ("diamonds-abserr-.1", "diamonds", "abserr", 0.1, True),
    ("letter-tree-.05", "letter", "tree", 0.05, True),
    # held-out cases 18-22 (issue 25, second round): added before any candidate for the
    # default's start was measured, run once on the chosen candidate
    ("breast-lr-.05", "breast", "lr", 0.05, True),
    ("friedman-abserr-.05", "friedman", "abserr", 0.05, True),
    ("synth2-hgb-.005", "synth2", "hgbsig", 0.005, True),
    ("imbalanced-lr-.01", "imbalanced", "lr", 0.01, True),
    ("synth4-lr-.02", "synth4", "lr", 0.02, True),
    # held-out cases 23-25: the data and models of 19, 21 and 22 at larger alphas (where
    # something is deployable), added after the candidate had been chosen, before running them
    ("friedman-abserr-.15", "friedman", "abserr", 0.15, True),
    ("imbalanced-lr-.02", "imbalanced", "lr", 0.02, True),
    ("synth4-lr-.05", "synth4", "lr", 0.05, True),
    # held-out cases 26-35 (issue 25, third round): added after cases 1-25 had chosen the
    # candidate for the default's start and before any candidate was run on them
    ("imbalanced2-hgb-.02", "imbalanced2", "hgb", 0.02, True),
    ("noisy-lr-.1", "noisy", "lr", 0.1, True),
    ("noisy-rf-.1", "noisy", "rf200", 0.1, True),
    ("imbalanced-hgb-.02", "imbalanced", "hgb", 0.02, True),
    ("breast-rf-.05", "breast", "rf200", 0.05, True),
    ("letter-gnb-.1", "letter", "gnb", 0.1, True),
    ("digits-knn-.01", "digits", "knn", 0.01, True),
    ("synth4-mlp-.05", "synth4", "mlp", 0.05, True),
    ("friedman-abserr-.25", "friedman", "abserr", 0.25, True),
    ("diamonds-abserr-.15", "diamonds", "abserr", 0.15, True),
    # held-out cases 36-45 (issue 25, fourth round): new data and models, added after cases
    # 1-35 had been used to pick the round's candidates and before any candidate ran on them
    ("moons-knn5-.05", "moons", "knn5", 0.05, True),
    ("hastie-hgb-.05", "hastie", "hgb", 0.05, True),
    ("letter-et-.02", "letter", "et", 0.02, True),
    ("digits-et-.01", "digits", "et", 0.01, True),
    ("circles-svc-.05", "circles", "svc", 0.05, True),
    ("synth3-lr-.1", "synth3", "lr", 0.1, True),
    ("hastie-ada-.1", "hastie", "ada", 0.1, True),
    ("breast-knn5-.05", "breast", "knn5", 0.05, True),
    ("moons-mlp-.02", "moons", "mlp", 0.02, True),
    ("synth3-gnb-.05", "synth3", "gnb", 0.05, True),
    # held-out cases 46-55 (issue 25, fifth round): new data and models, added after cases
    # 1-45 had been used to pick the round's candidate and before it ran on them
    ("letter-qda-.05", "letter", "qda", 0.05, True),
    ("digits-lda-.02", "digits", "lda", 0.02, True),
    ("blobs-sgd-.05", "blobs", "sgd", 0.05, True),
    ("quantiles-gb-.05", "quantiles", "gb", 0.05, True),
    ("letter-bag-.01", "letter", "bag", 0.01, True),
    ("breast-lda-.02", "breast", "lda", 0.02, True),
    ("moons-rf-.05", "moons", "rf200", 0.05, True),
    ("quantiles-knn-.1", "quantiles", "knn", 0.1, True),
    ("synth5-lr-.01", "synth5", "lr", 0.01, True),
    ("blobs-lr-.02", "blobs", "lr", 0.02, True),
]
HELD_OUT = ("held-out cases (each added as a check after a choice of the default; cases 13-45 "
            "were seen when the current default was chosen, 46-55 were not)")

MAPIE_FWER = ("bonferroni", "bonferroni_holm", "fixed_sequence", "split_fixed_sequence")
GROUP_DATA = ("digits", "letter")
GROUP_ALPHA = 0.05
DIAMONDS_FIT_ROWS = 20_000
# on the log-price, per risk score: a price off by more than ~16% (case 7) / ~10.5% (case 16)
# is an error
DIAMONDS_TOLERANCE = {"ridge": 0.15, "abserr": 0.10}
Z_BELOW = 2.0  # ours default "below" the best MAPIE: paired difference < -2 standard errors


# ------------------------------------------------------------------------------ data and models
def _halves(name, seed):
    """Shuffled halves ``(X_fit, y_fit, X_rest, y_rest)`` of digits, letter or the synthetic
    data (``synth``: case 11; ``synth4``, four classes: held-out case 13)."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
    elif name == "synth":
        X, y = make_classification(n_samples=12_000, n_features=20, n_informative=8,
                                   flip_y=0.03, class_sep=1.0, random_state=seed)
    elif name == "synth4":
        X, y = make_classification(n_samples=10_000, n_features=30, n_informative=10,
                                   n_classes=4, n_clusters_per_class=1, flip_y=0.06,
                                   random_state=seed)
    elif name == "breast":
        X, y = load_breast_cancer(return_X_y=True)
    elif name == "synth2":
        X, y = make_classification(n_samples=20_000, n_features=10, n_informative=5,
                                   n_redundant=2, class_sep=1.5, flip_y=0.0,
                                   random_state=seed)
    elif name == "imbalanced":
        X, y = make_classification(n_samples=20_000, n_features=10, n_informative=4,
                                   weights=[0.97], class_sep=1.2, flip_y=0.0,
                                   random_state=seed)
    elif name == "imbalanced2":
        X, y = make_classification(n_samples=20_000, n_features=12, n_informative=5,
                                   weights=[0.95], class_sep=1.0, flip_y=0.01,
                                   random_state=seed)
    elif name == "moons":
        X, y = make_moons(n_samples=8_000, noise=0.35, random_state=seed)
    elif name == "circles":
        X, y = make_circles(n_samples=8_000, noise=0.15, factor=0.5, random_state=seed)
    elif name == "hastie":
        X, y = make_hastie_10_2(n_samples=12_000, random_state=seed)
    elif name == "synth3":
        X, y = make_classification(n_samples=10_000, n_features=15, n_informative=6,
                                   n_classes=3, class_sep=0.8, flip_y=0.02,
                                   random_state=seed)
    elif name == "blobs":
        X, y = make_blobs(n_samples=9_000, centers=4, n_features=6, cluster_std=3.0,
                          random_state=seed)
    elif name == "quantiles":
        X, y = make_gaussian_quantiles(n_samples=10_000, n_features=4, n_classes=3,
                                       random_state=seed)
    elif name == "synth5":
        X, y = make_classification(n_samples=12_000, n_features=20, n_informative=10,
                                   class_sep=2.5, flip_y=0.01, random_state=seed)
    elif name == "noisy":
        X, y = make_classification(n_samples=12_000, n_features=10, n_informative=6,
                                   class_sep=2.0, flip_y=0.12, random_state=seed)
    else:
        X, y = load_letter(return_X_y=True)
        X, y = X.to_numpy(), y.to_numpy()
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.5, shuffle=True,
                                                    random_state=seed)
    return X_fit, y_fit, X_rest, y_rest


def fitted_forest(name, seed):
    """A random forest fitted on a shuffled half of ``digits`` or ``letter``; returns it with
    both halves ``(model, X_fit, y_fit, X_rest, y_rest)`` (shared with selective_pac_ppi.py)."""
    X_fit, y_fit, X_rest, y_rest = _halves(name, seed)
    model = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=2).fit(X_fit, y_fit)
    return model, X_fit, y_fit, X_rest, y_rest


def _prepare(name, seed):
    """Scores and 0/1 losses of the random forest on the non-training rows (shared with
    selective_boosting.py)."""
    model, _, _, X_rest, y_rest = fitted_forest(name, seed)
    proba = model.predict_proba(X_rest)
    loss = (model.classes_[proba.argmax(axis=1)] != y_rest).astype(float)
    return 1.0 - proba.max(axis=1), loss


def _logistic(X_fit, y_fit, seed):
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(X_fit, y_fit)


def _naive_bayes(X_fit, y_fit, seed):
    return GaussianNB().fit(X_fit, y_fit)


def _neighbors(X_fit, y_fit, seed):
    return KNeighborsClassifier(n_neighbors=15).fit(X_fit, y_fit)


def _neighbors_5(X_fit, y_fit, seed):
    """Five neighbours: scores in steps of 0.2, large tie blocks."""
    return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=5)).fit(X_fit, y_fit)


def _extra_trees(X_fit, y_fit, seed):
    return ExtraTreesClassifier(n_estimators=200, random_state=seed, n_jobs=2).fit(X_fit, y_fit)


def _qda(X_fit, y_fit, seed):
    return QuadraticDiscriminantAnalysis(reg_param=0.01).fit(X_fit, y_fit)


def _lda(X_fit, y_fit, seed):
    return LinearDiscriminantAnalysis().fit(X_fit, y_fit)


def _sgd(X_fit, y_fit, seed):
    """Logistic loss by stochastic gradient descent (a less converged linear model)."""
    return make_pipeline(StandardScaler(), SGDClassifier(loss="log_loss", random_state=seed)
                         ).fit(X_fit, y_fit)


def _gradient_boosting(X_fit, y_fit, seed):
    return GradientBoostingClassifier(n_estimators=100, random_state=seed).fit(X_fit, y_fit)


def _bagging(X_fit, y_fit, seed):
    """Bagged decision trees (100): scores in steps of .01."""
    return BaggingClassifier(n_estimators=100, random_state=seed, n_jobs=2).fit(X_fit, y_fit)


def _adaboost(X_fit, y_fit, seed):
    """AdaBoost on stumps: probabilities squeezed towards 1/2."""
    return AdaBoostClassifier(n_estimators=200, random_state=seed).fit(X_fit, y_fit)


def _mlp(X_fit, y_fit, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 200 epochs, sklearn's default
        return make_pipeline(StandardScaler(),
                             MLPClassifier(hidden_layer_sizes=(100,), random_state=seed)
                             ).fit(X_fit, y_fit)


@threadpool_limits.wrap(limits=1, user_api="openmp")  # 2 threads on 2 busy cores: far slower
def _calibrated_boosting(X_fit, y_fit, seed):
    X_a, X_b, y_a, y_b = train_test_split(X_fit, y_fit, train_size=0.7, random_state=seed)
    hgb = HistGradientBoostingClassifier(max_iter=50, learning_rate=0.2, early_stopping=False,
                                         random_state=seed).fit(X_a, y_a)
    return CalibratedClassifierCV(FrozenEstimator(hgb), method="isotonic").fit(X_b, y_b)


def _forest_200(X_fit, y_fit, seed):
    return RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=2).fit(X_fit, y_fit)


def _svc(X_fit, y_fit, seed):
    """RBF SVC with Platt scaling (sklearn's internal 5-fold cross-validation)."""
    if "probability" not in SVC().get_params():  # removed (deprecated in scikit-learn 1.9)
        return CalibratedClassifierCV(SVC(random_state=seed), ensemble=False).fit(X_fit, y_fit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # probability= deprecated in 1.9
        return SVC(probability=True, random_state=seed).fit(X_fit, y_fit)


def _tree(X_fit, y_fit, seed):
    return DecisionTreeClassifier(max_depth=12, random_state=seed).fit(X_fit, y_fit)


@threadpool_limits.wrap(limits=1, user_api="openmp")
def _sigmoid_boosting(X_fit, y_fit, seed):
    """Histogram gradient boosting with sigmoid (Platt) calibration, 3-fold
    ``CalibratedClassifierCV``."""
    hgb = HistGradientBoostingClassifier(max_iter=100, random_state=seed)
    return CalibratedClassifierCV(hgb, method="sigmoid", cv=3).fit(X_fit, y_fit)


FITTERS = {"lr": _logistic, "hgb": _calibrated_boosting, "gnb": _naive_bayes,
           "knn": _neighbors, "mlp": _mlp, "rf200": _forest_200, "svc": _svc, "tree": _tree,
           "hgbsig": _sigmoid_boosting, "knn5": _neighbors_5, "et": _extra_trees,
           "ada": _adaboost, "qda": _qda, "lda": _lda, "sgd": _sgd, "gb": _gradient_boosting,
           "bag": _bagging}


@dataclass
class Problem:
    """Scores and 0/1 losses of the non-training rows, and the monotone map to MAPIE's
    ``P(model right)``, fixed before any calibration data is seen."""

    score: np.ndarray
    loss: np.ndarray
    p_right: np.ndarray
    unit_score: np.ndarray  # the score, or F(s) = 1 - p_right (diamonds: see _diamonds_problem)
    model: object = None  # fitted classifier (per-group section)
    X_rest: np.ndarray = None
    y_rest: np.ndarray = None


def _classifier_problem(model, X_rest, y_rest):
    proba = model.predict_proba(X_rest)
    loss = (model.classes_[proba.argmax(axis=1)] != y_rest).astype(float)
    conf = proba.max(axis=1)
    score = 1.0 - conf
    return Problem(score, loss, conf, score, model, X_rest, y_rest)


@threadpool_limits.wrap(limits=1, user_api="openmp")
def _diamonds_problem(seed, scorer="ridge"):
    """Case 7 (``scorer="ridge"``: a ridge regression of the 0/1 loss) or case 16
    (``"abserr"``: a gradient-boosting regression of the absolute error)."""
    X, price = load_diamonds(return_X_y=True)
    y = np.log(price.to_numpy())
    # shuffled: the file's rows are in blocks sorted by price
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=DIAMONDS_FIT_ROWS,
                                                    shuffle=True, random_state=seed)
    cats = ["cut", "color", "clarity"]
    nums = [c for c in X.columns if c not in cats]

    def gbm():
        prep = make_column_transformer((OrdinalEncoder(), cats), remainder="passthrough")
        return make_pipeline(prep, HistGradientBoostingRegressor(max_iter=100, random_state=seed))

    model = gbm().fit(X_fit, y_fit)
    pred_rest = model.predict(X_rest)
    # The risk score learns from out-of-fold errors (in-sample errors are optimistic).
    oof = cross_val_predict(gbm(), X_fit, y_fit, cv=3)
    tolerance = DIAMONDS_TOLERANCE[scorer]
    loss_rest = (np.abs(pred_rest - y_rest) > tolerance).astype(float)
    if scorer == "ridge":  # a regression of the 0/1 loss: nearly a probability
        loss_fit = (np.abs(oof - y_fit) > tolerance).astype(float)
        risk_model = make_pipeline(
            make_column_transformer((OneHotEncoder(), cats),
                                    (SplineTransformer(n_knots=8), nums + ["pred"])),
            Ridge(alpha=1.0),
        ).fit(X_fit.assign(pred=oof), loss_fit)
    else:  # "abserr": the predicted absolute error, not a probability
        prep = make_column_transformer((OrdinalEncoder(), cats), remainder="passthrough")
        risk_model = make_pipeline(
            prep, HistGradientBoostingRegressor(max_iter=100, random_state=seed),
        ).fit(X_fit.assign(pred=oof), np.abs(oof - y_fit))
    score = risk_model.predict(X_rest.assign(pred=pred_rest))
    # MAPIE's P(right): 1 - the training rows' empirical score distribution (decreasing in s)
    train_scores = np.sort(risk_model.predict(X_fit.assign(pred=oof)))
    p_right = 1.0 - np.searchsorted(train_scores, score, side="right") / train_scores.size
    # the old default's fixed [0, 1] grid: on the score when it is nearly a probability and
    # stays in [0, 1], else on F(s)
    raw = scorer == "ridge" and score.min() >= 0.0 and score.max() <= 1.0
    return Problem(score, loss_rest, p_right, score if raw else 1.0 - p_right)


FRIEDMAN_ROWS, FRIEDMAN_TOLERANCE = 12_000, 0.5


@threadpool_limits.wrap(limits=1, user_api="openmp")
def _friedman_problem(seed):
    """Held-out case 19: ``make_friedman1`` (10 features, no built-in noise) with
    heteroscedastic noise of standard deviation ``0.2 + 1.5 x_6**2`` (``x_6``, a feature the
    target does not otherwise use), a gradient-boosting regressor fitted on half of the rows,
    loss = 1{|error| > 0.5}, and as risk score a gradient-boosting regression of the absolute
    out-of-fold error (any real value); MAPIE sees ``F(s)`` as for the diamonds cases."""
    rng = np.random.default_rng(seed)
    X, y = make_friedman1(n_samples=FRIEDMAN_ROWS, n_features=10, noise=0.0,
                          random_state=seed)
    y = y + rng.normal(size=y.size) * (0.2 + 1.5 * X[:, 5] ** 2)
    X_fit, X_rest, y_fit, y_rest = train_test_split(X, y, train_size=0.5, shuffle=True,
                                                    random_state=seed)

    def gbm():
        return HistGradientBoostingRegressor(max_iter=100, random_state=seed)

    model = gbm().fit(X_fit, y_fit)
    pred_rest = model.predict(X_rest)
    oof = cross_val_predict(gbm(), X_fit, y_fit, cv=3)
    loss_rest = (np.abs(pred_rest - y_rest) > FRIEDMAN_TOLERANCE).astype(float)
    risk_model = gbm().fit(np.column_stack([X_fit, oof]), np.abs(oof - y_fit))
    score = risk_model.predict(np.column_stack([X_rest, pred_rest]))
    train_scores = np.sort(risk_model.predict(np.column_stack([X_fit, oof])))
    p_right = 1.0 - np.searchsorted(train_scores, score, side="right") / train_scores.size
    return Problem(score, loss_rest, p_right, 1.0 - p_right)


class _Data:
    """Models and problems of the requested cases, each model fitted once per data set."""

    def __init__(self, seed):
        self.seed, self._halves, self._problems = seed, {}, {}

    def halves(self, name):
        if name not in self._halves:
            self._halves[name] = _halves(name, self.seed)
        return self._halves[name]

    def problem(self, data, model):
        """The case's :class:`Problem`, or a string saying why it cannot run here."""
        key = (data, model)
        if key not in self._problems:
            if data == "diamonds":
                try:
                    self._problems[key] = _diamonds_problem(self.seed, model)
                except OSError as err:  # the bundled CSV missing from this installation
                    self._problems[key] = f"diamonds data not found ({err})"
            elif data == "friedman":
                self._problems[key] = _friedman_problem(self.seed)
            else:
                X_fit, y_fit, X_rest, y_rest = self.halves(data)
                if model == "rf":
                    fitted = fitted_forest(data, self.seed)[0]  # the same halves (same seed)
                else:
                    fitted = FITTERS[model](X_fit, y_fit, self.seed)
                self._problems[key] = _classifier_problem(fitted, X_rest, y_rest)
        return self._problems[key]


# ------------------------------------------------------------------------------ methods
def _ours(**kw):
    def run(p, cal, test, alpha):
        res = concentration_threshold(p.loss[cal], p.score[cal], alpha, target="sdr",
                                      delta=DELTA, **kw)
        return res.decide(p.score[test])

    return run


def _old_default(p, cal, test, alpha):
    """The default before issue 25, on the score, or on ``F(s)`` where the score leaves
    [0, 1] (its fixed grid on [0, 1] could not cover it)."""
    res = concentration_threshold(p.loss[cal], p.unit_score[cal], alpha, target="sdr",
                                  delta=DELTA, grid=np.linspace(0, 1, 100), procedure="fallback")
    return res.decide(p.unit_score[test])


def _indexed(table):
    """A predict_proba over row indices: MAPIE's controllers see X = row numbers (n, 1)."""
    return lambda X: table[np.asarray(X)[:, 0].astype(int)]


def _learn_and_calibrate(ctrl, fwer, cal, y, **learn):
    """``ctrl.calibrate`` on the calibration rows; for ``split_fixed_sequence`` the order is
    learned first on a random half of them and the controller calibrated on the other half."""
    if fwer == "split_fixed_sequence":
        half = cal.size // 2  # cal is in random order
        ctrl.learn_fixed_sequence_order(cal[:half, None], y[:half], **learn)
        cal, y = cal[half:], y[half:]
    ctrl.calibrate(cal[:, None], y)
    return ctrl


def _mapie(risk_control, fwer, learn):
    def run(p, cal, test, alpha):
        two = np.column_stack([1.0 - p.p_right, p.p_right])  # P(wrong), P(right)
        ctrl = risk_control.BinaryClassificationController(
            predict_function=_indexed(two), risk="precision", target_level=1.0 - alpha,
            confidence_level=1.0 - DELTA, fwer_method=fwer,
        )
        right = 1 - p.loss[cal].astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _learn_and_calibrate(ctrl, fwer, cal, right, **learn)
            if ctrl.best_predict_param is None:
                return np.zeros(test.size, dtype=bool)
            return np.asarray(ctrl.predict(test[:, None])).astype(bool)

    return run


# ------------------------------------------------------------------------------ study
def _splits(m, splits, seed):
    """``splits`` shuffled (calibration, test) halves of ``m`` rows."""
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(m) for _ in range(splits)]
    return [(perm[: m // 2], perm[m // 2:]) for perm in perms]


def _row(label, n_cal, alpha, method, deploy, fail, seconds):
    return (f"| {label} | {n_cal} | {alpha:g} | {method} | {np.mean(deploy):.3f} | "
            f"{np.quantile(deploy, 0.1):.3f} | {np.mean(fail):.2f} | {seconds:.4f} |")


def run_case(problem, splits, alpha, methods):
    """Per method: deployed fractions and test failures over the splits, and the seconds per
    split."""
    out = {}
    for method, run in methods:
        deploy, fail, t0 = [], [], time.perf_counter()
        for cal, test in splits:
            d = run(problem, cal, test, alpha)
            deploy.append(d.mean())
            fail.append(bool(d.any()) and problem.loss[test][d].mean() > alpha)
        seconds = (time.perf_counter() - t0) / len(splits)
        out[method] = (np.array(deploy), np.array(fail), seconds)
    return out


def compare(label, res, quick):
    """Summary line: ours default vs the MAPIE controller with the largest mean deployment;
    returns a failure message when ours is below it by more than Z_BELOW paired s.e."""
    mapie = {m: r for m, r in res.items() if m.startswith("MAPIE")}
    ours = res["ours default"][0]
    if not mapie:
        print(f"- {label}: ours default deploy {ours.mean():.3f}; no MAPIE rows")
        return None
    best = max(mapie, key=lambda m: mapie[m][0].mean())
    diff = ours - mapie[best][0]
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
    below = diff.mean() < 0 and not diff.mean() >= -Z_BELOW * se  # se = 0 and behind: below
    verdict = "BELOW" if below else "OK"
    if below and quick:
        verdict += " (quick run: not checked)"
    print(f"- {label}: ours default deploy {ours.mean():.3f} vs best MAPIE "
          f"{mapie[best][0].mean():.3f} ({best.removeprefix('MAPIE ')}): {verdict} "
          f"(paired difference {diff.mean():+.3f} +- {se:.3f} s.e.)")
    if below and not quick:
        return (f"{label}: ours default {ours.mean():.3f} < {best} {mapie[best][0].mean():.3f} "
                f"by more than {Z_BELOW:g} s.e. ({diff.mean():+.3f} +- {se:.3f})")
    return None


# ------------------------------------------------------------------------------ per-group section
def _class_failures(deployed, pred, wrong, alpha, n_classes):
    """Does some class's test error among the deployed points predicted as it exceed alpha?"""
    n = np.bincount(pred[deployed], minlength=n_classes)
    err = np.bincount(pred[deployed], weights=wrong[deployed], minlength=n_classes)
    return bool(np.any(err > alpha * n))


def _group_methods(risk_control, proba, truth, alpha, learn):
    """(label, run(problem, cal, test) -> deployed mask) of the per-group section; ``proba``
    and ``truth`` (class indices) are the model's on the non-training rows."""
    n_classes = proba.shape[1]

    def ours(groups):
        def run(p, cal, test):
            kw = {} if groups is None else {"groups": groups}
            est = ConcentrationSDR(p.model, alpha=alpha, delta=DELTA, **kw)
            est.fit(p.X_rest[cal], p.y_rest[cal])
            assert est.n_calibration_ == cal.size  # fitted model: every given row calibrates
            return np.asarray(est.decide(p.X_rest[test])).astype(bool)

        return run

    def mapie(fwer):
        def run(p, cal, test):
            ctrl = risk_control.MultiClassificationLTTController(
                predict_function=_indexed(proba),
                risks=risk_control.risks.build_precision_ovr(list(range(n_classes))),
                target_level=[1.0 - alpha] * n_classes, confidence_level=1.0 - DELTA,
                classes=np.arange(n_classes), fwer_method=fwer,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _learn_and_calibrate(ctrl, fwer, cal, truth[cal], **learn)
                if ctrl.best_predict_param is None:
                    return np.zeros(test.size, dtype=bool)
                return ~np.isnan(np.asarray(ctrl.predict(test[:, None]), dtype=float))

        return run

    methods = [("ours groups='predicted_class'", ours("predicted_class")),
               ("ours, no groups (reference)", ours(None))]
    if risk_control is not None:
        methods += [(f"MAPIE multi-class {f}", mapie(f))
                    for f in ("bonferroni_holm", "split_fixed_sequence")]
    return methods


def per_group(data, risk_control, splits_count, seed, learn):
    print(f"\n## Per predicted class (alpha = {GROUP_ALPHA:g}, logistic regression)\n")
    try:
        has_groups = "groups" in ConcentrationSDR(LogisticRegression()).get_params()
    except Exception:  # noqa: BLE001 (any failure means: not available)
        has_groups = False
    if not has_groups:
        print("per-group rows need the groups= parameter (ConcentrationSDR has none here): "
              "section skipped")
        return
    print("deploy = total deployed share of the test half (mean / 10% quantile); P(some class "
          "fails) = share of splits where, for some predicted class, the test error among the "
          "deployed points predicted as that class exceeds alpha (very noisy: few test points "
          "per class).\n")
    print("| data | n_cal | alpha | method | deploy mean | deploy q10 | P(some class fails) "
          "| s/split |")
    print("|---|---|---|---|---|---|---|---|")
    for name in GROUP_DATA:
        p = data.problem(name, "lr")
        proba = p.model.predict_proba(p.X_rest)
        pred, n_classes = proba.argmax(axis=1), proba.shape[1]
        truth = np.searchsorted(p.model.classes_, p.y_rest)  # class indices 0..K-1
        splits = _splits(p.score.size, splits_count, seed)
        for method, run in _group_methods(risk_control, proba, truth, GROUP_ALPHA, learn):
            deploy, fail, t0 = [], [], time.perf_counter()
            for cal, test in splits:
                d = run(p, cal, test)
                deploy.append(d.mean())
                fail.append(_class_failures(d, pred[test], p.loss[test], GROUP_ALPHA, n_classes))
            seconds = (time.perf_counter() - t0) / len(splits)
            print(_row(name, splits[0][0].size, GROUP_ALPHA, method, deploy, fail, seconds),
                  flush=True)


# ------------------------------------------------------------------------------ main
def _selected(spec, quick=False):
    """The cases named in ``spec``; ``"all"``: every case, or in quick mode the tuned ones."""
    if spec in (None, "", "all"):
        return [c for c in CASES if not (quick and c[4])]
    chosen = []
    for item in spec.split(","):
        item = item.strip()
        match = [c for i, c in enumerate(CASES, 1) if item in (str(i), c[0])]
        if not match:
            raise SystemExit(f"unknown case {item!r}; choose among 1-{len(CASES)} or "
                             + ", ".join(c[0] for c in CASES))
        chosen += [c for c in match if c not in chosen]
    return chosen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=100, help="shuffled cal/test splits")
    held_numbers = ", ".join(str(i) for i, c in enumerate(CASES, 1) if c[4])
    parser.add_argument("--quick", action="store_true",
                        help="10 splits, the tuned cases only (the held-out cases "
                             f"{held_numbers} are skipped, to stay under a minute, unless "
                             "--cases names them), a 100-point beta_grid for "
                             "split_fixed_sequence, no failure exit")
    parser.add_argument("--cases", default="all",
                        help=f"comma-separated case numbers (1-{len(CASES)}) or names "
                             f"(default: all; with --quick: all but the held-out ones; "
                             f"{HELD_OUT}: {held_numbers})")
    parser.add_argument("--no-groups", action="store_true", help="skip the per-group section")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    splits_count = min(args.splits, 10) if args.quick else args.splits
    cases = _selected(args.cases, args.quick)
    # split_fixed_sequence's learning step: the loss is binary; MAPIE's default beta_grid has
    # 1000 points (~0.4 s per call here), 100 in quick mode
    learn = {"binary": True}
    if args.quick:
        learn["beta_grid"] = np.logspace(-25, 0, 100)
    methods = [("ours default", _ours()),
               ("ours fixed_sequence", _ours(procedure="fixed_sequence")),
               ("ours old default (fallback, linspace(0, 1, 100))", _old_default)]
    risk_control = optional("mapie.risk_control", "compare", "the MAPIE rows are left out")
    if risk_control is not None:
        methods += [(f"MAPIE {f}", _mapie(risk_control, f, learn)) for f in MAPIE_FWER]
    warnings.simplefilter("ignore", RiskControlWarning)  # "nothing certified" is a result here
    print(f"# PAC selective risk control (SDR), delta = {DELTA}, {splits_count} shuffled "
          "calibration/test splits\n")
    print("deploy = fraction of test points deployed (mean / 10% quantile over splits); "
          "P(fail) = share of splits whose test error among deployed exceeds alpha (a noisy "
          f"estimate of P(population risk among deployed > alpha), which must be <= {DELTA}); "
          "F(s): see the script's docstring (diamonds).\n")
    held = [c[0] for c in cases if c[4]]
    if held:
        print(f"{HELD_OUT}, marked (held out): " + ", ".join(held) + "\n")
    elif args.quick and args.cases in (None, "", "all"):
        print("quick run: the held-out cases are skipped (name them in --cases to run them)\n")
    print("| case | n_cal | alpha | method | deploy mean | deploy q10 | P(fail) | s/split |")
    print("|---|---|---|---|---|---|---|---|")
    data, results, t_start = _Data(args.seed), [], time.perf_counter()
    skipped = []
    for label, name, model, alpha, held_out in cases:
        if held_out:
            label += " (held out)"
        problem = data.problem(name, model)
        if isinstance(problem, str):
            skipped.append(f"{label}: {problem}")
            continue
        splits = _splits(problem.score.size, splits_count, args.seed)
        res = run_case(problem, splits, alpha, methods)
        for method, (deploy, fail, seconds) in res.items():
            if method.startswith("ours old default") and problem.unit_score is not problem.score:
                method += " on F(s)"
            print(_row(label, splits[0][0].size, alpha, method, deploy, fail, seconds),
                  flush=True)
        results.append((label, res))
    if skipped and not results:
        skip("; ".join(skipped))
    for line in skipped:
        print(f"case skipped: {line}")
    print(f"\nours default vs the MAPIE controller with the largest mean deployment (paired "
          f"over the {splits_count} splits; BELOW = behind by more than {Z_BELOW:g} s.e.):")
    wrong = [compare(label, res, args.quick) for label, res in results]
    if not args.no_groups:
        per_group(data, risk_control, splits_count, args.seed, learn)
    print(f"\ntotal {time.perf_counter() - t_start:.1f} s (after imports)")
    fail_if([w for w in wrong if w])


if __name__ == "__main__":
    main()
