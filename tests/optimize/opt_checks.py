"""Checks shared by the optimisation tests: compiled callbacks against central finite differences."""

from __future__ import annotations

import numpy as np

from exprgraph.optimize import CompiledNLP


def fd_check(nlp: CompiledNLP, x: np.ndarray, lam: np.ndarray, sigma: float) -> None:
    """Gradient, Jacobian and Lagrangian Hessian of the compiled callbacks against central differences."""
    h = 1e-6
    n = len(x)
    fd_grad = np.array([(nlp.objective(x + h * e) - nlp.objective(x - h * e)) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(nlp.gradient(x), fd_grad, rtol=1e-6, atol=1e-6)
    rows, cols = nlp.jacobianstructure()
    jac = np.zeros((nlp.m, n))
    jac[rows, cols] = nlp.jacobian(x)
    fd_jac = np.array([(nlp.constraints(x + h * e) - nlp.constraints(x - h * e)) / (2 * h) for e in np.eye(n)]).T
    np.testing.assert_allclose(jac, fd_jac.reshape(nlp.m, n), rtol=1e-6, atol=1e-6)

    def lagrangian_gradient(z: np.ndarray) -> np.ndarray:
        j = np.zeros((nlp.m, n))
        j[rows, cols] = nlp.jacobian(z)
        return sigma * nlp.gradient(z) + j.T @ lam

    hr, hc = nlp.hessianstructure()
    hess = np.zeros((n, n))
    hess[hr, hc] = nlp.hessian(x, lam, sigma)
    fd_hess = np.array([(lagrangian_gradient(x + h * e) - lagrangian_gradient(x - h * e)) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(hess, np.tril(fd_hess), rtol=1e-5, atol=1e-5)
    assert (hr >= hc).all()
