"""Gates: what a suite promises and whether a run keeps it.

``floors`` declares gates (a :class:`Floor` or a :class:`BaselineGate`, each with its
:class:`GateKind`), ``verdicts`` judges them (:func:`evaluate`, one entry point for every
kind), ``regression`` is the paired comparison with a baseline, ``baseline`` and
``fingerprint`` are the committed baseline file and what it was made of, ``stages`` the
per-stage comparison the reports show.
"""

from .floors import BaselineGate, Floor, GateKind
from .verdicts import GateOutcome, evaluate

__all__ = ["BaselineGate", "Floor", "GateKind", "GateOutcome", "evaluate"]
