"""The plug-in confidence intervals of R-AutoEval+ written from their definition, one round at a
time (user guide, "Confidence intervals").

Shared by ``autoeval/test_confidence_intervals.py`` (the vectorised e-process and the returned
bounds against this loop) and ``benchmarks/autoeval_speed.py`` (the same loop, timed).
"""

import numpy as np

CAP = 0.75  # the documented cap of the plug-in bets


# ------------------------------------------------------------------- brute-force definition
def brute_rounds(h, d, grid, side, level):
    """Reliance factors and bet sizes of the plug-in rule, one round at a time."""
    n, L = h.size, np.log(1 / level)
    rhos, sizes = [], []
    for t in range(n):
        if t >= 64 and t % (t // 64):  # between checkpoints: keep rho, update its variance
            x = h[:t] + rhos[-1] * d[:t]
            sig2 = ((1 + rhos[-1] ** 2) / 4 + float(np.sum((x - x.mean()) ** 2))) / (t + 1)
            rhos.append(rhos[-1])
            sizes.append(np.sqrt(2 * L / (n * sig2)))
            continue
        best = None
        for rho in grid:
            x = h[:t] + rho * d[:t]
            ss = float(np.sum((x - x.mean()) ** 2)) if t else 0.0
            sig2 = ((1 + rho**2) / 4 + ss) / (t + 1)
            rhat = (0.5 + h[:t].sum()) / (t + 1)
            span = 1 + rho - rhat if side == "upper" else rhat + rho
            lam = min(np.sqrt(2 * L / (n * sig2)), CAP / span)
            width = L / (n * lam) + lam * sig2 / 2
            if best is None or width < best[0]:
                best = (width, rho, sig2)
        rhos.append(best[1])
        sizes.append(np.sqrt(2 * L / (n * best[2])))
    return np.array(rhos), np.array(sizes)


def brute_rejects(h, d, grid, side, level, a):
    """Does the plug-in e-process of ``side`` reach 1/level at ``alpha = a``?"""
    rhos, sizes = brute_rounds(h, d, grid, side, level)
    logw, best = 0.0, -np.inf
    for t in range(h.size):  # a cap 0.75 / 0 = inf at the very end of [0, 1] is legitimate
        x = h[t] + rhos[t] * d[t]
        if side == "upper":  # H0: R >= a; factor 1 + lam (a - x) >= 1 - CAP for x <= 1 + rho
            lam = min(sizes[t], CAP / max(1 + rhos[t] - a, 1e-300))
            logw += np.log(1 + lam * (a - x))
        else:  # H0: R <= a; factor 1 + lam (x - a) >= 1 - CAP for x >= -rho
            lam = min(sizes[t], CAP / max(a + rhos[t], 1e-300))
            logw += np.log(1 + lam * (x - a))
        best = max(best, logw)
    return best >= np.log(1 / level)
