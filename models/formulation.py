"""The formulations of a legged robot's dynamics with contact forces: ``"forward"``, ``"inverse"``, ``"contact"``.

:class:`Formulation` carries each one's choices (which variables the control
holds, whether the forces are decision variables, whether the dynamics are a
residual the problem imposes, what the stance mask is to the model), so code
asks it instead of comparing names. It is a ``str`` enum: a member equals its
name (``Formulation.CONTACT == "contact"``) and prints as it; users keep
passing names, converted at the boundary by :meth:`Formulation.parse`.
"""
from __future__ import annotations

from enum import Enum
from typing import Any, Optional, Sequence, Tuple


class Formulation(str, Enum):
    """How the contact forces and accelerations of :class:`models.contact_dynamics.ContactDynamics`
    (and :class:`models.FloatingBaseModel`) enter the problem.

    - ``FORWARD``: forces in the control, accelerations from forward dynamics.
    - ``INVERSE``: forces and accelerations in the control, the equation of motion a residual.
    - ``CONTACT``: torques only; forces and accelerations from the KKT contact dynamics under
      a stance mask (the model's dynamics parameter).
    """

    FORWARD = "forward"
    INVERSE = "inverse"
    CONTACT = "contact"

    __str__ = str.__str__
    __format__ = str.__format__

    @classmethod
    def parse(cls, value: Any, allowed: Optional[Sequence[str]] = None) -> "Formulation":
        """``value`` (a name or a member) as a member of ``allowed`` (names; default all); ``ValueError`` naming them otherwise."""
        names: Tuple[str, ...] = tuple(m.value for m in cls) if allowed is None else tuple(allowed)
        try:
            member = cls(value)
        except (ValueError, TypeError):
            member = None
        if member is None or member.value not in names:
            raise ValueError(f"formulation: expected one of {names}, got {value!r}")
        return member

    @property
    def forces_are_controls(self) -> bool:
        """Whether the contact forces are decision variables (in the control)."""
        return self is not Formulation.CONTACT

    @property
    def acceleration_is_control(self) -> bool:
        """Whether the acceleration is in the control, the equation of motion then a residual the problem imposes
        (the model's ``dynamics_residual``)."""
        return self is Formulation.INVERSE

    @property
    def stance_is_parameter(self) -> bool:
        """Whether the stance mask is a dynamics parameter (the KKT contact dynamics hold the stance feet)."""
        return self is Formulation.CONTACT

    def control_widths(self, nu: int, nf: int, nv: int) -> Tuple[int, int, int]:
        """Widths of the control's torque, force and acceleration blocks for ``nu`` torques, ``nf`` force entries, ``nv`` velocities."""
        return nu, nf if self.forces_are_controls else 0, nv if self.acceleration_is_control else 0

    def check_transcription(self, transcription: str) -> None:
        """Raise ``ValueError`` for multiple shooting with ``INVERSE`` (a held acceleration cannot satisfy
        the residual at both knots) and for collocation with ``CONTACT`` (its stance mask holds over a whole interval)."""
        shooting = transcription.startswith("multiple_shooting")
        if self.acceleration_is_control and shooting:
            raise ValueError("transcription: multiple shooting cannot impose the 'inverse' formulation's residual; use 'trapezoidal', 'hermite_simpson' or formulation='forward'")
        if self.stance_is_parameter and not shooting:
            raise ValueError(f"transcription: the 'contact' formulation holds knot k's stance over the interval that starts there, which {transcription!r} cannot express; use multiple shooting")
