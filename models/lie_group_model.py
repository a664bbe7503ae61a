"""Models whose state lives on a product of vector spaces and rotation groups."""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

from lie import LieState

from .model import Model


class LieGroupModel(Model):
    """A :class:`Model` whose state is described by a :class:`lie.LieState`.

    A subclass declares :meth:`lie_state`; the error-state maps come from it:
    vector parts are subtracted/added, each rotation uses the axis-angle error
    ``phi = log(conj(q0) * q)`` and the retraction ``q = q0 * exp(phi)`` (the full
    angle, so attitude weights are 4x those of RobotDynamics.jl's half-angle
    Cayley error).
    """

    @abstractmethod
    def lie_state(self) -> LieState:
        """The state's layout ``[x1, q1, x2, ..., xN]`` and rotation parameterization."""

    @property
    def state_dim(self) -> int:
        return len(self.lie_state())

    @property
    def error_dim(self) -> int:
        return self.lie_state().error_size

    def state_error(self, x: Any, x0: Any) -> Any:
        return self.lie_state().state_error(x, x0)

    def apply_dx(self, x0: Any, dx: Any) -> Any:
        return self.lie_state().apply_dx(x0, dx)

    def error_jacobian(self, x: Any) -> Any:
        return self.lie_state().error_jacobian(x)

    def error_jacobian_T(self, x: Any) -> Any:
        return self.lie_state().error_jacobian_T(x)
