"""A fitted object on its way back from a parallel task, in fewer bytes.

A task in a worker process returns what it fitted, e.g. each candidate's fitted tester in
:class:`~sklearn_riskcontrol.autoeval.RiskControlledModelSelector`: about 1.3 MB at 20,000 rows. Of that,
the calling process already holds some objects the fitted one refers to (there, the candidate
and the template's fitted auto-evaluator); the tasks of a worker return equal arrays (the row
indices); and 0-1 floats fit in one byte each. Sending it all back cost the Dask run much of
its speed-up (CHANGELOG.md). A :class:`Parcel` is pickled without those redundancies, and the
caller restores the very same object with :meth:`Parcel.unpack`. In-process (sequential or
threaded) runs never pickle it and get the object untouched.
"""

import numpy as np

from ._bytes import same_bytes

__all__ = ["Parcel"]


class Parcel:
    """``fitted``, an object a parallel task returns, knowing the objects the caller holds.

    Pickled, it leaves out the attributes that are one of the ``held`` objects themselves,
    sends an array attribute equal to the previous parcel's once (``sent``: a dict shared by
    the parcels one worker sends, holding the last array sent under each name), and 0-1 float
    arrays as bytes. An object whose state is not a dict is sent whole.

    Parameters
    ----------
    fitted : object
        What the task returns.
    sent : dict
        Shared by the parcels one task (or worker) sends; starts empty.
    **held : object or None
        The objects the caller holds too, by name; :meth:`unpack` takes the caller's ones
        under the same names.
    """

    __slots__ = ("_fitted", "_held", "_sent", "_packed")

    def __init__(self, fitted, sent, /, **held):
        self._fitted = fitted
        self._held = held
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

    def unpack(self, /, **held):
        """The fitted object, with the caller's own ``held`` objects (by the names given when
        packing) back in the attributes that held them."""
        if self._fitted is None:
            cls, state, names, arrays = self._packed
            state.update({key: held[name] for key, name in names.items()})
            # astype copies: unpacked objects never share an array, as when fitted in this process
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
    parcel = Parcel.__new__(Parcel)
    parcel._held = parcel._sent = None
    if cls is None:  # sent whole
        parcel._fitted, parcel._packed = state, None
    else:
        parcel._fitted, parcel._packed = None, (cls, state, held, arrays)
    return parcel
