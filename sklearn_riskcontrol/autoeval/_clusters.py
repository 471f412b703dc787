"""Clustered items for R-Eval / R-AutoEval / R-AutoEval+ (issue 27, part 2).

Items come in clusters (questions of one document, turns of one conversation); clusters, not
items, are the independent draws. The target stays the item-level risk ``R = E[S] / E[M]`` (``S``
a cluster's loss sum, ``M`` its size). With ``M_max`` the largest cluster size (labeled and
unlabeled), fixed by the sizes before any loss is seen, the cluster-level observation

    h'_c = alpha + (S_c - alpha M_c) / M_max   in [0, 1]

has mean ``alpha + (E[S] - alpha E[M]) / M_max``, which exceeds ``alpha`` iff ``R > alpha``. So the
single-risk test at level ``alpha`` on ``h'`` (with the judge's ``g'_c`` and ``u'_k`` built the same
way from the judge's loss sums) is the clustered test; it is today's test when every cluster has
one item.

The interval (plug-in construction) inverts, over ``alpha``, one e-process per side whose
observation depends on ``alpha``: with ``A = S + rho (Ubar - G)`` and ``B = (1 - rho) M + rho
Mbar`` (``Ubar``, ``Mbar``: means of the judge's loss sums and of the sizes over the block of
unlabeled clusters of the round), the upper side's factor is

    1 + lambda_t(alpha) (alpha B_t - A_t) / M_max,   lambda_t(alpha) = min(s_t, kappa_t(alpha)),
    kappa_t(alpha) = c r_t / ((1 + rho_t) (r_t - alpha)),

``r_t`` the largest ratio ``A / B`` any cluster sizes in ``[M_min, M_max]`` allow at ``rho_t``
(``r_t >= 1 + rho_t``, with equality when every cluster has the same size). ``rho_t`` and ``s_t``
come from rounds ``< t`` only and do not depend on ``alpha``. Each factor is nonnegative and
nondecreasing in ``alpha`` (proof in the user guide, :ref:`autoeval-clusters`), so the rejected
levels form an up-set and the bound is a root. With clusters of one size the construction is
today's on the cluster means ``S / M`` and is computed by it.
"""

import numpy as np

from .._validation import check_number, check_risks


def cluster_sums(losses, groups, name, group_name="groups"):
    """``(sums, sizes, ids)`` per cluster, clusters in the order of their first row."""
    losses = check_risks(losses, name)
    groups = np.asarray(groups)
    if groups.shape != losses.shape:
        raise ValueError(f"`{group_name}` must give one cluster id per row of `{name}`: "
                         f"{losses.shape[0]} rows, got shape {groups.shape}.")
    ids, first, codes = np.unique(groups, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    codes = rank[codes.ravel()]
    sums = np.bincount(codes, weights=losses, minlength=ids.size)
    sizes = np.bincount(codes, minlength=ids.size).astype(float)
    return sums, sizes, ids[order]


def cluster_observations(alpha, sums, sizes, max_size):
    """``alpha + (S - alpha M) / M_max``: cluster-level losses in [0, 1] for the test at ``alpha``."""
    return alpha + (sums - alpha * sizes) / max_size


def _one_judge(losses, name):
    """Judge losses of one judge, 1-d (a single column of a 2-d array is accepted)."""
    if losses is None or np.ndim(losses) < 2:
        return losses
    from ._arrays import _judge_losses, _n_judges

    losses = _judge_losses(losses, name)
    if _n_judges(losses) > 1:
        raise ValueError(f"`{name}` has {_n_judges(losses)} judge columns: clustered items "
                         "(groups_labeled) take one judge for now. Pass one judge's losses, or "
                         "drop the groups if the items are independent.")
    return losses


def cluster_tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, groups_labeled,
                   groups_unlabeled, max_group_size=None):
    """Per-cluster sums and sizes: ``dict(S, M, G, Su, Mu, max_size, min_size)`` (``G``, ``Su``,
    ``Mu`` are ``None`` without judge losses / unlabeled rows). The size bounds are the observed
    extremes, or ``max_group_size`` and 1 when a bound is declared (a priori constants)."""
    loss_judge_labeled = _one_judge(loss_judge_labeled, "loss_judge_labeled")
    loss_judge_unlabeled = _one_judge(loss_judge_unlabeled, "loss_judge_unlabeled")
    S, M, ids = cluster_sums(loss_labeled, groups_labeled, "loss_labeled", "groups_labeled")
    G = Mu = Su = None
    if loss_judge_labeled is not None:
        G, _, _ = cluster_sums(loss_judge_labeled, groups_labeled, "loss_judge_labeled",
                               "groups_labeled")
    if loss_judge_unlabeled is not None and np.size(loss_judge_unlabeled):
        if groups_unlabeled is None:
            raise ValueError("`groups_unlabeled` is required with `groups_labeled` and unlabeled "
                             "rows: the unlabeled clusters are the unlabeled draws. Pass the "
                             "cluster id of each unlabeled row.")
        Su, Mu, ids_u = cluster_sums(loss_judge_unlabeled, groups_unlabeled,
                                     "loss_judge_unlabeled", "groups_unlabeled")
        shared = np.intersect1d(ids, ids_u)
        if shared.size:
            raise ValueError(
                f"{shared.size} cluster id(s) (e.g. {shared[0]!r}) have both labeled and "
                "unlabeled rows: a cluster is one draw, wholly labeled or wholly unlabeled. "
                "Label the remaining rows of these clusters, or move all their rows to the "
                "unlabeled set (or drop their unlabeled rows)."
            )
    elif groups_unlabeled is not None and np.size(groups_unlabeled):
        raise ValueError("`groups_unlabeled` was given without unlabeled rows "
                         "(`loss_judge_unlabeled` is None or empty).")
    sizes = M if Mu is None else np.concatenate([M, Mu])
    largest = float(sizes.max())
    if max_group_size is None:
        max_group_size = largest
    else:
        max_group_size = float(check_number(max_group_size, "max_group_size", minimum=1))
        if max_group_size < largest:
            raise ValueError(f"`max_group_size`={max_group_size:g} is smaller than the largest "
                             f"cluster ({int(largest)} rows): pass a bound on every cluster's "
                             "size, or None to use the largest observed one.")
        return dict(S=S, M=M, G=G, Su=Su, Mu=Mu, max_size=max_group_size, min_size=1.0)
    return dict(S=S, M=M, G=G, Su=Su, Mu=Mu, max_size=max_group_size,
                min_size=float(sizes.min()))


def clustered_losses(alpha, loss_labeled, loss_judge_labeled, loss_judge_unlabeled,
                     groups_labeled, groups_unlabeled, max_group_size=None):
    """Cluster-level ``(h', g', u')`` for the test at ``alpha`` (labeled clusters in the order of
    their first row; unlabeled clusters likewise, used in blocks as unlabeled rows are)."""
    t = cluster_tables(loss_labeled, loss_judge_labeled, loss_judge_unlabeled, groups_labeled,
                       groups_unlabeled, max_group_size)
    return _observations_at(alpha, t)


def _observations_at(alpha, t):
    m = t["max_size"]
    h = cluster_observations(alpha, t["S"], t["M"], m)
    g = None if t["G"] is None else cluster_observations(alpha, t["G"], t["M"], m)
    u = None if t["Su"] is None else cluster_observations(alpha, t["Su"], t["Mu"], m)
    return h, g, u


def complement(t):
    """The tables of the losses ``1 - loss`` (item risk ``1 - R``): the lower side."""
    out = dict(t, S=t["M"] - t["S"])
    if t["G"] is not None:
        out["G"] = t["M"] - t["G"]
    if t["Su"] is not None:
        out["Su"] = t["Mu"] - t["Su"]
    return out


def largest_ratio(rho, min_size, max_size):
    """``r(rho) = max A / B`` over cluster sizes ``M, Mbar`` in ``[min_size, max_size]`` with
    ``A <= M + rho Mbar`` and ``B = (1 - rho) M + rho Mbar``: a ratio of functions linear in each
    size, so the maximum is at a corner of the box (``1 + rho`` when the sizes are equal)."""
    rho = np.asarray(rho, dtype=float)
    best = 1.0 + rho
    for m in (min_size, max_size):
        for mb in (min_size, max_size):
            best = np.maximum(best, (m + rho * mb) / ((1.0 - rho) * m + rho * mb))
    return best


def cluster_rounds(t, use_judge, rho, level, plugin_rounds):
    """Per-round ``(A, B, s, rho_t, r_t)`` of the upper side (``A``, ``B`` divided by
    ``M_max``); ``rho_t`` and ``s_t`` by ``plugin_rounds`` on the observations at the
    predictable level ``alpha_t = (1/2 + sum_{j<t} S_j) / (1 + sum_{j<t} M_j)``."""
    S, M, m = t["S"], t["M"], t["max_size"]
    n = S.size
    past = np.zeros((2, n))
    np.cumsum(np.stack([S, M])[:, :-1], axis=1, out=past[:, 1:])
    a_t = (0.5 + past[0]) / (1.0 + past[1])
    h = cluster_observations(a_t, S, M, m)
    if use_judge:
        r = t["Su"].size // n
        Ubar = t["Su"][: n * r].reshape(n, r).mean(axis=1)
        Mbar = t["Mu"][: n * r].reshape(n, r).mean(axis=1)
        d = (Ubar - t["G"] - a_t * (Mbar - M)) / m
    else:
        rho, d, Ubar, Mbar = np.zeros(1), None, t["S"], M  # rho_t = 0: Ubar unused
    _, _, s, rho_t = plugin_rounds(h, d, (-1.0, 1.0), rho, "upper", level, n)
    G = t["G"] if use_judge else S
    A = (S + rho_t * (Ubar - G)) / m
    B = ((1.0 - rho_t) * M + rho_t * Mbar) / m
    return A, B, s, rho_t, largest_ratio(rho_t, t["min_size"], m)


def cluster_log_wealth(a, A, B, s, rho_t, r_t, cap):
    """``log W_t(a)`` of the upper side: ``sum_{j<=t} log(1 + lambda_j(a) (a B_j - A_j))``."""
    kappa = cap * r_t / ((1.0 + rho_t) * np.maximum(r_t - a, 1e-300))
    return np.cumsum(np.log1p(np.minimum(s, kappa) * (a * B - A)))


def clustered_bound(t, use_judge, rho, side, level, tol):
    """One bound (``side`` "upper" or "lower") on the item risk at level ``level`` by the
    clustered plug-in construction (module docstring); the lower bound is one minus the upper
    bound of the complemented losses."""
    from ._arrays import _PLUGIN_CAP, _crossing, _plugin_rounds, _plugin_side

    m = t["max_size"]
    if t["min_size"] == m:  # one size: today's construction on the cluster means S / M
        scaled = [None if t[k] is None else t[k] / m for k in ("S", "G", "Su")]
        h, g, u = scaled if use_judge else (scaled[0], None, None)
        return _plugin_side(h, g, u, rho, side, level, tol)[0]
    if side == "lower":
        return 1.0 - clustered_bound(complement(t), use_judge, rho, "upper", level, tol)
    A, B, s, rho_t, r_t = cluster_rounds(t, use_judge, rho, level, _plugin_rounds)
    log_threshold = np.log(1.0 / level)

    def f(a):
        logw = cluster_log_wealth(a, A, B, s, rho_t, r_t, _PLUGIN_CAP)
        return max(float(logw.max()) - log_threshold, -1e6)

    n = A.size
    ratio = float(t["S"].sum() / t["M"].sum())
    sd = float(np.std(A - ratio * B) / np.mean(B))
    guess = min(1.0, max(0.0, ratio + sd * np.sqrt(2.0 * log_threshold / n)))
    return _crossing(f, guess, max(sd / np.sqrt(n), 1e-3), tol, 0.0, 1.0)
