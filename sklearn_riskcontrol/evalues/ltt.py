"""Learn-then-Test p-values and procedures of SCoRE's PAC baselines: re-exported from
:mod:`sklearn_riskcontrol.selective._ltt`, where SCoRE's array layer lives, so that this
public path keeps working."""

from ..selective._ltt import (  # noqa: F401
    hb_pvalues,
    binomial_pvalues,
    hoeffding_pvalues,
    wsr_pvalues,
    rautoeval_pvalues,
    threshold_pvalues,
    fallback,
)

__all__ = [
    "hb_pvalues",
    "binomial_pvalues",
    "hoeffding_pvalues",
    "wsr_pvalues",
    "rautoeval_pvalues",
    "threshold_pvalues",
    "fallback",
]
