"""NumericCall and NonzeroCall: buffered numeric evaluation equals CasADi's own call, sparse inputs and outputs included."""
import casadi as ca
import numpy as np
import pytest

from models.numeric_call import NonzeroCall, NumericCall


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


def test_nonzero_call_matches_casadi_on_sparse_inputs_and_outputs():
    """Sparse matrices in and out as their nonzeros (an MX function of a sparse matrix, as the real-time
    iteration's QP data pass from one function to the next); inputs left out are zero."""
    A = ca.MX.sym("A", ca.Sparsity.banded(6, 1))
    v, w = ca.MX.sym("v", 6), ca.MX.sym("w", 2)
    fn = ca.Function("f", [A, v, w], [ca.mtimes(A, v) + ca.sum1(w), 2 * A, ca.triu(ca.mtimes(A.T, A))])
    call = NonzeroCall(fn)
    rng = np.random.default_rng(1)
    for _ in range(5):
        a = ca.DM(fn.sparsity_in(0), rng.normal(size=fn.nnz_in(0)))
        vv = rng.normal(size=6)
        ours = call(np.array(a.nonzeros()), vv)
        ref = fn(a, vv, np.zeros(2))
        for got, want in zip(ours, ref):
            assert np.array_equal(got, np.array(want.nonzeros()))


def test_nonzero_call_of_hpipm_answers_each_qp_as_a_plain_call_does():
    """A fresh buffer per call (``fresh=True``) for CasADi's HPIPM interface, on random QPs of two stages
    (states 2, controls 1, one path row per stage): every answer is the plain call's to the bit. Through one
    buffer, the interface's second answer differed from a plain call's (its memory keeps state)."""
    rng = np.random.default_rng(2)
    x0, u0, x1, u1, x2 = [0, 1], [2], [3, 4], [5], [6, 7]
    rows, cols, fixed = [], [], {}
    for r0, (xa, u, xb) in ((0, (x0, u0, x1)), (3, (x1, u1, x2))):  # gap rows: x_next - A x - B u (-I on x_next in HPIPM's form)
        for i in range(2):
            for c in xa + u:
                rows.append(r0 + i), cols.append(c)
            rows.append(r0 + i), cols.append(xb[i])
            fixed[(r0 + i, xb[i])] = -1.0
    for r, cs in ((2, x0 + u0), (5, x1 + u1), (6, x2)):  # path rows
        rows += [r] * len(cs)
        cols += cs
    Asp = ca.Sparsity.triplet(7, 8, rows, cols)
    H = ca.DM(ca.Sparsity.diag(8), rng.uniform(0.5, 2.0, 8))
    qp = ca.conic("qp", "hpipm", {"h": H.sparsity(), "a": Asp}, {"N": 2, "nx": [2, 2, 2], "nu": [1, 1, 0], "ng": [1, 1, 1], "error_on_fail": False})
    call = NonzeroCall(qp, fresh=True)
    r_nz, c_nz = Asp.get_triplet()
    for _ in range(4):
        a = np.array([fixed.get((r, c), rng.normal()) for r, c in zip(r_nz, c_nz)])
        g = rng.normal(size=8)
        lba = np.r_[0.0, 0.0, -1.0, 0.0, 0.0, -1.0, -1.0] + rng.normal(size=7) * np.r_[1, 1, 0, 1, 1, 0, 0]
        uba = lba + np.r_[0, 0, 2, 0, 0, 2, 2]
        lbx, ubx = -3.0 * np.ones(8), 3.0 * np.ones(8)
        plain = qp(h=H, g=g, a=ca.DM(Asp, a), lba=lba, uba=uba, lbx=lbx, ubx=ubx)
        assert qp.stats()["success"]
        ours = dict(zip(qp.name_out(), call(np.array(H.nonzeros()), g, a, lba, uba, lbx, ubx)))
        assert call.stats()["success"] and np.array_equal(ours["x"], np.array(plain["x"]).ravel())
