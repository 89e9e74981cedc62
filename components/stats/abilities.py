"""What a paired test can do, declared with it (registry "statistical test", issue 51).

A paired test (ablate.components.stats.paired_tests) is registered with its abilities as
data on its entry, and every place that treats tests differently reads them, never the
test's name, so a new test takes the road it declares:

- `inverts`: which interval its p-values invert into: "t" (the cluster-robust t interval
  at the test's level, `t-inversion`), "signflip" (the sign-flip inversion interval,
  whose decision at 0 is this test's own: it excludes 0 exactly when the comparison is
  significant), or None (not invertible: `stats.ci_method: inversion` gives the sign-flip
  inversion interval, with the sign-flip's own decision at 0);
- `smallest_p`: the smallest p it can give with G clusters (a SmallestP), or None when it
  has no floor: where that floor is above a comparison's threshold there is no MDE and
  the report says the comparison cannot be decided;
- `self_test_p`: how the self-test (ablate.components.stats.self_test) computes its p
  on each null: "signflip-mc" (the sign-flip Monte Carlo p: its work, clusters x nulls x
  flips, caps the number of nulls), "cr2" (the cluster-robust t, CR2: it is then the
  self-test's t family itself, run once) or "own" (the test itself);
- `power`: "own" when `ablate power`'s t-test plan is its own power, "t" when it is
  planned with the t-test's power (and `ablate power` says so);
- `assumption`: the report header's sentence on what its p (and interval) assume;
- `symmetric`: whether its p assumes symmetric cluster differences (the worth
  section's caveat on skewed document effects);
- `also_called`: the name reports give it beside its registry name ("sign-flip"), or "";
- `wilcoxon_column`: whether the stats table's `p_wilcoxon` column holds the Wilcoxon
  signed-rank p of each comparison (else it is null).

Every registered test declares every ability (a RegistrationError names what is missing
or not understood); tests/contract/test_conformance.py checks each built-in's
declaration against what it does.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

import numpy as np

from ablate.components.contract.registry import Declaration, RegistrationError

INVERTS = ("t", "signflip", None)
SELF_TEST_P = ("signflip-mc", "cr2", "own")
POWER = ("own", "t")


@dataclass(frozen=True)
class SmallestP:
    """The smallest p a test can give with G clusters: `of(G)` (arrays of G too) and
    `formula`, how the report writes it, with {g} for G."""
    formula: str
    of: Callable[[Any], Any]


def _signflip_floor(g: Any) -> Any:
    return 2.0 / 2.0 ** np.asarray(g, dtype=np.float64)


# the two-sided sign-flip test: its most extreme pattern is 2 of 2^G
SIGNFLIP_SMALLEST_P = SmallestP("2/2^{g}", _signflip_floor)

SIGNFLIP_ASSUMPTION = ("p and the interval assume each cluster's difference is symmetric about "
                       "the true shift (sign-flip); skewed cluster effects can raise the error "
                       "rate above alpha (docs/statistics.md)")


@dataclass(frozen=True)
class Abilities:
    """A paired test's declared abilities (the module docstring)."""
    inverts: str | None
    smallest_p: SmallestP | None
    self_test_p: str
    power: str
    assumption: str
    symmetric: bool
    also_called: str
    wilcoxon_column: bool

    @property
    def inversion(self) -> str:
        """The interval `stats.ci_method: inversion` gives with this test."""
        return f"{self.inverts or 'signflip'}-inversion"

    def interval_inverts_test(self, ci_method: str) -> bool:
        """Whether the interval of `ci_method` inverts this test (its coverage is then
        1 - the test's type-I error)."""
        return ((ci_method == "inversion" and self.inverts is not None)
                or (ci_method == "t" and self.inverts == "t"))


ABILITIES = tuple(f.name for f in fields(Abilities))

_ALLOWED: dict[str, Callable[[Any], bool]] = {
    "inverts": lambda v: v in INVERTS,
    "smallest_p": lambda v: v is None or isinstance(v, SmallestP),
    "self_test_p": lambda v: v in SELF_TEST_P,
    "power": lambda v: v in POWER,
    "assumption": lambda v: isinstance(v, str) and bool(v.strip()),
    "symmetric": lambda v: isinstance(v, bool),
    "also_called": lambda v: isinstance(v, str),
    "wilcoxon_column": lambda v: isinstance(v, bool),
}
_EXPECTED = {"inverts": f"one of {INVERTS}", "smallest_p": "a SmallestP or None",
             "self_test_p": f"one of {SELF_TEST_P}", "power": f"one of {POWER}",
             "assumption": "a sentence", "symmetric": "True or False",
             "also_called": "a string", "wilcoxon_column": "True or False"}


def check_abilities(decl: Declaration) -> None:
    """RegistrationError unless `decl` declares every ability, each with a value it may
    take, and nothing else."""
    where = f"{decl.kind} '{decl.name}'"
    missing = [a for a in ABILITIES if a not in decl.info]
    if missing:
        raise RegistrationError(f"{where} does not declare {', '.join(missing)} "
                                "(its abilities: ablate.components.stats.abilities)")
    unknown = sorted(set(decl.info) - set(ABILITIES))
    if unknown:
        raise RegistrationError(f"{where} declares {', '.join(unknown)}, which no paired test "
                                f"has (its abilities: {', '.join(ABILITIES)})")
    for a in ABILITIES:
        if not _ALLOWED[a](decl.info[a]):
            raise RegistrationError(f"{where} declares {a}={decl.info[a]!r}: expected "
                                    f"{_EXPECTED[a]}")


def abilities_of(decl: Declaration) -> Abilities:
    """The abilities a (checked) declaration holds."""
    return Abilities(**{a: decl.info[a] for a in ABILITIES})
