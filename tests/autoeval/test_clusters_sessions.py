"""Clustered items (issue 27, part 2) in the sessions: whole clusters per batch."""

import numpy as np
import pytest

from sklearn_riskcontrol.autoeval import ComparisonSession, LabelingSession, rautoeval_test

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_riskcontrol.RiskControlWarning")


def _documents(rng, n_docs, start=0, flip=0.1):
    sizes = rng.integers(3, 11, n_docs)
    p = rng.beta(0.5, 4.0, n_docs)
    ids = np.repeat(np.arange(start, start + n_docs), sizes)
    L = (rng.random(ids.size) < p[ids - start]).astype(float)
    return L, np.where(rng.random(L.size) < flip, 1 - L, L), ids


def test_labeling_session_is_the_clustered_batch_test():
    rng = np.random.default_rng(0)
    L, J, g = _documents(rng, 40)
    _, Ju, gu = _documents(rng, 400, start=1000)
    s = LabelingSession(Ju, alpha=0.3, delta=0.1, max_labels=40, groups_unlabeled=gu,
                        max_group_size=10)
    assert s.block_size == 10
    cut = np.flatnonzero(np.diff(g))[[9, 24]] + 1  # batches of 10, 15 and 15 whole clusters
    for rows in np.split(np.arange(L.size), cut):
        status = s.add(L[rows], J[rows], groups=g[rows])
    assert status.n_labels == 40
    ref = rautoeval_test(L, J, Ju, alpha=0.3, delta=0.1, betting="up", groups_labeled=g,
                         groups_unlabeled=gu, max_group_size=10)
    np.testing.assert_allclose(s.result().log_eprocess, ref.log_eprocess, rtol=1e-12)


def test_a_cluster_must_arrive_whole():
    rng = np.random.default_rng(1)
    L, J, g = _documents(rng, 5)
    s = LabelingSession(None, alpha=0.3, delta=0.1, method="eval", max_labels=10,
                        max_group_size=10)
    first = g == 0
    s.add(L[first][:2], groups=g[first][:2])
    with pytest.raises(ValueError, match="complete in one `add` call"):
        s.add(L[first][2:], groups=g[first][2:])
    assert s.add(L[first][:2], groups=g[first][:2]).n_labels == 1  # a re-send is skipped
    with pytest.raises(ValueError, match="must carry `groups=`"):
        s.add(L)
    with pytest.raises(ValueError, match="more than max_group_size"):
        s.add(np.zeros(11), groups=np.full(11, 99))
    with pytest.raises(ValueError, match="`groups_unlabeled`"):
        LabelingSession(J, alpha=0.3, delta=0.1, max_group_size=10)
    with pytest.raises(ValueError, match="needs a clustered session"):
        LabelingSession(None, alpha=0.3, delta=0.1, method="eval", max_labels=5).add(
            L, groups=g)


def test_clustered_session_resumes_from_its_store(tmp_path):
    rng = np.random.default_rng(2)
    L, J, g = _documents(rng, 20)
    _, Ju, gu = _documents(rng, 200, start=1000)
    kw = dict(alpha=0.3, delta=0.1, max_labels=20, groups_unlabeled=gu, max_group_size=10,
              store=tmp_path / "s.sqlite")
    half = g < 10
    with LabelingSession(Ju, **kw) as s:
        s.add(L[half], J[half], groups=g[half])
    with LabelingSession(Ju, **kw) as s:
        assert s.n_labels == 10
        s.add(L[~half], J[~half], groups=g[~half])
        resumed = s.result().log_eprocess
    one = LabelingSession(Ju, **{**kw, "store": None})
    one.add(L, J, groups=g)
    np.testing.assert_allclose(resumed, one.result().log_eprocess, rtol=1e-12)


def test_comparison_session_clusters_the_paired_losses():
    rng = np.random.default_rng(3)
    L, J, g = _documents(rng, 40)
    _, Ju, gu = _documents(rng, 400, start=1000)
    LA = np.where(rng.random(L.size) < 0.5, 0.0, L)
    h, j = np.stack([LA, L], 1), np.stack([np.where(J != L, 1 - LA, LA), J], 1)
    ju = np.stack([Ju * (rng.random(Ju.size) < 0.5), Ju], 1)
    s = ComparisonSession(ju, delta=0.1, margin=0.02, max_labels=40, groups_unlabeled=gu,
                          max_group_size=10)
    s.add(h, j, groups=g)
    paired = [(t[:, 0] - t[:, 1] + 1) / 2 for t in (h, j, ju)]
    for track, flip in zip(s._tracks, (False, True)):
        x = [1 - p if flip else p for p in paired]
        ref = rautoeval_test(*x, alpha=0.49, delta=0.05, betting="up", groups_labeled=g,
                             groups_unlabeled=gu, max_group_size=10)
        np.testing.assert_allclose(track.result().log_eprocess, ref.log_eprocess, rtol=1e-10)


def test_selection_session_runs_each_candidate_on_its_clusters():
    from sklearn_riskcontrol.autoeval import SelectionSession

    rng = np.random.default_rng(4)
    L, J, g = _documents(rng, 40)
    _, Ju, gu = _documents(rng, 400, start=1000)
    H, Gj, U = (np.stack([x, 0.5 * x]) for x in (L, J, Ju))
    s = SelectionSession(U, alpha=0.3, delta=0.1, procedure="bonferroni", max_labels=40,
                         groups_unlabeled=gu, max_group_size=10)
    s.add(H, Gj, groups=g)
    for k in range(2):
        ref = rautoeval_test(H[k], Gj[k], U[k], alpha=0.3, delta=0.05, betting="up",
                             groups_labeled=g, groups_unlabeled=gu, max_group_size=10)
        np.testing.assert_allclose(s._tracks[k].result().log_eprocess, ref.log_eprocess,
                                   rtol=1e-12)
