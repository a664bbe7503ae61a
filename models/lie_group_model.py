"""Models whose state lives on a product of vector spaces and rotation groups."""
from __future__ import annotations

from typing import Any, Optional

from lie import LieState

from .model import Model


class LieGroupModel(Model):
    """A :class:`Model` whose state is described by a :class:`lie.LieState`.

    The error-state maps come from :meth:`lie_state`: vector parts are
    subtracted/added, each rotation uses the axis-angle error
    ``phi = log(conj(q0) * q)`` and the retraction ``q = q0 * exp(phi)`` (the full
    angle, so attitude weights are 4x those of RobotDynamics.jl's half-angle
    Cayley error).

    What a subclass defines (RobotDynamics.jl's rule for ``LieGroupModel``:
    ``control_dim``, ``LieState`` and either ``dynamics!`` or ``dynamics``):

    - the dynamics: :meth:`~models.Model.continuous_dynamics`, or
      :meth:`~models.Model.dynamics` alone (from which ``continuous_dynamics``
      is derived, see :class:`models.Model`);
    - the state layout: override :meth:`lie_state`, or pass ``lie_state=`` to
      this constructor; ``state_dim`` and ``error_dim`` follow from it;
    - the control size: override :attr:`control_dim` (a property or a class
      attribute), or pass ``control_dim=``.

    Only the dynamics are needed to instantiate the class. A size or error-state
    map asked of a model that declares no layout (or no control size) raises
    ``NotImplementedError`` saying what to define.
    """

    def __init__(self, lie_state: Optional[LieState] = None, control_dim: Optional[int] = None) -> None:
        super().__init__()
        if lie_state is not None and not isinstance(lie_state, LieState):
            raise TypeError(f"lie_state: expected a lie.LieState (e.g. lie.QuatState(n, starts)), got {type(lie_state).__name__}")
        if control_dim is not None and (isinstance(control_dim, bool) or not isinstance(control_dim, int) or control_dim < 0):
            raise ValueError(f"control_dim: expected an int >= 0, got {control_dim!r}")
        self._given_lie_state, self._given_control_dim = lie_state, control_dim

    def lie_state(self) -> LieState:
        """The state's layout ``[x1, q1, x2, ..., xN]`` and rotation parameterization.

        Default: the ``lie_state`` given to the constructor.
        """
        given = getattr(self, "_given_lie_state", None)
        if given is None:
            raise NotImplementedError(f"{type(self).__name__}: no state layout; override lie_state() or pass lie_state= (a lie.LieState) to LieGroupModel.__init__")
        return given

    @property
    def control_dim(self) -> int:
        """Length ``m`` of the control. Default: the ``control_dim`` given to the constructor."""
        given = getattr(self, "_given_control_dim", None)
        if given is None:
            raise NotImplementedError(f"{type(self).__name__}: no control size; define control_dim (a property or class attribute) or pass control_dim= to LieGroupModel.__init__")
        return given

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
