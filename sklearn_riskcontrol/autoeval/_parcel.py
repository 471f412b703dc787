"""A candidate's fitted tester on its way back from a parallel task, in fewer bytes.

:class:`RiskControlledModelSelector` runs the candidates' tests in worker processes, and each
returns its fitted tester: about 1.3 MB at 20,000 rows. Of that, the calling process already
holds the candidate and the template's fitted auto-evaluator; the row indices are the same for
every candidate; and 0-1 losses fit in one byte each (the test's result pickles itself without
the mixture weights, see ``RAutoEvalResult.__reduce__``). Sending it all back cost the Dask run
much of its speed-up (CHANGELOG.md). A :class:`TesterParcel` is pickled without those
redundancies, and the caller restores the very same tester with :meth:`TesterParcel.unpack`.
In-process (sequential or threaded) runs never pickle it and get the tester untouched.
"""

import numpy as np

from .._bytes import same_bytes

__all__ = ["TesterParcel"]


class TesterParcel:
    """``fitted``, a tester fitted on ``candidate`` from a template that held
    ``autoevaluator``, as a parallel task returns it.

    Pickled, it leaves out the attributes that are ``candidate`` or ``autoevaluator``
    themselves, sends an array attribute equal to the previous parcel's once (``sent``: a dict
    shared by the parcels one worker sends, holding the last array sent under each name), and 0-1
    float arrays as bytes.
    """

    __slots__ = ("_fitted", "_held", "_sent", "_packed")

    def __init__(self, fitted, candidate, autoevaluator, sent):
        self._fitted = fitted
        self._held = {"candidate": candidate, "autoevaluator": autoevaluator}
        self._sent = sent
        self._packed = None

    def __reduce__(self):
        state = self._fitted.__getstate__()
        if not isinstance(state, dict):  # not an ordinary object: send it whole
            return _from_packed, (None, self._fitted, None, None)
        state = dict(state)
        names = {id(obj): name for name, obj in self._held.items() if obj is not None}
        held = {key: names[id(value)] for key, value in state.items() if id(value) in names}
        arrays = {key: _pack(key, value, self._sent) for key, value in state.items()
                  if type(value) is np.ndarray and value.dtype.kind in "biuf"
                  and key not in held}
        for key in (*held, *arrays):
            del state[key]
        return _from_packed, (type(self._fitted), state, held, arrays)

    def unpack(self, candidate, autoevaluator):
        """The fitted tester, with the caller's own ``candidate`` and ``autoevaluator`` back in
        the attributes that held them."""
        if self._fitted is None:
            cls, state, held, arrays = self._packed
            objects = {"candidate": candidate, "autoevaluator": autoevaluator}
            state.update({key: objects[name] for key, name in held.items()})
            # astype copies: testers never share an array, as when fitted in this process
            state.update({key: data.astype(dtype) for key, (data, dtype) in arrays.items()})
            fitted = cls.__new__(cls)
            if hasattr(fitted, "__setstate__"):
                fitted.__setstate__(state)
            else:
                vars(fitted).update(state)
            self._fitted, self._packed = fitted, None
        return self._fitted


def _pack(key, value, sent):
    """``(data, dtype)`` with ``data.astype(dtype)`` equal to ``value`` bit for bit: 0-1 floats
    as bytes, and the array last sent under ``key`` (one pickle sends it once) when equal."""
    data = value
    if value.dtype == np.float64:
        with np.errstate(invalid="ignore"):  # NaN, inf or large values: not 0-1, kept
            small = value.astype(np.uint8)
        if same_bytes(small.astype(np.float64), value):
            data = small
    last = sent.get(key)
    if last is not None and same_bytes(last, data):
        return last, value.dtype
    sent[key] = data
    return data, value.dtype


def _from_packed(cls, state, held, arrays):
    parcel = TesterParcel.__new__(TesterParcel)
    parcel._held = parcel._sent = None
    if cls is None:  # sent whole
        parcel._fitted, parcel._packed = state, None
    else:
        parcel._fitted, parcel._packed = None, (cls, state, held, arrays)
    return parcel
