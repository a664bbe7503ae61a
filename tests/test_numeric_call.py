"""NumericCall: buffered numeric evaluation equals CasADi's own call, sparse outputs included."""
import casadi as ca
import numpy as np
import pytest

from models.numeric_call import NumericCall


def test_numeric_call_matches_casadi_with_sparse_and_matrix_outputs():
    x, y = ca.SX.sym("x", 3), ca.SX.sym("y", 2, 2)
    sparse = ca.diag(x)  # 3x3 with 3 structural nonzeros
    fn = ca.Function("f", [x, y], [ca.sin(x) * ca.trace(y), sparse, y @ y.T, ca.jacobian(ca.sin(x), x)])
    call = NumericCall(fn)
    rng = np.random.default_rng(0)
    for _ in range(5):
        xv, yv = rng.normal(size=3), rng.normal(size=(2, 2))
        ours = call(xv, yv)
        ref = [np.asarray(o.full()) for o in fn(xv, yv)]
        for a, b in zip(ours, ref):
            assert a.shape == b.shape and np.array_equal(a, b)


def test_numeric_call_refuses_sparse_inputs():
    x = ca.SX.sym("x", ca.Sparsity.diag(3))
    with pytest.raises(ValueError, match="sparse"):
        NumericCall(ca.Function("g", [x], [ca.sum1(x)]))
