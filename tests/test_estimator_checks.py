"""scikit-learn's estimator checks over every public estimator (unfitted configurations)."""

from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_riskcontrol import (
    ConcentrationMDR,
    ConcentrationSDR,
    SCoREMDR,
    SCoRESDR,
    SemiBanditPredictionSet,
)

@parametrize_with_checks(
    [
        SCoREMDR(LogisticRegression(), random_state=0),
        SCoRESDR(LogisticRegression(), random_state=0),
        SCoREMDR(LinearRegression(), risk="squared", risk_score=LinearRegression(), random_state=0),
        ConcentrationMDR(LogisticRegression(), grid=[0.0, 0.5, 1.0], random_state=0),
        ConcentrationSDR(LogisticRegression(), bound="rademacher", random_state=0),
        SemiBanditPredictionSet(LogisticRegression(), random_state=0),
    ],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
